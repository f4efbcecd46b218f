/* SPDX-License-Identifier: MIT */
/**
 * \file stats.h
 * \brief Chapter 06's statistics of timed samples: minimum, median, 99th
 *        percentile, maximum and mean, in floating point (perftest keeps its
 *        deviation in an int, which truncates everything under 1 us to 0).
 *
 * The measurement program (regcost.c) uses it now; the benchmark of part 2
 * will use it for its latencies.
 */
#ifndef MP_STATS_H
#define MP_STATS_H

#include <stddef.h>

/** What mp_summarize() finds in a set of samples (in the samples' unit). */
struct mp_summary {
	size_t n;      /**< samples */
	double min;    /**< the smallest */
	double median; /**< the middle one; the mean of the two middle ones when n is even */
	double p99;    /**< 99th percentile, nearest rank: 99% of the samples are at most this */
	double max;    /**< the largest */
	double mean;   /**< the average */
};

/**
 * \brief Sort \p samples in place and summarize them.
 *
 * \param samples  \p n values; reordered (sorted ascending).
 * \param n        how many; with 0 every field of \p out is 0.
 * \param out      the summary.
 */
void mp_summarize(double *samples, size_t n, struct mp_summary *out);

/**
 * \brief The \p p quantile (0 < p <= 1) of \p n sorted samples, by nearest
 *        rank: the smallest sample with at least p * n samples at or below it.
 * \return that sample, or 0 when \p n is 0.
 */
double mp_nearest_rank(const double *sorted, size_t n, double p);

#endif /* MP_STATS_H */
