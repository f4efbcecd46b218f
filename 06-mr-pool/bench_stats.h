/* SPDX-License-Identifier: MIT */
/*
 * bench_stats.h: the benchmark's numbers and how they are printed: the
 * perftest-like table, JSON and CSV. Everything in floating point (perftest
 * keeps its latency deviation in an int, so under 1 us it prints 0).
 */
#ifndef BENCH_STATS_H
#define BENCH_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hist.h"

/* Latency of a run, in microseconds, as perftest reports it: the two
 * largest samples are dropped first (when there are more than two). */
struct bench_lat {
	size_t n; /* samples kept */
	double min, max, typical /* median */, avg, stdev, p99, p999;
};

/* Sort \p us (n samples, in microseconds) in place and summarize them.
 * \p as_perftest: t_max, the percentiles and t_stdev as perftest computes
 * them (see bench_stats.c); otherwise the exact figures of the kept samples. */
void bench_lat_summarize(double *us, size_t n, bool as_perftest, struct bench_lat *out);

/* Summarize a histogram of ns (a run by duration, -D): min, max, mean and
 * deviation exact, the median and percentiles from the buckets (hist.h);
 * every sample counts, none is dropped. A value divided by \p scale (2 for
 * half a round trip) is the latency. */
void bench_lat_from_hist(const struct mp_hist *h, unsigned scale, struct bench_lat *out);

/* One connection's share of a bandwidth run with several (-q). */
struct bench_qp {
	uint64_t iterations; /* its messages completed */
	double seconds;      /* from the start to its last completion */
	double bw_avg_mib_s; /* its bytes over its own seconds */
};

/* An offered-load run (-m load): requests scheduled at a fixed rate, each
 * timed from when it was due, not from when it went out. */
struct bench_load {
	double offered_rps, achieved_rps; /* requests per second: asked for, completed */
	uint64_t requests, late;          /* completed; posted BENCH_LATE_US or more after due */
	double p90;                       /* us; the other figures are in bench_row.lat */
};

/* A request posted this long after it was due counts as late: the window
 * was full, or the loop was behind. Its latency still runs from when it
 * was due, so the wait is in the figures either way. */
#define BENCH_LATE_US 50u

/* One row of results: one size of one op in one mode. */
struct bench_row {
	unsigned op, mode;
	uint64_t bytes, iterations;
	unsigned qps, depth;
	double bw_peak_mib_s, bw_avg_mib_s, msg_rate_mpps; /* bandwidth mode */
	struct bench_lat lat;                              /* latency and load modes */
	struct bench_load load;                            /* load mode */
	double cpu_user_s, cpu_sys_s, seconds;
	/* The server's CPU from the run's START to its DONE (it sends them
	 * before its RESULT); negative: not known. */
	double srv_cpu_user_s, srv_cpu_sys_s;
	bool verified;
	const struct mp_hist *hist; /* latency: the samples' histogram, or NULL */
	unsigned hist_scale;        /* its values over this are the latencies */
	const struct bench_qp *per_qp; /* bandwidth with qps > 1: one each, or NULL */
};

/* What every row of a run shares, for the JSON. */
struct bench_run {
	const char *program, *device, *date;
	unsigned op, mode, qps, depth, signal_every, inline_size;
	bool events;
};

#define BENCH_BW_HEADER                                                                            \
	" #bytes  #iterations  BW peak[MiB/sec]  BW average[MiB/sec]  MsgRate[Mpps]  CPU user[s] " \
	" CPU sys[s]  Server CPU[s]"
#define BENCH_LAT_HEADER                                                                           \
	" #bytes  #iterations  t_min[usec]  t_max[usec]  t_typical[usec]  t_avg[usec]  "           \
	"t_stdev[usec]  99% percentile[usec]  99.9% percentile[usec]  CPU user[s]  CPU sys[s]  "    \
	"Server CPU[s]"
#define BENCH_LOAD_HEADER                                                                          \
	" #bytes  offered[req/s]  achieved[req/s]  #requests  late  t_p50[usec]  t_p90[usec]  "    \
	"t_p99[usec]  t_p99.9[usec]  t_max[usec]  CPU user[s]  CPU sys[s]  Server CPU[s]"
#define BENCH_CSV_HEADER                                                                           \
	"op,mode,bytes,iterations,qps,depth,bw_peak_mib_s,bw_avg_mib_s,msg_rate_mpps,t_min_us,"    \
	"t_max_us,t_typical_us,t_avg_us,t_stdev_us,t_p99_us,t_p999_us,cpu_user_s,cpu_sys_s,"       \
	"seconds,verified,srv_cpu_user_s,srv_cpu_sys_s"

/* The table's header for \p mode, and one row under it (with several
 * QPs, a line of their spread below it). "Server CPU" is user + sys. */
void bench_print_header(FILE *f, unsigned mode);
void bench_print_row(FILE *f, const struct bench_row *r);
/* One CSV line for \p r (the header is BENCH_CSV_HEADER). */
void bench_csv_row(FILE *f, const struct bench_row *r);
/* The whole JSON document. Returns 0, or -EIO when writing failed. */
int bench_json_write(FILE *f, const struct bench_run *run, const struct bench_row *rows, size_t n);

#endif /* BENCH_STATS_H */
