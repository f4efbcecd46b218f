/* SPDX-License-Identifier: MIT */
/*
 * client_options.c: 06's client's command line (see client.h): perftest's
 * flags where the idea is the same, checked before anything is created.
 */
#include "client.h"

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [options] SERVER_ADDRESS\n"
	    "Measure SEND, WRITE, WRITE WITH IMM, READ or atomics against 06-mr-pool-server, as\n"
	    "perftest does.\n"
	    "The server's address is an argument, as in perftest: -a is the sweep.\n"
	    "  -p PORT        server port (default %u)\n"
	    "  -o OP          send, write, write_imm, read, or the atomics fadd\n"
	    "                 (FETCH_AND_ADD) and cas (COMPARE_AND_SWAP) (default write)\n"
	    "  -m MODE        bw, lat, or load: requests at --rate, each timed from when it\n"
	    "                 was due (default bw)\n"
	    "  -s SIZE        message size, K/M suffixes (default %u in bw, %u in lat\n"
	    "                 and load; atomics: 8, their only size)\n"
	    "  -a             sweep sizes 2 B .. 8 MiB, powers of two\n"
	    "  --max-size SIZE  stop the sweep at SIZE\n"
	    "  -n ITERATIONS  messages per QP (default %u; send and read %u; lat %u;\n"
	    "                 load: requests in all)\n"
	    "  -D SECONDS     run for a duration instead of -n\n"
	    "  -t DEPTH       work requests in flight per QP, bw (default %u; lat: 1;\n"
	    "                 load: at most, default %u)\n"
	    "  -q QPS         connections, bw and load (default 1)\n"
	    "  -Q N           one signalled completion per N work requests (default %u,\n"
	    "                 1 above %u bytes but in a sweep, as perftest; at most DEPTH;\n"
	    "                 lat: 1)\n"
	    "  -l N           post N work requests per ibv_post_send(), chained (default 1,\n"
	    "                 as perftest: one call, one doorbell, each)\n"
	    "  -I SIZE        inline data up to SIZE bytes (default 0)\n"
	    "  -e             wait on completion channels instead of busy polling\n"
	    "  -w ITERATIONS  warm-up before each timed run (default 0, as perftest)\n"
	    "  --cycles       time the run (each ping, each post) by the CPU's cycle counter,\n"
	    "                 as perftest does, not by the clock (a system call where it\n"
	    "                 has no user-space reading, as in the lab's VM: 0.9 us a read);\n"
	    "                 the client stays on one CPU for each timed run\n"
	    "  --lend         -m lat: post and poll the pings, and take the receives, with the\n"
	    "                 verbs alone, as perftest does, on the QP and CQ the helper lends\n"
	    "                 (rex_svc_conn_lend()), not through its books and callbacks\n"
	    "  --as-perftest  compute the figures as perftest does (t_max, t_stdev, the\n"
	    "                 percentiles' ranks, BW peak): see the 06 page's table\n"
	    "  --end HOW      how our grant of the server's memory ends, after the last run:\n"
	    "                 send-inv (default: our SEND WITH INVALIDATE of its rkey) or\n"
	    "                 server (we say END, the server invalidates it)\n"
	    "  --rate R       -m load: requests per second, all QPs together\n"
	    "  --schedule S   -m load: fixed (default: equal gaps) or poisson (random\n"
	    "                 gaps of that mean, the same ones every run)\n"
	    "  --max-p99 US   -m load: exit 3 when the 99th percentile is above US\n"
	    "                 microseconds\n"
	    "  --json FILE    write the results as JSON\n"
	    "  --csv FILE     write the results as CSV\n"
	    "  -v             debug lines to stderr\n"
	    "  -h, --help     this help\n"
	    "  --version      the version\n"
	    "Latency is timed as perftest does: a sample runs from one ping's post to the\n"
	    "next (the ping's own completion, its answer and the loop), SEND, WRITE and\n"
	    "WRITE WITH IMM half of it, READ and atomics all of it; the two largest\n"
	    "samples are dropped. BW peak is the best rate over any stretch of the run\n"
	    "that carries 1/16 of its bytes and lasts 1/16 of its time (at least the\n"
	    "average); MiB/s are 2^20 bytes per second.\n"
	    "-m load runs for -D seconds (default %u) or -n requests; a request posted\n"
	    "%u us or more after it was due counts as late.\n"
	    "Exit status: 0 done and verified; 1 failed; 2 bad command line; 3 -m load's\n"
	    "99th percentile above --max-p99; 77 no usable RDMA device.\n",
	    PROGRAM, (unsigned)REX_DEFAULT_PORT, BW_SIZE, LAT_SIZE, BW_ITERS, BW_SEND_ITERS,
	    LAT_ITERS, BW_DEPTH, LOAD_DEPTH, BW_SIGNAL, BW_SIGNAL_SIZE, LOAD_DURATION,
	    BENCH_LATE_US);
}

