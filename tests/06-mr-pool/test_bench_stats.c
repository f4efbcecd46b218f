/* SPDX-License-Identifier: MIT */
/*
 * bench_stats: latency as perftest reports it (two largest samples dropped,
 * median, nearest-rank 99% and 99.9%), a standard deviation under 1 us that
 * is not truncated, and the table, CSV and JSON lines with every field.
 */
#include <stdlib.h>
#include <string.h>

#include "bench_stats.h"
#include "bench_wire.h"
#include "check.h"

#define CHECK_NEAR(a, b) CHECK_INT_EQ((long long)((a)*1e6 + 0.5), (long long)((b)*1e6 + 0.5))

static char *render(void (*fn)(FILE *, const struct bench_row *), const struct bench_row *r)
{
	static char text[1024];
	FILE *f = fmemopen(text, sizeof(text), "w");

	fn(f, r);
	fclose(f);
	return text;
}

int main(void)
{
	double s[] = {1.0, 1.5, 1.2, 90.0, 1.1, 50.0, 1.3};
	double many[2002];
	struct bench_lat lat;
	struct bench_row bw = {.op = BENCH_OP_WRITE,
	                       .mode = BENCH_MODE_BW,
	                       .bytes = 65536,
	                       .iterations = 5000,
	                       .qps = 1,
	                       .depth = 128,
	                       .bw_peak_mib_s = 70.5,
	                       .bw_avg_mib_s = 68.25,
	                       .msg_rate_mpps = 0.001092,
	                       .cpu_user_s = 1.5,
	                       .cpu_sys_s = 0.25,
	                       .seconds = 4.6,
	                       .srv_cpu_user_s = 0.5,
	                       .srv_cpu_sys_s = 0.125,
	                       .verified = true};
	struct bench_row lr = {.op = BENCH_OP_READ,
	                       .mode = BENCH_MODE_LAT,
	                       .bytes = 2,
	                       .iterations = 1000,
	                       .qps = 1,
	                       .depth = 1,
	                       .srv_cpu_user_s = -1,
	                       .srv_cpu_sys_s = -1};
	struct bench_qp qps[3] = {{.iterations = 900, .seconds = 2, .bw_avg_mib_s = 28.125},
	                          {.iterations = 1000, .seconds = 2, .bw_avg_mib_s = 31.25},
	                          {.iterations = 1000, .seconds = 1.9, .bw_avg_mib_s = 32.5}};
	struct mp_hist *hist = calloc(1, sizeof(*hist));
	struct bench_run run = {.program = "06-mr-pool-client",
	                        .device = "rxe0",
	                        .date = "2026-01-01T00:00:00Z",
	                        .op = BENCH_OP_WRITE,
	                        .mode = BENCH_MODE_BW,
	                        .qps = 1,
	                        .depth = 128,
	                        .signal_every = 100};
	char doc[4096], *line;
	FILE *f;
	int i;

	/* 90 and 50 are dropped: 1.0 1.1 1.2 1.3 1.5 remain. */
	bench_lat_summarize(s, 7, false, &lat);
	CHECK_INT_EQ(lat.n, 5);
	CHECK_NEAR(lat.min, 1.0);
	CHECK_NEAR(lat.max, 1.5);
	CHECK_NEAR(lat.typical, 1.2);
	CHECK_NEAR(lat.avg, 1.22);
	/* sqrt(((.22)^2 + (.12)^2 + (.02)^2 + (.08)^2 + (.28)^2) / 5) = 0.1720465 */
	CHECK_INT_EQ((long long)(lat.stdev * 1e4), 1720);
	CHECK_NEAR(lat.p99, 1.5);

	/* 2000 kept samples 1..2000 (the two largest, 5000, dropped). */
	for (i = 0; i < 2000; i++)
		many[i] = 2000 - i;
	many[2000] = many[2001] = 5000;
	bench_lat_summarize(many, 2002, false, &lat);
	CHECK_INT_EQ(lat.n, 2000);
	CHECK_NEAR(lat.p99, 1980);
	CHECK_NEAR(lat.p999, 1998);
	CHECK_NEAR(lat.typical, 1000.5);

	/* --as-perftest: 1..10, 9 and 10 dropped. t_max is 9 (the larger
	 * dropped one, as perftest prints it); 99% and 99.9% are at index
	 * ceil(p x 8) = 8, also 9; the stdev sums deviations from 4.5 cut to
	 * whole us (3 2 1 0 0 -1 -2 -3): sqrt(28 / 8). Min, median and mean are
	 * the exact ones. */
	for (i = 0; i < 10; i++)
		many[i] = 10 - i;
	bench_lat_summarize(many, 10, true, &lat);
	CHECK_INT_EQ(lat.n, 8);
	CHECK_NEAR(lat.min, 1);
	CHECK_NEAR(lat.max, 9);
	CHECK_NEAR(lat.typical, 4.5);
	CHECK_NEAR(lat.avg, 4.5);
	CHECK_NEAR(lat.p99, 9);
	CHECK_NEAR(lat.p999, 9);
	CHECK_INT_EQ((long long)(lat.stdev * 1e4), 18708);
	bench_lat_summarize(many, 10, false, &lat); /* the exact ones, for contrast */
	CHECK_NEAR(lat.max, 8);
	CHECK_NEAR(lat.p99, 8);
	CHECK_INT_EQ((long long)(lat.stdev * 1e4), 22912);

	/* Two samples: nothing dropped. None: zeros. */
	bench_lat_summarize(s, 2, false, &lat);
	CHECK_INT_EQ(lat.n, 2);
	bench_lat_summarize(s, 0, false, &lat);
	CHECK_INT_EQ(lat.n, 0);
	CHECK_NEAR(lat.avg, 0);

	/* The table. */
	line = render(bench_print_row, &bw);
	CHECK_STR_CONTAINS(line, " 65536    5000         70.50             68.25                "
	                         "0.001092       1.500        0.250       0.625\n");
	/* Several QPs: their spread on a line of its own, under the row. */
	bw.qps = 3;
	bw.per_qp = qps;
	line = render(bench_print_row, &bw);
	CHECK_STR_CONTAINS(line, "0.625\n   per QP [MiB/sec]: slowest 28.12 (QP 0, 900 messages), "
	                         "fastest 32.50 (QP 2, 1000 messages), spread 15.6%\n");
	bw.qps = 1;
	bw.per_qp = NULL;
	lr.lat = (struct bench_lat){.n = 998,
	                            .min = 11.5,
	                            .max = 40,
	                            .typical = 12.25,
	                            .avg = 12.5,
	                            .stdev = 0.75,
	                            .p99 = 20,
	                            .p999 = 35};
	line = render(bench_print_row, &lr);
	CHECK_STR_CONTAINS(line, " 2        1000         11.50        40.00        12.25");
	CHECK_STR_CONTAINS(line, "0.75");
	CHECK_STR_CONTAINS(line, "0.000       -\n"); /* the server's CPU not known */

	/* CSV: 22 fields, the other mode's empty, an unknown server CPU too. */
	line = render(bench_csv_row, &bw);
	CHECK_STR_EQ(line, "write,bw,65536,5000,1,128,70.5,68.25,0.001092,,,,,,,,1.500000,"
	                   "0.250000,4.600000,true,0.500000,0.125000\n");
	line = render(bench_csv_row, &lr);
	CHECK_STR_EQ(line, "read,lat,2,1000,1,1,,,,11.500,40.000,12.250,12.500,0.750,20.000,"
	                   "35.000,0.000000,0.000000,0.000000,false,,\n");

	/* JSON: quoted keys, every field. */
	f = fmemopen(doc, sizeof(doc), "w");
	CHECK_INT_EQ(bench_json_write(f, &run, &bw, 1), 0);
	fclose(f);
	CHECK_STR_CONTAINS(doc,
	                   "{\"program\": \"06-mr-pool-client\", \"date\": "
	                   "\"2026-01-01T00:00:00Z\", \"device\": \"rxe0\", \"op\": \"write\", "
	                   "\"mode\": \"bw\", \"qps\": 1, \"depth\": 128, \"signal_every\": 100, "
	                   "\"inline\": 0, \"polling\": \"busy\", \"results\": [");
	CHECK_STR_CONTAINS(doc, "{\"bytes\": 65536, \"iterations\": 5000, \"bw_peak_mib_s\": 70.5, "
	                        "\"bw_avg_mib_s\": 68.25, \"msg_rate_mpps\": 0.001092, "
	                        "\"cpu_user_s\": 1.500000, \"cpu_sys_s\": 0.250000, "
	                        "\"srv_cpu_user_s\": 0.500000, \"srv_cpu_sys_s\": 0.125000, "
	                        "\"seconds\": 4.600000, \"verified\": true}");
	CHECK_STR_CONTAINS(doc, "\n]}\n");

	/* JSON with per-QP figures, and a latency row with its histogram
	 * (half round trips: scale 2) and no server CPU. */
	bw.qps = 3;
	bw.per_qp = qps;
	f = fmemopen(doc, sizeof(doc), "w");
	CHECK_INT_EQ(bench_json_write(f, &run, &bw, 1), 0);
	fclose(f);
	CHECK_STR_CONTAINS(doc, "\"per_qp\": [{\"qp\": 0, \"iterations\": 900, \"seconds\": "
	                        "2.000000, \"bw_avg_mib_s\": 28.125}, {\"qp\": 1, ");
	CHECK_STR_CONTAINS(doc, "{\"qp\": 2, \"iterations\": 1000, \"seconds\": 1.900000, "
	                        "\"bw_avg_mib_s\": 32.5}], \"seconds\"");
	/* A stalled run's figure (4 bytes x 200 in 2.3 s) keeps its digits: at
	 * three decimals it read as 0, and "more than 0" failed. */
	qps[1].bw_avg_mib_s = 0.000331;
	f = fmemopen(doc, sizeof(doc), "w");
	CHECK_INT_EQ(bench_json_write(f, &run, &bw, 1), 0);
	fclose(f);
	CHECK_STR_CONTAINS(doc, "\"seconds\": 2.000000, \"bw_avg_mib_s\": 0.000331}");
	qps[1].bw_avg_mib_s = 31.25;
	mp_hist_add(hist, 23000);
	mp_hist_add(hist, 23000);
	mp_hist_add(hist, 100);
	lr.hist = hist;
	lr.hist_scale = 2;
	run.mode = BENCH_MODE_LAT;
	f = fmemopen(doc, sizeof(doc), "w");
	CHECK_INT_EQ(bench_json_write(f, &run, &lr, 1), 0);
	fclose(f);
	CHECK_STR_CONTAINS(doc, "\"srv_cpu_user_s\": null, \"srv_cpu_sys_s\": null, ");
	/* 100 ns is in [64, 128): buckets of 1 ns; 23000 in [16384, 32768): of 256. */
	CHECK_STR_CONTAINS(doc, "\"histogram\": {\"unit\": \"ns\", \"scale\": 2, "
	                        "\"sub_buckets\": 64, \"n\": 3, \"min\": 100, \"max\": 23000, "
	                        "\"buckets\": [[100, 100, 1], "
	                        "[22784, 23039, 2]]}, ");
	/* The row from it: exact min, max and mean; the median from its bucket
	 * (its upper edge, but not above the maximum), over the scale. */
	bench_lat_from_hist(hist, 2, &lat);
	CHECK_INT_EQ(lat.n, 3);
	CHECK_NEAR(lat.min, 0.05);
	CHECK_NEAR(lat.max, 11.5);
	CHECK_NEAR(lat.typical, 11.5);
	CHECK_NEAR(lat.avg, (23000 * 2 + 100) / 3.0 / 2000);
	free(hist);
	return check_finish();
}
