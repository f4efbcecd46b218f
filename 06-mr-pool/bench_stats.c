/* SPDX-License-Identifier: MIT */
/*
 * bench_stats.c: latency statistics, and the table, CSV and JSON the
 * client writes (see bench_stats.h).
 */
#include "bench_stats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "bench_wire.h"
#include "stats.h"

static size_t percentile_index(double p, size_t kept, size_t n)
{
	size_t i = (size_t)ceil(p * (double)kept - 1e-9);

	return i < n ? i : n - 1;
}

/* [lat-summary] */
void bench_lat_summarize(double *us, size_t n, bool as_perftest, struct bench_lat *out)
{
	struct mp_summary sum;
	size_t kept = n > 2 ? n - 2 : n, i;
	double dev, sq = 0;

	mp_sort(us, n);
	/* As perftest: the two largest samples go (a page fault, a timer). */
	mp_summarize_sorted(us, kept, &sum);
	*out = (struct bench_lat){.n = sum.n,
	                          .min = sum.min,
	                          .max = sum.max,
	                          .typical = sum.median,
	                          .avg = sum.mean,
	                          .stdev = sum.stdev,
	                          .p99 = sum.p99,
	                          .p999 = sum.p999};
	if (!as_perftest || kept == 0)
		return;
	/* perftest's way (print_report_lat): t_max is the larger of the two
	 * dropped samples; a percentile p is the sample at 0-based index
	 * ceil(p * kept), one rank above the nearest rank (a dropped one when
	 * that is past the end); t_stdev sums deviations cut to whole us. */
	out->max = us[kept < n ? kept : n - 1];
	out->p99 = us[percentile_index(0.99, kept, n)];
	out->p999 = us[percentile_index(0.999, kept, n)];
	for (i = 0; i < kept; i++) {
		dev = (double)(long)(out->avg - us[i]);
		sq += dev * dev;
	}
	out->stdev = sqrt(sq / (double)kept);
}
/* [lat-summary] */

/* [lat-hist] */
void bench_lat_from_hist(const struct mp_hist *h, unsigned scale, struct bench_lat *out)
{
	double us = 1e3 * scale;

	*out = (struct bench_lat){.n = (size_t)h->n,
	                          .min = (double)h->min / us,
	                          .max = (double)h->max / us,
	                          .typical = (double)mp_hist_quantile(h, 0.5) / us,
	                          .avg = mp_hist_mean(h) / us,
	                          .stdev = mp_hist_stdev(h) / us,
	                          .p99 = (double)mp_hist_quantile(h, 0.99) / us,
	                          .p999 = (double)mp_hist_quantile(h, 0.999) / us};
}
/* [lat-hist] */

void bench_print_header(FILE *f, unsigned mode)
{
	fprintf(f, "%s\n",
	        mode == BENCH_MODE_BW    ? BENCH_BW_HEADER
	        : mode == BENCH_MODE_LAT ? BENCH_LAT_HEADER
	                                 : BENCH_LOAD_HEADER);
}

/* The server's CPU, user + sys; "-" when it did not say. */
static void print_server_cpu(FILE *f, const struct bench_row *r)
{
	if (r->srv_cpu_user_s < 0 || r->srv_cpu_sys_s < 0)
		fprintf(f, "-\n");
	else
		fprintf(f, "%.3f\n", r->srv_cpu_user_s + r->srv_cpu_sys_s);
}

/* With several QPs: the slowest and the fastest, and how far apart. */
static void print_per_qp(FILE *f, const struct bench_row *r)
{
	unsigned i, lo = 0, hi = 0;

	if (!r->per_qp || r->qps < 2)
		return;
	for (i = 1; i < r->qps; i++) {
		if (r->per_qp[i].bw_avg_mib_s < r->per_qp[lo].bw_avg_mib_s)
			lo = i;
		if (r->per_qp[i].bw_avg_mib_s > r->per_qp[hi].bw_avg_mib_s)
			hi = i;
	}
	fprintf(f,
	        "   per QP [MiB/sec]: slowest %.2f (QP %u, %" PRIu64 " messages), fastest %.2f (QP "
	        "%u, %" PRIu64 " messages), spread %.1f%%\n",
	        r->per_qp[lo].bw_avg_mib_s, lo, r->per_qp[lo].iterations,
	        r->per_qp[hi].bw_avg_mib_s, hi, r->per_qp[hi].iterations,
	        r->per_qp[lo].bw_avg_mib_s > 0
	            ? 100.0 * (r->per_qp[hi].bw_avg_mib_s / r->per_qp[lo].bw_avg_mib_s - 1)
	            : 0.0);
}

void bench_print_row(FILE *f, const struct bench_row *r)
{
	if (r->mode == BENCH_MODE_BW)
		fprintf(f,
		        " %-7" PRIu64 "  %-11" PRIu64
		        "  %-16.2f  %-19.2f  %-13.6f  %-11.3f  %-10.3f  ",
		        r->bytes, r->iterations, r->bw_peak_mib_s, r->bw_avg_mib_s,
		        r->msg_rate_mpps, r->cpu_user_s, r->cpu_sys_s);
	else if (r->mode == BENCH_MODE_LOAD)
		fprintf(f,
		        " %-7" PRIu64 "  %-14.0f  %-15.1f  %-9" PRIu64 "  %-4" PRIu64
		        "  %-11.2f  %-11.2f  %-11.2f  %-13.2f  %-11.2f  %-11.3f  %-10.3f  ",
		        r->bytes, r->load.offered_rps, r->load.achieved_rps, r->load.requests,
		        r->load.late, r->lat.typical, r->load.p90, r->lat.p99, r->lat.p999,
		        r->lat.max, r->cpu_user_s, r->cpu_sys_s);
	else
		fprintf(f,
		        " %-7" PRIu64 "  %-11" PRIu64
		        "  %-11.2f  %-11.2f  %-15.2f  %-11.2f  %-13.2f  "
		        "%-20.2f  %-22.2f  %-11.3f  %-10.3f  ",
		        r->bytes, r->iterations, r->lat.min, r->lat.max, r->lat.typical, r->lat.avg,
		        r->lat.stdev, r->lat.p99, r->lat.p999, r->cpu_user_s, r->cpu_sys_s);
	print_server_cpu(f, r);
	print_per_qp(f, r);
}

