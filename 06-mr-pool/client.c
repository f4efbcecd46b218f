/* SPDX-License-Identifier: MIT */
/**
 * \file 06-mr-pool/client.c
 * \brief Chapter 06, the benchmark's client: SEND, WRITE, WRITE WITH IMM or
 *        READ, bandwidth or latency, over one or several connections, with
 *        perftest's flags and tables.
 *
 * What it shows: chapter 05's event loop with a data path made lean for
 * measuring: busy polling of every QP's CQ (the loop is looked at only
 * about once a millisecond, so signals and CM events still come through),
 * a window of work requests posted as chains (one ibv_post_send() per
 * refill), selective signalling, memory from a pool registered once before
 * the clock starts, no allocation, no printing and one clock read per batch
 * of completions in the timed region, and data checked after it.
 *
 *     build/bin/06-mr-pool-client [options] SERVER_ADDRESS
 *
 * The server's address is a positional argument, as in perftest, because
 * -a is perftest's flag for a sweep of sizes. See usage() for the options.
 * This file is the table of contents; the command line is client_options.c,
 * the connections client_conn.c, a size's runs client_runs.c (client.h).
 * Exit status: 0 done and every run verified; 1 a runtime or peer failure,
 * a rejection, or data that differs; 2 bad command line; 3 -m load's 99th
 * percentile above --max-p99 (the run itself went well); 77 no usable RDMA
 * device (none, or an iWARP one: no immediate data for the control messages).
 */
#include "client.h"

static void print_parameters(struct client *cl)
{
	const struct options *o = &cl->o;
	uint32_t first = signal_every(o, 1), last = signal_every(o, largest(o));

	if (o->load) {
		printf("client: %s load, %u QP%s, depth %u, %s schedule, %" PRIu64
		       " requests/s offered, ",
		       bench_op_name(o->op), o->qps, o->qps == 1 ? "" : "s", o->depth,
		       o->poisson ? "poisson" : "fixed", o->rate);
		if (o->duration > 0)
			printf("for %.0f s", o->duration);
		else
			printf("%" PRIu64 " requests", o->iters);
		printf(", inline %u, busy polling\n", o->inline_size);
		return;
	}
	printf("client: %s %s, %u QP%s, depth %u, signal every %u", bench_op_name(o->op),
	       bench_mode_name(o->mode), o->qps, o->qps == 1 ? "" : "s", o->depth, first);
	if (first != last)
		printf(" (%u above %u B, as perftest)", last, BW_SIGNAL_SIZE);
	printf(", inline %u, %s%s%s\n", o->inline_size,
	       o->events ? "completion channel" : "busy polling", o->lend ? " of a lent QP" : "",
	       !o->cycles                    ? ""
	       : o->mode == BENCH_MODE_LAT ? ", pings timed by the cycle counter"
	                                   : ", timed by the cycle counter");
	if (o->inline_size && strncmp(cl->device, "rxe", 3) == 0)
		printf(
		    "client: note: %s is Soft-RoCE; perftest turns inline off there (\"Device not "
		    "recognized to implement inline feature\"): compare with -I 0\n",
		    cl->device);
}

/* [run-all] */
static int run_all_sizes(struct client *cl)
{
	uint32_t list[MAX_ROWS];
	size_t n = sizes(&cl->o, list), i;
	bool all = true;
	int ret;

	print_parameters(cl);
	bench_print_header(stdout, cl->o.load ? BENCH_MODE_LOAD : cl->o.mode);
	for (i = 0; i < n; i++) {
		ret = run_size(cl, list[i], &cl->rows[cl->nrows]);
		if (ret)
			return ret;
		bench_print_row(stdout, &cl->rows[cl->nrows]);
		all &= cl->rows[cl->nrows++].verified;
	}
	if (!all) {
		printf("client: data NOT verified: see above\n");
		return -EBADMSG;
	}
	printf("client: data verified: %s, after each timed run, for %zu size%s\n",
	       cl->o.op == BENCH_OP_READ ? "the server's pattern read back, checked at the client "
	                                   "(initiator)"
	       : bench_op_atomic(cl->o.op)
	           ? "the server's counter fetched atomically, equal to the atomics done"
	       : cl->o.mode == BENCH_MODE_LAT
	           ? "our pattern checked at the server (target) and in its answers here"
	           : "our pattern checked at the server (target)",
	       n, n == 1 ? "" : "s");
	return 0;
}
/* [run-all] */

