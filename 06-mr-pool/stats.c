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

void mp_summarize(double *samples, size_t n, struct mp_summary *out)
{
	double sum = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	if (n == 0)
		return;
	qsort(samples, n, sizeof(*samples), compare_doubles);
	for (i = 0; i < n; i++)
		sum += samples[i];
	out->n = n;
	out->min = samples[0];
	out->max = samples[n - 1];
	out->median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
	out->p99 = mp_nearest_rank(samples, n, 0.99);
	out->mean = sum / (double)n;
}
