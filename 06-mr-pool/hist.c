/* SPDX-License-Identifier: MIT */
/* Chapter 06's log-linear latency histogram (see hist.h). */
#include "hist.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void mp_hist_reset(struct mp_hist *h)
{
	memset(h, 0, sizeof(*h));
}

/* [bucket] */
size_t mp_hist_bucket(uint64_t v)
{
	unsigned top, shift;

	if (v < MP_HIST_SUB)
		return (size_t)v; /* exact */
	if (v >> MP_HIST_MAX_BITS)
		return MP_HIST_BUCKETS - 1;
	top = 63u - (unsigned)__builtin_clzll(v); /* v is in [2^top, 2^(top+1)) */
	shift = top - MP_HIST_SUB_BITS;           /* bucket width 2^shift */
	/* v >> shift is in [64, 128): its low 6 bits pick the bucket. */
	return (size_t)(shift + 1) * MP_HIST_SUB + (size_t)((v >> shift) - MP_HIST_SUB);
}
/* [bucket] */

void mp_hist_bounds(size_t i, uint64_t *lo, uint64_t *hi)
{
	unsigned shift;

	if (i < MP_HIST_SUB) {
		*lo = *hi = i;
		return;
	}
	shift = (unsigned)(i / MP_HIST_SUB) - 1;
	*lo = (uint64_t)(MP_HIST_SUB + i % MP_HIST_SUB) << shift;
	*hi = *lo + (1ull << shift) - 1;
}

uint64_t mp_hist_quantile(const struct mp_hist *h, double p)
{
	uint64_t rank, seen = 0, lo, hi;
	size_t i;

	if (h->n == 0)
		return 0;
	rank = (uint64_t)ceil(p * (double)h->n - 1e-9);
	rank = rank < 1 ? 1 : rank > h->n ? h->n : rank;
	for (i = 0; i < MP_HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= rank)
			break;
	}
	mp_hist_bounds(i, &lo, &hi);
	return hi < h->max ? hi : h->max;
}

double mp_hist_mean(const struct mp_hist *h)
{
	return h->n ? h->mean : 0;
}

double mp_hist_stdev(const struct mp_hist *h)
{
	return h->n ? sqrt(h->m2 / (double)h->n) : 0;
}

void mp_hist_json(FILE *f, const struct mp_hist *h, unsigned scale)
{
	uint64_t lo, hi;
	size_t i;
	const char *sep = "";

	fprintf(f,
	        "{\"unit\": \"ns\", \"scale\": %u, \"sub_buckets\": %u, \"n\": %" PRIu64
	        ", \"min\": %" PRIu64 ", \"max\": %" PRIu64 ", \"buckets\": [",
	        scale, MP_HIST_SUB, h->n, h->min, h->max);
	for (i = 0; i < MP_HIST_BUCKETS; i++) {
		if (!h->count[i])
			continue;
		mp_hist_bounds(i, &lo, &hi);
		fprintf(f, "%s[%" PRIu64 ", %" PRIu64 ", %" PRIu64 "]", sep, lo, hi, h->count[i]);
		sep = ", ";
	}
	fprintf(f, "]}");
}