/* [outputs] */
static int write_outputs(struct client *cl)
{
	struct bench_run run = {.program = PROGRAM,
	                        .device = cl->device ? cl->device : "?",
	                        .date = cl->date,
	                        .op = cl->o.op,
	                        .mode = cl->o.load ? BENCH_MODE_LOAD : cl->o.mode,
	                        .qps = cl->o.qps,
	                        .depth = cl->o.depth,
	                        .signal_every = signal_every(&cl->o, 1),
	                        .inline_size = cl->o.inline_size,
	                        .events = cl->o.events};
	FILE *f;
	size_t i;
	int ret = 0;

	if (cl->o.json) {
		f = fopen(cl->o.json, "w");
		if (!f) {
			rex_errorf("fopen %s: %s", cl->o.json, strerror(errno));
			return -errno;
		}
		ret = bench_json_write(f, &run, cl->rows, cl->nrows);
		if (fclose(f) || ret) {
			rex_errorf("writing %s failed", cl->o.json);
			ret = -EIO;
		}
	}
	if (cl->o.csv) {
		f = fopen(cl->o.csv, "w");
		if (!f) {
			rex_errorf("fopen %s: %s", cl->o.csv, strerror(errno));
			return -errno;
		}
		fprintf(f, "%s\n", BENCH_CSV_HEADER);
		for (i = 0; i < cl->nrows; i++)
			bench_csv_row(f, &cl->rows[i]);
		if (fclose(f)) {
			rex_errorf("writing %s failed", cl->o.csv);
			ret = -EIO;
		}
	}
	return ret;
}
/* [outputs] */

static int allocate_samples(struct client *cl)
{
	const struct options *o = &cl->o;
	time_t now = time(NULL);
	struct tm tm;

	strftime(cl->date, sizeof(cl->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	if (o->load) {
		cl->load_hist = calloc(1, sizeof(*cl->load_hist));
		cl->load_due = calloc((size_t)o->qps * o->depth, sizeof(*cl->load_due));
		if (!cl->load_hist || !cl->load_due)
			goto out_nomem;
		return 0;
	}
	if (o->mode != BENCH_MODE_LAT) {
		cl->marks = calloc(MAX_MARKS, sizeof(*cl->marks));
		if (o->qps > 1)
			cl->per_qp = calloc((size_t)MAX_ROWS * o->qps, sizeof(*cl->per_qp));
		if (!cl->marks || (o->qps > 1 && !cl->per_qp))
			goto out_nomem;
		return 0;
	}
	/* By count: every sample (and a histogram); by duration: the histogram alone. */
	cl->max_samples = o->duration > 0 ? 0 : o->iters < MAX_SAMPLES ? o->iters : MAX_SAMPLES;
	if (cl->max_samples) {
		cl->samples = calloc(cl->max_samples, sizeof(*cl->samples));
		cl->sample_ns = malloc(cl->max_samples * sizeof(*cl->sample_ns));
		if (!cl->samples || !cl->sample_ns)
			goto out_nomem;
		/* Written now, so that the timed loop takes no page fault for it. */
		memset(cl->sample_ns, 0, cl->max_samples * sizeof(*cl->sample_ns));
	}
	cl->hists = calloc(MAX_ROWS, sizeof(*cl->hists));
	if (!cl->hists)
		goto out_nomem;
	return 0;
out_nomem:
	rex_report_errno("calloc", ENOMEM);
	free(cl->marks);
	free(cl->per_qp);
	free(cl->samples);
	free(cl->sample_ns);
	free(cl->load_hist);
	free(cl->load_due);
	cl->marks = NULL;
	cl->per_qp = NULL;
	cl->samples = NULL;
	cl->sample_ns = NULL;
	cl->load_hist = NULL;
	cl->load_due = NULL;
	return -ENOMEM;
}

/* --max-p99: a row whose 99th percentile is above it, said by name. */
static bool above_max(const struct client *cl)
{
	size_t i;
	bool above = false;

	for (i = 0; i < cl->nrows && cl->o.max_p99_us > 0; i++)
		if (cl->rows[i].lat.p99 > cl->o.max_p99_us) {
			printf("client: p99 %.2f us at %.0f requests/s is above --max-p99 %g us\n",
			       cl->rows[i].lat.p99, cl->rows[i].load.offered_rps, cl->o.max_p99_us);
			above = true;
		}
	return above;
}

int main(int argc, char **argv)
{
	struct client cl = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = parse_command_line(&cl.o, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	/* [main] */
	if (create_loop(&cl) || allocate_samples(&cl))
		goto out_destroy_loop;
	ret = connect_all(&cl);
	if (ret == 0) {
		printf("client: %u connection%s to %s port %u established\n", cl.o.qps,
		       cl.o.qps == 1 ? "" : "s", cl.o.server, (unsigned)cl.o.port);
		ret = run_all_sizes(&cl);
		if (ret == 0 || ret == -EBADMSG)
			ret = end_grants(&cl) ? -EIO : ret;
	}
	if (write_outputs(&cl) == 0 && ret == 0)
		status = above_max(&cl) ? EXIT_ABOVE_MAX : REX_EXIT_OK;
	if (disconnect_all(&cl, ret != 0))
		status = REX_EXIT_FAILURE;
	if (release_everything(&cl))
		status = REX_EXIT_FAILURE;
	if (status == REX_EXIT_OK || status == EXIT_ABOVE_MAX)
		printf("client: done\n");
	else if (!cl.iwarp) /* the refusal said why */
		fprintf(stderr, "client: failed\n");
out_destroy_loop:
	if (rex_loop_destroy(cl.loop))
		status = REX_EXIT_FAILURE;
	return cl.iwarp ? REX_EXIT_NO_DEVICE : status;
}
/* [main] */
