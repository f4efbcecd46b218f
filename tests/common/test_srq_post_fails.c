/* SPDX-License-Identifier: MIT */
/*
 * A post the device refuses part-way: the receives before the refused one
 * are posted and counted, the refused one and those after it go back to
 * the pool, and the error names ibv_post_srq_recv. A repost that fails
 * gives its buffer back to the pool, and the next repost that works takes
 * it from there again (the queue full, the limit armed). A buffer posted
 * already is not posted twice. No buffer is lost either way.
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "srq_fixture.h"

int main(void)
{
	struct rex_srq_attr attr = {.depth = 16, .low_water = 4};
	struct fake_reg reg;
	struct rex_pool *pool = fake_srq_pool(&reg, 16, 64);
	struct rex_srq *srq = pool ? rex_srq_create(NULL, pool, &attr) : NULL;
	struct rex_srq_stats st;
	struct rex_pool_buf *b;
	struct capture cap;
	struct ibv_wc wc;
	unsigned i;
	char *text;

	CHECK_TRUE(srq != NULL);
	if (!srq)
		return check_finish();
	for (i = 0; i < 10; i++) {
		wc = fake_srq_consume(1);
		CHECK_INT_EQ(rex_srq_release(srq, rex_srq_take(srq, &wc)), 0);
	}
	CHECK_INT_EQ(fake_srq.count, 6);
	fake_srq.post_fail_at = 3;
	capture_begin(&cap);
	CHECK_INT_EQ(rex_srq_refill(srq), -ENOMEM);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "ibv_post_srq_recv: Cannot allocate memory");
	free(text);
	CHECK_INT_EQ(fake_srq.count, 8);
	rex_srq_stats(srq, &st);
	CHECK_INT_EQ(st.posted, 8);
	CHECK_INT_EQ(fake_pool_free(pool), 8);
	CHECK_INT_EQ(rex_srq_refill(srq), 8);
	CHECK_INT_EQ(fake_srq.count, 16);

	wc = fake_srq_consume(1);
	b = rex_srq_take(srq, &wc);
	fake_srq.post_fail_at = 1;
	capture_begin(&cap);
	CHECK_INT_EQ(rex_srq_repost(srq, b), -ENOMEM);
	free(capture_end(&cap));
	CHECK_INT_EQ(fake_pool_free(pool), 1);
	/* Posted again: not twice. */
	capture_begin(&cap);
	CHECK_INT_EQ(
	    rex_srq_repost(srq, rex_pool_buf_at(pool, (uint32_t)fake_srq.fifo[fake_srq.head])),
	    -EINVAL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "rex_srq_repost: buffer");
	CHECK_STR_CONTAINS(text, "is posted already");
	free(text);
	CHECK_INT_EQ(fake_srq.count, 15);
	/* Past the low-water mark, the limit event: the refill finds the pool
	 * empty but for the refused buffer... taken by the program here, so
	 * dry: disarmed. The next repost that works tops the queue up from
	 * the pool (the refused buffer back in it) and arms the limit. */
	{
		struct rex_pool_buf *held[12], *spare = rex_pool_get(pool);
		struct ibv_async_event ev;

		for (i = 0; i < 12; i++) {
			wc = fake_srq_consume(1);
			held[i] = rex_srq_take(srq, &wc);
		}
		CHECK_INT_EQ(fake_srq.count, 3);
		ev = fake_srq_event();
		CHECK_INT_EQ(rex_srq_async_event(&ev), 1);
		CHECK_INT_EQ(fake_srq.limit, 0);
		CHECK_INT_EQ(rex_pool_put(pool, spare), 0);
		CHECK_INT_EQ(rex_srq_repost(srq, held[0]), 0);
		CHECK_INT_EQ(fake_srq.count, 5); /* held[0] and the spare */
		CHECK_INT_EQ(fake_srq.limit, 4);
		for (i = 1; i < 12; i++)
			CHECK_INT_EQ(rex_srq_repost(srq, held[i]), 0);
		CHECK_INT_EQ(fake_srq.count, 16);
	}
	CHECK_INT_EQ(rex_srq_destroy(srq), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