static int bad_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int bad_usage(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", PROGRAM);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	usage(stderr);
	return REX_OPTIONS_BAD;
}

/* The common hints, but this client names its server without -a. */
static const char *client_hint(const char *call, int err)
{
	if (err == ECONNREFUSED)
		return "compare SERVER_ADDRESS and -p with the address and port in the server's "
		       "\"listening\" line";
	return rex_options_hint(call, err);
}

/* [parse] */
int parse_command_line(struct options *o, int argc, char **argv)
{
	static const struct option longs[] = {{"json", required_argument, NULL, 'J'},
	                                      {"csv", required_argument, NULL, 'C'},
	                                      {"max-size", required_argument, NULL, 'M'},
	                                      {"as-perftest", no_argument, NULL, 'P'},
	                                      {"end", required_argument, NULL, 'E'},
	                                      {"help", no_argument, NULL, 'h'},
	                                      {"rate", required_argument, NULL, 'R'},
	                                      {"schedule", required_argument, NULL, 'S'},
	                                      {"max-p99", required_argument, NULL, 'X'},
	                                      {"cycles", no_argument, NULL, 'Y'},
	                                      {"lend", no_argument, NULL, 'L'},
	                                      {"version", no_argument, NULL, 'V'},
	                                      {NULL, 0, NULL, 0}};
	char flag[3] = "-?";
	uint64_t v;
	int opt, op;

	rex_error_set_hint_hook(client_hint);
	*o = (struct options){
	    .port = REX_DEFAULT_PORT, .op = BENCH_OP_WRITE, .qps = 1, .max_size = SWEEP_MAX};
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":p:o:m:s:an:D:t:q:Q:l:I:ew:vh", longs, NULL)) !=
	       -1) {
		flag[1] = (char)(opt == ':' || opt == '?' ? optopt : opt);
		switch (opt) {
		case 'p':
			if (rex_parse_uint(optarg, 1, 65535, &v))
				return bad_usage("-p %s: out of range (1..65535)", optarg);
			o->port = (uint16_t)v;
			break;
		case 'o':
			op = bench_op_parse(optarg);
			if (op < 0)
				return bad_usage(
				    "-o %s: not one of send, write, write_imm, read, fadd, cas",
				    optarg);
			o->op = (unsigned)op;
			break;
		case 'm':
			if (strcmp(optarg, "bw") && strcmp(optarg, "lat") && strcmp(optarg, "load"))
				return bad_usage("-m %s: not one of bw, lat, load", optarg);
			o->load = strcmp(optarg, "load") == 0;
			/* The server's side of a load run is a bandwidth run's. */
			o->mode = strcmp(optarg, "lat") ? BENCH_MODE_BW : BENCH_MODE_LAT;
			break;
		case 'R':
			if (rex_parse_uint(optarg, 1, 100000000, &v))
				return bad_usage(
				    "--rate %s: out of range (1..100000000 per second)", optarg);
			o->rate = v;
			break;
		case 'S':
			if (strcmp(optarg, "fixed") != 0 && strcmp(optarg, "poisson") != 0)
				return bad_usage("--schedule %s: not one of fixed, poisson",
				                 optarg);
			o->poisson = strcmp(optarg, "poisson") == 0;
			o->schedule_set = true;
			break;
		case 'X': {
			char *end;

			errno = 0;
			o->max_p99_us = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->max_p99_us > 0) ||
			    o->max_p99_us > 1e9)
				return bad_usage("--max-p99 %s: not a number of microseconds in "
				                 "(0, 1e9]",
				                 optarg);
			break;
		}
		case 's':
		case 'M':
			if (rex_parse_size(optarg, 1, BENCH_MAX_SIZE, &v))
				return bad_usage(opt == 's'
				                     ? "-s %s: not a size in 1..128M"
				                     : "--max-size %s: not a size in 1..128M",
				                 optarg);
			if (opt == 's') {
				o->size = v;
				o->size_set = true;
			} else {
				o->max_size = v;
			}
			break;
		case 'a':
			o->sweep = true;
			break;
		case 'n':
		case 'w':
			if (rex_parse_uint(optarg, opt == 'n' ? 1 : 0, 100000000, &v))
				return bad_usage(opt == 'n' ? "-n %s: out of range (1..100000000)"
				                            : "-w %s: out of range (0..100000000)",
				                 optarg);
			if (opt == 'n') {
				o->iters = v;
				o->iters_set = true;
			} else {
				o->warmup = v;
				o->warmup_set = true;
			}
			break;
		case 'D':
			if (rex_parse_uint(optarg, 1, 3600, &v))
				return bad_usage("-D %s: out of range (1..3600 seconds)", optarg);
			o->duration = (double)v;
			break;
		case 't':
			if (rex_parse_uint(optarg, 1, BENCH_MAX_DEPTH, &v))
				return bad_usage("-t %s: out of range (1..4096)", optarg);
			o->depth = (unsigned)v;
			o->depth_set = true;
			break;
		case 'q':
			if (rex_parse_uint(optarg, 1, BENCH_MAX_QPS, &v))
				return bad_usage("-q %s: out of range (1..64)", optarg);
			o->qps = (unsigned)v;
			break;
		case 'Q':
			if (rex_parse_uint(optarg, 1, BENCH_MAX_DEPTH, &v))
				return bad_usage("-Q %s: out of range (1..4096)", optarg);
			o->sig = (unsigned)v;
			o->sig_set = true;
			break;
		case 'l':
			if (rex_parse_uint(optarg, 1, BENCH_MAX_DEPTH, &v))
				return bad_usage("-l %s: out of range (1..4096)", optarg);
			o->post_list = (unsigned)v;
			break;
		case 'E':
			if (strcmp(optarg, "send-inv") != 0 && strcmp(optarg, "server") != 0)
				return bad_usage("--end %s: not one of send-inv, server", optarg);
			o->end_by_server = strcmp(optarg, "server") == 0;
			break;
		case 'P':
			o->as_perftest = true;
			break;
		case 'Y':
			o->cycles = true;
			break;
		case 'L':
			o->lend = true;
			break;
		case 'I':
			if (rex_parse_size(optarg, 0, 4096, &v))
				return bad_usage("-I %s: not a size in 0..4096", optarg);
			o->inline_size = (unsigned)v;
			break;
		case 'e':
			o->events = true;
			break;
		case 'J':
			o->json = optarg;
			break;
		case 'C':
			o->csv = optarg;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return REX_OPTIONS_HELP;
		case 'V':
			rex_options_version(PROGRAM, stdout);
			return REX_OPTIONS_HELP;
		case ':':
			return bad_usage("%s: needs a value", optopt ? flag : argv[optind - 1]);
		default:
			return bad_usage("%s: unknown option", optopt ? flag : argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return bad_usage("missing SERVER_ADDRESS%s", " (the server to connect to)");
	if (optind + 1 < argc)
		return bad_usage("%s: unexpected argument (one SERVER_ADDRESS)", argv[optind + 1]);
	o->server = argv[optind];
	/* [checks] */
	if (o->iters_set && o->duration > 0)
		return bad_usage("-n and -D: %s", "give one of them");
	if (o->sweep && o->size_set)
		return bad_usage("-a and -s: %s", "give one of them");
	if (bench_op_atomic(o->op) && ((o->size_set && o->size != BENCH_ATOMIC_SIZE) || o->sweep))
		return bad_usage("-o %s: an atomic works on 8 bytes: no -s or -a",
		                 bench_op_name(o->op));
	if (o->mode == BENCH_MODE_LAT && o->qps > 1)
		return bad_usage("-q: latency runs on one QP (as perftest)%s", "");
	if (o->mode == BENCH_MODE_LAT && o->depth_set && o->depth != 1)
		return bad_usage("-t: latency keeps one message in flight%s", "");
	if (o->cycles && (o->load || !HAVE_CYCLES))
		return bad_usage("--cycles: %s", HAVE_CYCLES ? "-m load keeps its schedule by the clock"
		                                             : "no cycle counter known on this CPU "
		                                               "(x86-64 and aarch64 only)");
	if (o->lend && (o->mode != BENCH_MODE_LAT || o->load || o->events))
		return bad_usage("--lend: it lends the QP to latency pings, busy-polled: -m lat, "
		                 "no -e%s",
		                 "");
	if (!o->load && (o->rate || o->schedule_set || o->max_p99_us > 0))
		return bad_usage("--rate, --schedule and --max-p99 go with -m load%s", "");
	if (o->load && !o->rate)
		return bad_usage("-m load: give --rate, the requests per second%s", "");
	if (o->load && (o->sweep || o->sig_set || o->post_list > 1 || o->events || o->warmup_set ||
	                o->as_perftest || o->csv))
		return bad_usage("-m load: one size, every request signalled and posted alone, "
		                 "busy polling: no -a, -Q, -l, -e, -w, --as-perftest or --csv%s",
		                 "");
	if (o->mode == BENCH_MODE_LAT && o->events && o->op == BENCH_OP_WRITE)
		return bad_usage("-e: WRITE latency watches memory, not completions; use -o "
		                 "write_imm%s",
		                 "");
	/* [checks] */
	/* perftest's defaults where nothing was given. */
	if (o->load) {
		o->sig = 1;
		o->sig_set = true;
		if (!o->depth_set)
			o->depth = LOAD_DEPTH;
		if (!o->iters_set && o->duration == 0)
			o->duration = LOAD_DURATION;
	}
	if (!o->size_set)
		o->size = bench_op_atomic(o->op)                 ? BENCH_ATOMIC_SIZE
		          : o->mode == BENCH_MODE_BW && !o->load ? BW_SIZE
		                                                 : LAT_SIZE;
	if (!o->iters_set)
		o->iters = o->mode == BENCH_MODE_LAT                                ? LAT_ITERS
		           : o->op != BENCH_OP_WRITE && o->op != BENCH_OP_WRITE_IMM ? BW_SEND_ITERS
		                                                                    : BW_ITERS;
	if (o->mode == BENCH_MODE_LAT)
		o->depth = 1;
	else if (!o->depth_set && !o->load)
		o->depth = BW_DEPTH;
	if (!o->post_list)
		o->post_list = 1;
	if (o->post_list > o->depth)
		return bad_usage("-l %u: more than the %u work requests in flight (-t)",
		                 o->post_list, o->depth);
	if (o->mode == BENCH_MODE_LAT && o->iters > MAX_SAMPLES)
		return bad_usage("-n: latency keeps at most 4194304 samples%s", "");
	if (o->sweep && o->max_size < SWEEP_MIN)
		return bad_usage("--max-size %s: below the sweep's 2 bytes", "");
	return REX_OPTIONS_OK;
}
/* [parse] */

/* The sizes of the run, and the largest. */
size_t sizes(const struct options *o, uint32_t *out)
{
	size_t n = 0;
	uint64_t s;

	if (!o->sweep) {
		out[n++] = (uint32_t)o->size;
		return n;
	}
	for (s = SWEEP_MIN; s <= SWEEP_MAX && s <= o->max_size; s *= 2)
		out[n++] = (uint32_t)s;
	return n;
}

uint32_t largest(const struct options *o)
{
	uint32_t list[MAX_ROWS];
	size_t n = sizes(o, list); /* at least one */

	return list[n - 1];
}

/* Selective signalling for size \p size: -Q, or perftest's default. */
uint32_t signal_every(const struct options *o, uint32_t size)
{
	uint32_t sig = o->sig_set ? o->sig : size > BW_SIGNAL_SIZE && !o->sweep ? 1 : BW_SIGNAL;

	if (o->mode == BENCH_MODE_LAT)
		return 1;
	return sig < o->depth ? sig : o->depth;
}
