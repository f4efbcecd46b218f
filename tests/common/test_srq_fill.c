/* SPDX-License-Identifier: MIT */
/*
 * rex_srq_create() posts depth receives, each a whole pool buffer named by
 * its index, and arms the limit at the low-water mark; a bad depth or mark,
 * a pool with too few buffers free, or a failing create or post leave
 * nothing behind (every buffer back in the pool, the SRQ destroyed).
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "srq_fixture.h"

static void refused(struct rex_pool *pool, uint32_t depth, uint32_t low, int err, const char *says)
{
	struct rex_srq_attr attr = {.depth = depth, .low_water = low};
	struct capture cap;
	struct rex_srq *srq;
	char *text;

	capture_begin(&cap);
	errno = 0;
	srq = rex_srq_create(NULL, pool, &attr);
	CHECK_INT_EQ(errno, err);
	text = capture_end(&cap);
	CHECK_TRUE(srq == NULL);
	CHECK_STR_CONTAINS(text, says);
	free(text);
	CHECK_INT_EQ(fake_pool_free(pool), 64);
	CHECK_TRUE(!fake_srq.live);
}

int main(void)
{
	struct rex_srq_attr attr = {.depth = 48, .low_water = 12};
	bool seen[64] = {0};
	struct rex_srq_stats st;
	struct fake_reg reg;
	struct rex_pool *pool = fake_srq_pool(&reg, 64, 200);
	struct rex_srq *srq;
	uint32_t i, distinct = 0;

	CHECK_TRUE(pool != NULL);
	if (!pool)
		return check_finish();
	srq = rex_srq_create(NULL, pool, &attr);
	CHECK_TRUE(srq != NULL);
	CHECK_TRUE(rex_srq_ibv(srq) == &fake_srq.srq);
	CHECK_TRUE(rex_srq_pool(srq) == pool);
	CHECK_INT_EQ(fake_srq.count, 48);
	CHECK_INT_EQ(fake_pool_free(pool), 16);
	CHECK_INT_EQ(fake_srq.limit, 12);
	CHECK_INT_EQ(fake_srq.last_sge_len, 200);
	/* In chains, not one call a receive. */
	CHECK_TRUE(fake_srq.posts <= 2);
	for (i = 0; i < fake_srq.count; i++) {
		uint64_t id = fake_srq.fifo[(fake_srq.head + i) % FAKE_SRQ_MAX];

		if (id < 64 && !seen[id]) {
			seen[id] = true;
			distinct++;
		}
	}
	CHECK_INT_EQ(distinct, 48);
	rex_srq_stats(srq, &st);
	CHECK_INT_EQ(st.depth, 48);
	CHECK_INT_EQ(st.posted, 48);
	CHECK_INT_EQ(st.min_posted, 48);
	CHECK_INT_EQ(st.refills, 0);
	CHECK_INT_EQ(rex_srq_destroy(srq), 0);
	CHECK_INT_EQ(fake_pool_free(pool), 64);

	/* A tag in the high bits: on every wr_id, and asked of every completion. */
	attr.wr_id_tag = (uint64_t)2 << 32;
	srq = rex_srq_create(NULL, pool, &attr);
	CHECK_TRUE(srq != NULL);
	CHECK_INT_EQ(fake_srq.fifo[fake_srq.head] >> 32, 2);
	{
		struct ibv_wc wc = fake_srq_consume(8), untagged = wc;
		struct capture cap2;

		untagged.wr_id &= UINT32_MAX;
		capture_begin(&cap2);
		CHECK_TRUE(rex_srq_take(srq, &untagged) == NULL);
		free(capture_end(&cap2));
		CHECK_TRUE(rex_srq_take(srq, &wc) == rex_pool_buf_at(pool, (uint32_t)wc.wr_id));
		CHECK_INT_EQ(rex_srq_release(srq, rex_pool_buf_at(pool, (uint32_t)wc.wr_id)), 0);
	}
	CHECK_INT_EQ(rex_srq_destroy(srq), 0);
	CHECK_INT_EQ(fake_pool_free(pool), 64);
	attr.wr_id_tag = 7; /* in the index's bits */
	{
		struct capture cap3;

		capture_begin(&cap3);
		CHECK_TRUE(rex_srq_create(NULL, pool, &attr) == NULL);
		free(capture_end(&cap3));
	}

	refused(pool, 0, 0, EINVAL, "rex_srq_create: depth 0 and low water 0");
	refused(pool, 8, 8, EINVAL, "need 0 <= low water < depth");
	refused(pool, 65, 1, ENOBUFS, "depth 65, but the pool has 64 buffers free");
	fake_srq.create_errno = EINVAL; /* a depth over the device's max_srq_wr */
	refused(pool, 32, 4, EINVAL, "ibv_create_srq: Invalid argument");
	fake_srq.create_errno = 0;
	fake_srq.post_fail_at = 5;
	refused(pool, 32, 4, ENOMEM, "ibv_post_srq_recv: Cannot allocate memory");
	CHECK_INT_EQ(fake_srq.destroys, 3); /* the tagged queue, then the two refused */

	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
