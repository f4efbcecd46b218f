/* SPDX-License-Identifier: MIT */
/**
 * \file hist.h
 * \brief Chapter 06's latency histogram: fixed size, log-linear, for runs
 *        of any length (-D).
 *
 * A run timed by duration cannot keep every sample: at a few microseconds
 * each, an hour is a billion of them. perftest then prints only the
 * average. This histogram keeps a count per bucket instead, in a fixed
 * 18 KiB, and still gives percentiles:
 *
 * - values 0 to 63 (ns) have a bucket each, exact;
 * - above, each power of two [2^k, 2^(k+1)) is cut into 64 buckets of
 *   equal width 2^(k-6), so a bucket is at most 1/64 (1.6 %) of the values
 *   it holds;
 * - up to 2^40 ns (18 minutes); anything longer counts in the last bucket.
 *
 * The minimum, maximum, mean and standard deviation are kept exactly beside
 * the buckets; only the percentiles come from them, as the upper edge of
 * the bucket that holds the sample of that rank: never below the true
 * percentile, at most 1.6 % above it.
 */
#ifndef MP_HIST_H
#define MP_HIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define MP_HIST_SUB_BITS 6 /**< 64 buckets per power of two */
#define MP_HIST_SUB      (1u << MP_HIST_SUB_BITS)
#define MP_HIST_MAX_BITS 40 /**< values up to 2^40 ns */
#define MP_HIST_BUCKETS  (MP_HIST_SUB * (MP_HIST_MAX_BITS - MP_HIST_SUB_BITS + 1))

/** Counts per bucket, and the exact figures beside them. */
struct mp_hist {
	uint64_t n;        /**< values added */
	uint64_t min, max; /**< exact, in ns (0 when n is 0) */
	double mean, m2;   /**< Welford's running mean and sum of squared deviations */
	uint64_t count[MP_HIST_BUCKETS];
};

/** \brief Empty \p h. */
void mp_hist_reset(struct mp_hist *h);

/** \brief The bucket of \p v ns. */
size_t mp_hist_bucket(uint64_t v);

/** \brief The values bucket \p i holds: [\p lo, \p hi], in ns. */
void mp_hist_bounds(size_t i, uint64_t *lo, uint64_t *hi);

/** \brief Count one value of \p v ns. */
static inline void mp_hist_add(struct mp_hist *h, uint64_t v)
{
	h->count[mp_hist_bucket(v)]++;
	if (h->n == 0 || v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->n++;
	/* Welford's update: E[x^2] - E[x]^2 in doubles loses every digit of a
	 * small spread around a large mean (16-digit squares of 10-digit ns). */
	double delta = (double)v - h->mean;
	h->mean += delta / (double)h->n;
	h->m2 += delta * ((double)v - h->mean);
}

/**
 * \brief The \p p quantile (0 < p <= 1) by nearest rank: the upper edge of
 *        the bucket holding the smallest value with at least p * n values at
 *        or below it, but never above the exact maximum. 0 when empty.
 */
uint64_t mp_hist_quantile(const struct mp_hist *h, double p);

/** \brief The mean, in ns (0 when empty). */
double mp_hist_mean(const struct mp_hist *h);

/** \brief The standard deviation of the population, in ns (0 when empty). */
double mp_hist_stdev(const struct mp_hist *h);

/**
 * \brief Write the histogram as JSON: {"unit": "ns", "scale": \p scale,
 *        "sub_buckets": 64, "n": values, "min": exact, "max": exact,
 *        "buckets": [[lo, hi, count], ...]}, the non-empty buckets only. A value
 *        divided by \p scale is what the table prints (2 for half a round
 *        trip, 1 for a round trip) in ns.
 */
void mp_hist_json(FILE *f, const struct mp_hist *h, unsigned scale);

#endif /* MP_HIST_H */