void bench_csv_row(FILE *f, const struct bench_row *r)
{
	fprintf(f, "%s,%s,%" PRIu64 ",%" PRIu64 ",%u,%u,", bench_op_name(r->op),
	        bench_mode_name(r->mode), r->bytes, r->iterations, r->qps, r->depth);
	if (r->mode == BENCH_MODE_BW)
		/* Significant digits, not the table's decimals: a slow run's
		 * 0.0003 MiB/s must not read as 0. */
		fprintf(f, "%.6g,%.6g,%.6f,,,,,,,,", r->bw_peak_mib_s, r->bw_avg_mib_s,
		        r->msg_rate_mpps);
	else
		fprintf(f, ",,,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,", r->lat.min, r->lat.max,
		        r->lat.typical, r->lat.avg, r->lat.stdev, r->lat.p99, r->lat.p999);
	fprintf(f, "%.6f,%.6f,%.6f,%s,", r->cpu_user_s, r->cpu_sys_s, r->seconds,
	        r->verified ? "true" : "false");
	if (r->srv_cpu_user_s < 0 || r->srv_cpu_sys_s < 0)
		fprintf(f, ",\n");
	else
		fprintf(f, "%.6f,%.6f\n", r->srv_cpu_user_s, r->srv_cpu_sys_s);
}

/* [json] */
int bench_json_write(FILE *f, const struct bench_run *run, const struct bench_row *rows, size_t n)
{
	size_t i;
	unsigned q;

	/* Names and values are ours (no quotes or backslashes in them), so
	 * no escaping is needed; every key is quoted, every number finite. */
	fprintf(f,
	        "{\"program\": \"%s\", \"date\": \"%s\", \"device\": \"%s\", \"op\": \"%s\", "
	        "\"mode\": \"%s\", \"qps\": %u, \"depth\": %u, \"signal_every\": %u, "
	        "\"inline\": %u, \"polling\": \"%s\", \"results\": [",
	        run->program, run->date, run->device, bench_op_name(run->op),
	        bench_mode_name(run->mode), run->qps, run->depth, run->signal_every,
	        run->inline_size, run->events ? "events" : "busy");
	for (i = 0; i < n; i++) {
		const struct bench_row *r = &rows[i];

		fprintf(f, "%s\n  {\"bytes\": %" PRIu64 ", \"iterations\": %" PRIu64 ", ",
		        i ? "," : "", r->bytes, r->iterations);
		if (r->mode == BENCH_MODE_BW)
			fprintf(f,
			        "\"bw_peak_mib_s\": %.6g, \"bw_avg_mib_s\": %.6g, "
			        "\"msg_rate_mpps\": %.6f, ",
			        r->bw_peak_mib_s, r->bw_avg_mib_s, r->msg_rate_mpps);
		else
			fprintf(f,
			        "\"t_min_us\": %.3f, \"t_max_us\": %.3f, \"t_typical_us\": %.3f, "
			        "\"t_avg_us\": %.3f, \"t_stdev_us\": %.3f, \"t_p99_us\": %.3f, "
			        "\"t_p999_us\": %.3f, ",
			        r->lat.min, r->lat.max, r->lat.typical, r->lat.avg, r->lat.stdev,
			        r->lat.p99, r->lat.p999);
		if (r->mode == BENCH_MODE_LOAD)
			fprintf(
			    f,
			    "\"offered_rps\": %.1f, \"achieved_rps\": %.1f, \"requests\": %" PRIu64
			    ", \"late\": %" PRIu64 ", \"t_p90_us\": %.3f, ",
			    r->load.offered_rps, r->load.achieved_rps, r->load.requests,
			    r->load.late, r->load.p90);
		fprintf(f, "\"cpu_user_s\": %.6f, \"cpu_sys_s\": %.6f, ", r->cpu_user_s,
		        r->cpu_sys_s);
		if (r->srv_cpu_user_s < 0 || r->srv_cpu_sys_s < 0)
			fprintf(f, "\"srv_cpu_user_s\": null, \"srv_cpu_sys_s\": null, ");
		else
			fprintf(f, "\"srv_cpu_user_s\": %.6f, \"srv_cpu_sys_s\": %.6f, ",
			        r->srv_cpu_user_s, r->srv_cpu_sys_s);
		if (r->hist) {
			fprintf(f, "\"histogram\": ");
			mp_hist_json(f, r->hist, r->hist_scale);
			fprintf(f, ", ");
		}
		if (r->per_qp) {
			fprintf(f, "\"per_qp\": [");
			for (q = 0; q < r->qps; q++)
				fprintf(f,
				        "%s{\"qp\": %u, \"iterations\": %" PRIu64
				        ", \"seconds\": %.6f, \"bw_avg_mib_s\": %.6g}",
				        q ? ", " : "", q, r->per_qp[q].iterations,
				        r->per_qp[q].seconds, r->per_qp[q].bw_avg_mib_s);
			fprintf(f, "], ");
		}
		fprintf(f, "\"seconds\": %.6f, \"verified\": %s}", r->seconds,
		        r->verified ? "true" : "false");
	}
	fprintf(f, "\n]}\n");
	return ferror(f) ? -EIO : 0;
}
/* [json] */
