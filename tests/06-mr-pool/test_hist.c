/* SPDX-License-Identifier: MIT */
/*
 * mp_hist: every bucket's bounds hold the values that map to it, with no
 * gap and no overlap between neighbours; a bucket is at most 1/64 of its
 * lower bound wide; quantiles by nearest rank, never below the true value
 * and at most one bucket above it, capped at the exact maximum; exact
 * minimum, maximum, mean and deviation; values past 2^40 ns in the last
 * bucket; an empty histogram gives zeros.
 */
#include <math.h>
#include <stdlib.h>

#include "check.h"
#include "hist.h"

int main(void)
{
	struct mp_hist *h = calloc(1, sizeof(*h));
	uint64_t lo, hi, prev_hi = 0, v, q;
	size_t i;
	int bad = 0;

	if (!h)
		return 1;
	/* Bounds: contiguous from 0 to 2^40 - 1; each value maps home. */
	for (i = 0; i < MP_HIST_BUCKETS; i++) {
		mp_hist_bounds(i, &lo, &hi);
		if ((i == 0 && lo != 0) || (i > 0 && lo != prev_hi + 1) || hi < lo)
			bad++;
		if (mp_hist_bucket(lo) != i || mp_hist_bucket(hi) != i)
			bad++;
		if (lo >= MP_HIST_SUB && (hi - lo + 1) * MP_HIST_SUB > lo)
			bad++; /* wider than 1/64 of its values */
		prev_hi = hi;
	}
	CHECK_INT_EQ(bad, 0);
	CHECK_INT_EQ(prev_hi, (1ull << 40) - 1);
	CHECK_INT_EQ(mp_hist_bucket(1ull << 40), MP_HIST_BUCKETS - 1);
	CHECK_INT_EQ(mp_hist_bucket(UINT64_MAX), MP_HIST_BUCKETS - 1);
	CHECK_INT_EQ(mp_hist_bucket(63), 63);
	CHECK_INT_EQ(mp_hist_bucket(127), 127);
	CHECK_INT_EQ(mp_hist_bucket(128), 128);
	CHECK_INT_EQ(mp_hist_bucket(129), 128); /* width 2 from 128 */

	/* Empty. */
	CHECK_INT_EQ(mp_hist_quantile(h, 0.5), 0);
	CHECK_INT_EQ((long long)mp_hist_mean(h), 0);
	CHECK_INT_EQ((long long)mp_hist_stdev(h), 0);

	/* 1000 values 1000, 1001, ..., 1999 ns: the 99% nearest rank is the
	 * 990th, 1989; its bucket (width 16 from 1024) is [1984, 1999]. */
	for (v = 1000; v < 2000; v++)
		mp_hist_add(h, v);
	CHECK_INT_EQ(h->n, 1000);
	CHECK_INT_EQ(h->min, 1000);
	CHECK_INT_EQ(h->max, 1999);
	CHECK_INT_EQ((long long)(mp_hist_mean(h) * 10), 14995);
	/* Population deviation of 1000 consecutive integers: sqrt((n^2-1)/12). */
	CHECK_INT_EQ((long long)(mp_hist_stdev(h) * 1000),
	             (long long)(sqrt((1000.0 * 1000 - 1) / 12) * 1000));
	q = mp_hist_quantile(h, 0.99);
	CHECK_INT_EQ(q, 1999); /* the bucket's edge, 1999, is the maximum too */
	q = mp_hist_quantile(h, 0.5);
	CHECK_INT_EQ(q, 1503); /* rank 500 is 1499, in [1488, 1503] */
	CHECK_INT_EQ(mp_hist_quantile(h, 1.0), 1999);
	CHECK_INT_EQ(mp_hist_quantile(h, 0.0001), 1007); /* rank 1: 1000, in [1000, 1007] */

	/* A spread of 1 ns around 10 s: deviation 0.5 exactly. Summing squares
	 * (10^20 each, where a double's step is 16384) gave 0 or noise. */
	mp_hist_reset(h);
	for (v = 0; v < 100000; v++)
		mp_hist_add(h, 10000000000ull + (v & 1));
	CHECK_INT_EQ((long long)(mp_hist_stdev(h) * 1000 + 0.5), 500);
	CHECK_INT_EQ((long long)(mp_hist_mean(h) * 10), 100000000005ll);

	/* The maximum caps a quantile: one value of 5000, in [4992, 5055]. */
	mp_hist_reset(h);
	mp_hist_add(h, 5000);
	CHECK_INT_EQ(mp_hist_quantile(h, 0.5), 5000);

	/* A long tail: 990 of 10 us and 10 of 1 ms; p99 is still 10 us's
	 * bucket, p99.9 is 1 ms's; never below the true value. */
	mp_hist_reset(h);
	for (i = 0; i < 1000; i++)
		mp_hist_add(h, i < 990 ? 10000 : 1000000);
	q = mp_hist_quantile(h, 0.99);
	CHECK_TRUE(q >= 10000 && q < 10000 + 10000 / MP_HIST_SUB + 1);
	q = mp_hist_quantile(h, 0.999);
	CHECK_INT_EQ(q, 1000000);
	free(h);
	return check_finish();
}
