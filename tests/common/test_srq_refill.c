/* SPDX-License-Identifier: MIT */
/*
 * The low-water mark: messages take receives, the buffers go back to the
 * pool (rex_srq_release()), and the limit event, once fewer than the mark
 * are posted, refills the queue in chains and arms the limit again. A
 * buffer posted again at once (rex_srq_repost()) keeps the queue full. A
 * pool that runs dry leaves the limit disarmed (no event over and over)
 * until a buffer comes back, which refills and arms it. A completion that
 * names no posted receive is refused.
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "srq_fixture.h"

static struct rex_pool_buf *take_one(struct rex_srq *srq)
{
	struct ibv_wc wc = fake_srq_consume(64);

	return rex_srq_take(srq, &wc);
}

int main(void)
{
	struct rex_srq_attr attr = {.depth = 16, .low_water = 4};
	struct rex_pool_buf *held[13], *spare[4], *b;
	struct ibv_async_event ev;
	struct rex_srq_stats st;
	struct fake_reg reg;
	struct rex_pool *pool = fake_srq_pool(&reg, 20, 128);
	struct rex_srq *srq = pool ? rex_srq_create(NULL, pool, &attr) : NULL;
	struct capture cap;
	struct ibv_wc wc;
	unsigned i;
	char *text;

	CHECK_TRUE(srq != NULL);
	if (!srq)
		return check_finish();
	/* 12 taken: 4 left, not fewer than the mark: no event. */
	for (i = 0; i < 12; i++) {
		b = take_one(srq);
		CHECK_TRUE(b != NULL);
		CHECK_INT_EQ(rex_srq_release(srq, b), 0);
	}
	CHECK_INT_EQ(fake_srq.events, 0);
	CHECK_INT_EQ(fake_srq.count, 4);
	/* The 13th leaves 3: the event, once; the device disarms it. */
	b = take_one(srq);
	CHECK_INT_EQ(rex_srq_release(srq, b), 0);
	CHECK_INT_EQ(fake_srq.events, 1);
	CHECK_INT_EQ(fake_srq.limit, 0);
	CHECK_INT_EQ(fake_srq.count, 3); /* release() alone posts nothing while armed */
	ev = fake_srq_event();
	CHECK_INT_EQ(rex_srq_async_event(&ev), 1);
	CHECK_INT_EQ(fake_srq.count, 16);
	CHECK_INT_EQ(fake_srq.limit, 4);
	rex_srq_stats(srq, &st);
	CHECK_INT_EQ(st.posted, 16);
	CHECK_INT_EQ(st.min_posted, 3);
	CHECK_INT_EQ(st.taken, 13);
	CHECK_INT_EQ(st.refills, 1);
	CHECK_INT_EQ(st.limit_events, 1);
	CHECK_INT_EQ(st.dry, 0);

	/* Posted again at once: the queue stays full, no event. */
	for (i = 0; i < 40; i++) {
		b = take_one(srq);
		CHECK_INT_EQ(rex_srq_repost(srq, b), 0);
	}
	CHECK_INT_EQ(fake_srq.count, 16);
	CHECK_INT_EQ(fake_srq.events, 1);

	/* Not an SRQ event, or not a rex_srq's: left alone. */
	ev = (struct ibv_async_event){.event_type = IBV_EVENT_PORT_ACTIVE};
	CHECK_INT_EQ(rex_srq_async_event(&ev), 0);

	/* A completion that names nothing posted: refused, by name. */
	wc = (struct ibv_wc){.wr_id = 99};
	capture_begin(&cap);
	CHECK_TRUE(rex_srq_take(srq, &wc) == NULL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "rex_srq_take: wr_id 99 is no receive posted in this SRQ");
	free(text);
	b = take_one(srq);
	wc.wr_id = b->index; /* taken already */
	capture_begin(&cap);
	CHECK_TRUE(rex_srq_take(srq, &wc) == NULL);
	free(capture_end(&cap));
	CHECK_INT_EQ(rex_srq_repost(srq, b), 0);

	/* Dry: the program holds the pool's 4 spare buffers and 13 taken;
	 * the event's refill finds nothing and leaves the limit disarmed. */
	for (i = 0; i < 4; i++)
		spare[i] = rex_pool_get(pool);
	for (i = 0; i < 13; i++)
		held[i] = take_one(srq);
	CHECK_INT_EQ(fake_srq.events, 2);
	ev = fake_srq_event();
	CHECK_INT_EQ(rex_srq_async_event(&ev), 1);
	CHECK_INT_EQ(fake_srq.count, 3);
	CHECK_INT_EQ(fake_srq.limit, 0);
	rex_srq_stats(srq, &st);
	CHECK_INT_EQ(st.dry, 1);
	/* A buffer back: refilled to 4, the mark, and armed again. */
	CHECK_INT_EQ(rex_srq_release(srq, held[0]), 0);
	CHECK_INT_EQ(fake_srq.count, 4);
	CHECK_INT_EQ(fake_srq.limit, 4);
	for (i = 1; i < 13; i++)
		CHECK_INT_EQ(rex_srq_release(srq, held[i]), 0);
	CHECK_INT_EQ(fake_srq.count, 4); /* armed: the next event refills */
	CHECK_INT_EQ(rex_srq_refill(srq), 12);
	CHECK_INT_EQ(fake_srq.count, 16);
	CHECK_INT_EQ(rex_srq_destroy(srq), 0);
	CHECK_INT_EQ(fake_pool_free(pool), 16); /* the 4 spares are still out */
	for (i = 0; i < 4; i++)
		CHECK_INT_EQ(rex_pool_put(pool, spare[i]), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
