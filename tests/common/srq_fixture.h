/* SPDX-License-Identifier: MIT */
/**
 * \file srq_fixture.h
 * \brief A fake shared receive queue for the unit tests of rex_srq: the
 *        test defines ibv_create_srq(), ibv_modify_srq() and
 *        ibv_destroy_srq() (the linker takes them before libibverbs'), and
 *        a fake context's post_srq_recv keeps the receives in a FIFO, as a
 *        device does; fake_srq_consume() plays a message that takes the
 *        head and raises the limit event as rdma_rxe does (fewer left than
 *        an armed limit: fire once, disarm).
 *
 * Include it in one test file only: it defines the verbs functions.
 */
#ifndef REX_SRQ_FIXTURE_H
#define REX_SRQ_FIXTURE_H

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pool_fixture.h"
#include "rex_srq.h"

#define FAKE_SRQ_MAX 1024

struct fake_srq {
	struct ibv_context ctx;
	struct ibv_srq srq;
	bool live;
	uint64_t fifo[FAKE_SRQ_MAX]; /* wr_ids posted, head first */
	uint32_t head, count;
	uint32_t max_wr;
	uint32_t limit; /* armed limit; 0: disarmed */
	unsigned creates, destroys, modifies, posts;
	int create_errno;   /* nonzero: ibv_create_srq() fails with it */
	int destroy_ret;    /* nonzero: ibv_destroy_srq() returns it (EBUSY: a QP uses it) */
	int post_fail_at;   /* > 0: the post of the n-th wr of the next chain fails (ENOMEM) */
	unsigned events;    /* limit events raised */
	bool event_pending; /* one raised and not yet handed to the helper */
	uint32_t last_sge_len;
};

static struct fake_srq fake_srq;

static int fake_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	int n = 0;

	(void)srq;
	fake_srq.posts++;
	for (; wr; wr = wr->next, n++) {
		if (fake_srq.post_fail_at && n + 1 == fake_srq.post_fail_at) {
			fake_srq.post_fail_at = 0;
			*bad = wr;
			return ENOMEM;
		}
		if (fake_srq.count == fake_srq.max_wr || wr->num_sge != 1) {
			*bad = wr;
			return ENOMEM;
		}
		fake_srq.last_sge_len = wr->sg_list[0].length;
		fake_srq.fifo[(fake_srq.head + fake_srq.count++) % FAKE_SRQ_MAX] = wr->wr_id;
	}
	return 0;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	fake_srq.creates++;
	if (fake_srq.create_errno) {
		errno = fake_srq.create_errno;
		return NULL;
	}
	if (fake_srq.live || attr->attr.max_wr > FAKE_SRQ_MAX || attr->attr.max_sge < 1) {
		errno = EINVAL;
		return NULL;
	}
	fake_srq.ctx.ops.post_srq_recv = fake_post_srq_recv;
	fake_srq.srq = (struct ibv_srq){.context = &fake_srq.ctx, .pd = pd};
	fake_srq.max_wr = attr->attr.max_wr;
	fake_srq.live = true;
	return &fake_srq.srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	(void)srq;
	fake_srq.modifies++;
	if (mask != IBV_SRQ_LIMIT || attr->srq_limit > fake_srq.max_wr)
		return EINVAL;
	fake_srq.limit = attr->srq_limit;
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	(void)srq;
	if (fake_srq.destroy_ret)
		return fake_srq.destroy_ret;
	fake_srq.destroys++;
	fake_srq.live = false;
	fake_srq.count = 0;
	return 0;
}

/** A message takes the head receive: its completion, with \p len bytes. */
static inline struct ibv_wc fake_srq_consume(uint32_t len)
{
	struct ibv_wc wc = {.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .byte_len = len};

	if (fake_srq.count == 0) {
		wc.status = IBV_WC_GENERAL_ERR; /* the test asked for RNR: never */
		return wc;
	}
	wc.wr_id = fake_srq.fifo[fake_srq.head];
	fake_srq.head = (fake_srq.head + 1) % FAKE_SRQ_MAX;
	fake_srq.count--;
	if (fake_srq.limit && fake_srq.count < fake_srq.limit) {
		fake_srq.limit = 0;
		fake_srq.events++;
		fake_srq.event_pending = true;
	}
	return wc;
}

/** The limit event as the async fd would hand it over. */
static inline struct ibv_async_event fake_srq_event(void)
{
	struct ibv_async_event ev = {.event_type = IBV_EVENT_SRQ_LIMIT_REACHED};

	ev.element.srq = &fake_srq.srq;
	fake_srq.event_pending = false;
	return ev;
}

/** A pool of \p count buffers of \p size bytes on a fake registrar. */
static inline struct rex_pool *fake_srq_pool(struct fake_reg *reg, uint32_t count, size_t size)
{
	struct rex_pool_attr attr = {
	    .buf_size = size, .count = count, .access = IBV_ACCESS_LOCAL_WRITE};

	fake_reg_init(reg);
	attr.registrar = &reg->registrar;
	return rex_pool_create(NULL, &attr);
}

static inline uint32_t fake_pool_free(struct rex_pool *pool)
{
	struct rex_pool_stats st;

	rex_pool_stats(pool, &st);
	return st.count - st.in_use;
}

#endif /* REX_SRQ_FIXTURE_H */
