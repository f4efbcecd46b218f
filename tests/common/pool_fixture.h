/* SPDX-License-Identifier: MIT */
/**
 * \file pool_fixture.h
 * \brief A fake registrar for the unit tests of rex_pool: no device, no
 *        pinning; it records what the pool asked for and can be told to fail.
 *
 *     struct fake_reg fake;
 *     fake_reg_init(&fake);
 *     struct rex_pool_attr attr = {.buf_size = 100, .count = 4,
 *                                  .registrar = &fake.registrar};
 *     struct rex_pool *pool = rex_pool_create(NULL, &attr);
 *     ... fake.regs == 1, fake.last_access == attr.access ...
 */
#ifndef REX_POOL_FIXTURE_H
#define REX_POOL_FIXTURE_H

#include <errno.h>
#include <stdlib.h>

#include "rex_pool.h"

/** The keys the fake registration hands out. */
#define FAKE_LKEY 0x00c0ffeeu
#define FAKE_RKEY 0x0badf00du

struct fake_reg {
	struct rex_pool_registrar registrar; /**< give &registrar to the pool */
	int regs, deregs;                    /**< calls so far */
	void *last_addr;                     /**< what the last reg was asked */
	size_t last_len;
	int last_access;
	int reg_errno;   /**< nonzero: reg fails with this errno */
	int dereg_fails; /**< this many deregs fail with EIO before one succeeds */
};

static inline struct ibv_mr *fake_reg_mr(void *ctx, struct ibv_pd *pd, void *addr, size_t len,
                                         int access)
{
	struct fake_reg *f = ctx;
	struct ibv_mr *mr;

	f->regs++;
	f->last_addr = addr;
	f->last_len = len;
	f->last_access = access;
	if (f->reg_errno) {
		errno = f->reg_errno;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		abort();
	mr->pd = pd;
	mr->addr = addr;
	mr->length = len;
	mr->lkey = FAKE_LKEY;
	mr->rkey = FAKE_RKEY;
	return mr;
}

static inline int fake_dereg_mr(void *ctx, struct ibv_mr *mr)
{
	struct fake_reg *f = ctx;

	f->deregs++;
	if (f->dereg_fails > 0) {
		f->dereg_fails--;
		return EIO;
	}
	free(mr);
	return 0;
}

/** Point the registrar at \p f itself. */
static inline void fake_reg_init(struct fake_reg *f)
{
	*f = (struct fake_reg){0};
	f->registrar.reg = fake_reg_mr;
	f->registrar.dereg = fake_dereg_mr;
	f->registrar.ctx = f;
}

#endif /* REX_POOL_FIXTURE_H */
