/* SPDX-License-Identifier: MIT */
/* Statistics of timed samples (see stats.h). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double mp_nearest_rank(const double *sorted, size_t n, double p)
{
	size_t rank;

	if (n == 0)
		return 0;
	/* The rank (1-based) is ceil(p * n); the small epsilon keeps 0.99 *
	 * 100 from rounding up to 100 (it is 99.00000000000001 in binary). */
	rank = (size_t)ceil(p * (double)n - 1e-9);
	if (rank < 1)
		rank = 1;
	if (rank > n)
		rank = n;
	return sorted[rank - 1];
}

void mp_sort(double *samples, size_t n)
{
	if (n > 1)
		qsort(samples, n, sizeof(*samples), compare_doubles);
}

void mp_summarize_sorted(const double *sorted, size_t n, struct mp_summary *out)
{
	double sum = 0, sq = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	for (i = 0; i < n; i++)
		sum += sorted[i];
	out->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		sq += (sorted[i] - out->mean) * (sorted[i] - out->mean);
	out->n = n;
	out->min = sorted[0];
	out->max = sorted[n - 1];
	out->median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	out->p99 = mp_nearest_rank(sorted, n, 0.99);
	out->p999 = mp_nearest_rank(sorted, n, 0.999);
	out->stdev = sqrt(sq / (double)n);
}

void mp_summarize(double *samples, size_t n, struct mp_summary *out)
{
	mp_sort(samples, n);
	mp_summarize_sorted(samples, n, out);
}
