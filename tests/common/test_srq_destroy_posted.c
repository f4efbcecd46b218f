/* SPDX-License-Identifier: MIT */
/*
 * rex_srq_destroy() with receives still posted: refused while a QP uses
 * the SRQ (ibv_destroy_srq() says EBUSY; the queue stays as it was and
 * keeps working), then destroyed, every posted buffer back in the pool
 * and the ones the program took still the program's.
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "srq_fixture.h"

int main(void)
{
	struct rex_srq_attr attr = {.depth = 24, .low_water = 6};
	struct rex_pool_buf *taken[3];
	struct fake_reg reg;
	struct rex_pool *pool = fake_srq_pool(&reg, 32, 64);
	struct rex_srq *srq = pool ? rex_srq_create(NULL, pool, &attr) : NULL;
	struct capture cap;
	struct ibv_wc wc;
	unsigned i;
	char *text;

	CHECK_TRUE(srq != NULL);
	if (!srq)
		return check_finish();
	for (i = 0; i < 3; i++) {
		wc = fake_srq_consume(10);
		taken[i] = rex_srq_take(srq, &wc);
		CHECK_TRUE(taken[i] != NULL);
	}
	fake_srq.destroy_ret = EBUSY;
	capture_begin(&cap);
	CHECK_INT_EQ(rex_srq_destroy(srq), -EBUSY);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "ibv_destroy_srq: Device or resource busy");
	free(text);
	CHECK_INT_EQ(fake_pool_free(pool), 8);
	CHECK_INT_EQ(rex_srq_repost(srq, taken[0]), 0);
	CHECK_INT_EQ(fake_srq.count, 22);

	fake_srq.destroy_ret = 0;
	CHECK_INT_EQ(rex_srq_destroy(srq), 0);
	CHECK_INT_EQ(fake_pool_free(pool), 30); /* 22 posted came back, 2 are the program's */
	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_destroy(pool), -EBUSY);
	free(capture_end(&cap));
	CHECK_INT_EQ(rex_pool_put(pool, taken[1]), 0);
	CHECK_INT_EQ(rex_pool_put(pool, taken[2]), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	CHECK_INT_EQ(rex_srq_destroy(NULL), 0);
	return check_finish();
}
