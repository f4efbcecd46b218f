/* SPDX-License-Identifier: MIT */
/*
 * mp_summarize(): minimum, median (odd and even counts), nearest-rank 99th
 * percentile, maximum and mean, worked out by hand; samples under 1 are not
 * truncated; no samples give zeros.
 */
#include "check.h"
#include "stats.h"

/* Doubles compared to a millionth, printed as integers of millionths. */
#define CHECK_NEAR(a, b) CHECK_INT_EQ((long long)((a)*1e6 + 0.5), (long long)((b)*1e6 + 0.5))

int main(void)
{
	double odd[] = {5, 1, 4, 2, 3};
	double even[] = {0.4, 0.1, 0.3, 0.2};
	double hundred[100], thousand[1000];
	struct mp_summary s;
	int i;

	mp_summarize(odd, 5, &s);
	CHECK_INT_EQ(s.n, 5);
	CHECK_NEAR(s.min, 1);
	CHECK_NEAR(s.median, 3);
	CHECK_NEAR(s.p99, 5); /* ceil(0.99 * 5) = 5th */
	CHECK_NEAR(s.max, 5);
	CHECK_NEAR(s.mean, 3);
	CHECK_NEAR(odd[0], 1); /* sorted in place */
	CHECK_NEAR(odd[4], 5);

	mp_summarize(even, 4, &s);
	CHECK_NEAR(s.median, 0.25); /* the mean of the two middle ones */
	CHECK_NEAR(s.min, 0.1);     /* no truncation below 1 */
	CHECK_NEAR(s.mean, 0.25);

	/* 1..100: the 99th percentile is the 99th value, not the 100th. */
	for (i = 0; i < 100; i++)
		hundred[i] = 100 - i;
	mp_summarize(hundred, 100, &s);
	CHECK_NEAR(s.p99, 99);
	CHECK_NEAR(s.median, 50.5);

	/* 1000 samples, ten outliers of 1000: p99 is the 990th, still 1. */
	for (i = 0; i < 1000; i++)
		thousand[i] = i < 10 ? 1000 : 1;
	mp_summarize(thousand, 1000, &s);
	CHECK_NEAR(s.p99, 1);
	CHECK_NEAR(s.max, 1000);
	thousand[0] = 1; /* now eleven outliers would be needed: make it 11 */
	for (i = 0; i < 11; i++)
		thousand[i] = 1000;
	mp_summarize(thousand, 1000, &s);
	CHECK_NEAR(s.p99, 1000);

	CHECK_NEAR(mp_nearest_rank(odd, 5, 0.5), 3);
	CHECK_NEAR(mp_nearest_rank(odd, 5, 1.0), 5);
	CHECK_NEAR(mp_nearest_rank(odd, 0, 0.5), 0);
	mp_summarize(NULL, 0, &s);
	CHECK_INT_EQ(s.n, 0);
	CHECK_NEAR(s.median, 0);
	return check_finish();
}
