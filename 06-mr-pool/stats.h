/* SPDX-License-Identifier: MIT */
/**
 * \file stats.h
 * \brief Chapter 06's statistics of timed samples: minimum, median, 99th and
 *        99.9th percentiles, maximum, mean and standard deviation, in
 *        floating point (perftest keeps its deviation in an int, which
 *        truncates everything under 1 us to 0).
 *
 * One module for both programs: regcost.c summarizes its timings with it,
 * and the benchmark's latency table (bench_stats.c) is built on it.
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
	double p999;   /**< 99.9th percentile, nearest rank */
	double max;    /**< the largest */
	double mean;   /**< the average */
	double stdev;  /**< the standard deviation (of the population: divided by n) */
};

/**
 * \brief Sort \p samples in place and summarize them.
 *
 * \param samples  \p n values; reordered (sorted ascending).
 * \param n        how many; with 0 every field of \p out is 0.
 * \param out      the summary.
 */
void mp_summarize(double *samples, size_t n, struct mp_summary *out);

/** \brief Sort \p n samples ascending, in place. */
void mp_sort(double *samples, size_t n);

/**
 * \brief Summarize \p n samples sorted already (mp_sort()): for a caller
 *        that leaves some out first, as perftest drops the two largest.
 */
void mp_summarize_sorted(const double *sorted, size_t n, struct mp_summary *out);

/**
 * \brief The \p p quantile (0 < p <= 1) of \p n sorted samples, by nearest
 *        rank: the smallest sample with at least p * n samples at or below it.
 * \return that sample, or 0 when \p n is 0.
 */
double mp_nearest_rank(const double *sorted, size_t n, double p);

#endif /* MP_STATS_H */
