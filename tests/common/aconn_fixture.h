/* SPDX-License-Identifier: MIT */
/*
 * A connection of rex_aconn without a device, for the unit tests of its
 * books: a fake CQ whose poll_cq hands out completions the test scripted
 * (ibv_poll_cq() calls the context's ops), no QP, and a CM id that is only
 * memory (the tests never take a path that passes it to librdmacm).
 */
#ifndef REX_ACONN_FIXTURE_H
#define REX_ACONN_FIXTURE_H

#include <string.h>

#include "check.h"
#include "rex_aconn.h"

struct aconn_fixture {
	struct rex_loop *loop;
	struct rex_aconn_devs devs;
	struct rex_aconn c;
	struct rdma_cm_id id;
	struct ibv_context ctx;
	struct ibv_cq cq;
	struct ibv_wc script[64]; /* what the CQ holds, in order */
	int scripted, taken;
	int released;
};

static struct aconn_fixture *aconn_fixture_current;

static int fake_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	struct aconn_fixture *f = aconn_fixture_current;
	int n = 0;

	(void)cq;
	while (n < num && f->taken < f->scripted)
		wc[n++] = f->script[f->taken++];
	return n;
}

static void fake_released(struct rex_aconn *c)
{
	(void)c;
	aconn_fixture_current->released++;
}

static const struct rex_aconn_ops fake_ops = {.released = fake_released};

/* A connection in state CONNECTING (no disconnect to send when it closes),
 * with a CQ that holds what aconn_fixture_push() puts in it. */
static inline void aconn_fixture_init(struct aconn_fixture *f)
{
	memset(f, 0, sizeof(*f));
	aconn_fixture_current = f;
	f->loop = rex_loop_create();
	CHECK_TRUE(f->loop != NULL);
	rex_aconn_devs_init(&f->devs, f->loop, "test", NULL, NULL, NULL, NULL);
	rex_aconn_init(&f->c, &f->devs, &f->id, REX_STATE_CONNECTING, &fake_ops);
	strcpy(f->c.name, "connection 0");
	f->ctx.ops.poll_cq = fake_poll_cq;
	f->cq.context = &f->ctx;
	f->c.cq = &f->cq;
	f->c.lcq.cq = &f->cq;
}

static inline void aconn_fixture_push(struct aconn_fixture *f, uint64_t wr_id,
                                      enum ibv_wc_status status)
{
	struct ibv_wc wc = {.wr_id = wr_id, .status = status};

	f->script[f->scripted++] = wc;
}

/* Poll until the CQ is empty; returns how many completions were good. */
static inline int aconn_fixture_poll(struct aconn_fixture *f)
{
	struct ibv_wc wc[4];
	int good = 0, taken;

	do
		good += rex_aconn_poll(&f->c, wc, 4, &taken);
	while (taken == 4);
	return good;
}

static inline void aconn_fixture_fini(struct aconn_fixture *f)
{
	rex_loop_timer_cancel(f->loop, &f->c.deadline);
	rex_loop_unpost(f->loop, &f->c.release);
	CHECK_INT_EQ(rex_loop_destroy(f->loop), 0);
}

#endif /* REX_ACONN_FIXTURE_H */
