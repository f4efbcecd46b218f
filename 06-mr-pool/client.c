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
 * Exit status: 0 done and every run verified; 1 a runtime or peer failure,
 * a rejection, or data that differs; 2 bad command line; 77 no RDMA device.
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_aconn.h"
#include "bench_stats.h"
#include "bench_wire.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_loop.h"
#include "rex_options.h"
#include "rex_pool.h"

/* [constants] */
#define PROGRAM "06-mr-pool-client"

/* perftest's defaults (docs: benchmarks.md). */
#define BW_SIZE        65536u
#define LAT_SIZE       2u
#define BW_ITERS       5000u
#define BW_SEND_ITERS  1000u
#define LAT_ITERS      1000u
#define BW_DEPTH       128u
#define BW_SIGNAL      100u  /* one signalled completion per 100 work requests ... */
#define BW_SIGNAL_SIZE 8192u /* ... up to 8 KiB; above, every one (as perftest) */
#define LAT_WARMUP     100u
/* Bandwidth warm-up: DEPTH messages, but no more than this many bytes, so a
 * sweep's large sizes do not spend more time warming up than measuring. */
#define BW_WARMUP_BYTES (8u << 20)
#define SWEEP_MIN       2u
#define SWEEP_MAX       (8u << 20)
#define MAX_ROWS        32
/* Latency samples kept, 8 bytes each (32 MiB). */
#define MAX_SAMPLES  (4u << 20)
#define CLIENT_RECVS 16 /* control messages and latency answers */
/* The loop (signals, CM events, deadlines) is looked at this often while busy-polling. */
#define LOOK_AT_LOOP_NS 1000000ull
/* A connection that completes nothing for this long is given up. */
#define STALL_NS        5000000000ull
#define CTRL_TIMEOUT_MS 10000 /* a control answer (READY, RESULT) */
#define REJ_NO_LISTENER 8
#define REJ_BY_SERVER   28
/* [constants] */

struct options {
	const char *server;
	uint16_t port;
	unsigned op, mode;
	uint64_t size, max_size, iters, warmup;
	double duration;
	unsigned depth, qps, sig, inline_size;
	bool sweep, events, verbose, size_set, iters_set, depth_set, sig_set, warmup_set;
	const char *json, *csv;
};

struct client;

/* One connection of the run. */
struct qp {
	struct rex_aconn conn; /* first: the connection's callbacks get &conn */
	struct client *cl;
	unsigned index;
	struct bench_accept peer;
	struct rex_pool *pool;     /* its device's */
	struct rex_pool_buf *buf;  /* its buffer from the pool, until it is released */
	uint8_t *mem, *dest; /* buf->addr; dest: where answers land (latency) */
	struct ibv_sge recv_sge;
	struct ibv_send_wr *wr; /* depth prebuilt work requests, chained */
	struct ibv_sge *sge;
	uint64_t base;                 /* sq_posted when the run began */
	uint64_t posted, done, target; /* data work requests of this run */
	uint64_t answers;              /* latency answers received in this size's runs */
	bool ready, result_in, released;
	uint32_t result;
};

enum phase { PHASE_CONTROL, PHASE_BW };

struct client {
	struct options o;
	struct rex_loop *loop;
	struct rdma_event_channel *channel;
	struct addrinfo *server;
	struct rex_aconn_devs devices;
	struct qp *qps;
	unsigned open, established;
	bool stopping, broken;
	enum phase phase;
	uint32_t size, sig;
	unsigned send_flags;
	uint64_t bytes_done; /* of the run, all QPs */
	uint64_t pings;      /* latency pings of this size, warm-up included: the tags */
	bool progress;       /* a batch of completions since last looked */
	double *samples;
	size_t max_samples;
	struct bw_mark *marks; /* bandwidth: progress over the timed run, for BW peak */
	size_t nmarks, mark_stride, mark_skip;
	struct bench_row rows[MAX_ROWS];
	size_t nrows;
	char date[32];
	const char *device;
};

/* A moment of a bandwidth run: the time, and the bytes completed by then. */
struct bw_mark {
	uint64_t t, bytes;
};
/* Marks kept per run (16 bytes each). When full, every second one is
 * dropped and from then on only every second batch is marked: a run of any
 * length fits, with a resolution of 1/MAX_MARKS of it or better. */
#define MAX_MARKS 65536
/* BW peak is the best rate over any stretch of the run that carries at
 * least this share of its bytes: short enough to see a faster phase, long
 * enough that a burst of completions that came in together is not a peak. */
#define PEAK_SHARE 16

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [options] SERVER_ADDRESS\n"
	    "Measure SEND, WRITE, WRITE WITH IMM or READ against 06-mr-pool-server, as perftest.\n"
	    "The server's address is an argument, as in perftest: -a is the sweep.\n"
	    "  -p PORT        server port (default %u)\n"
	    "  -o OP          send, write, write_imm or read (default write)\n"
	    "  -m MODE        bw or lat (default bw)\n"
	    "  -s SIZE        message size, K/M suffixes (default %u in bw, %u in lat)\n"
	    "  -a             sweep sizes 2 B .. 8 MiB, powers of two\n"
	    "  --max-size SIZE  stop the sweep at SIZE\n"
	    "  -n ITERATIONS  messages per QP (default %u, send %u, lat %u)\n"
	    "  -D SECONDS     run for a duration instead of -n\n"
	    "  -t DEPTH       work requests in flight per QP, bw (default %u; lat: 1)\n"
	    "  -q QPS         connections, bw only (default 1)\n"
	    "  -Q N           one signalled completion per N work requests (default %u,\n"
	    "                 1 above %u bytes, as perftest; at most DEPTH; lat: 1)\n"
	    "  -I SIZE        inline data up to SIZE bytes (default 0)\n"
	    "  -e             wait on completion channels instead of busy polling\n"
	    "  -w ITERATIONS  warm-up before each timed run (default in bw: DEPTH messages,\n"
	    "                 at most 8 MiB of them; in lat: %u)\n"
	    "  --json FILE    write the results as JSON\n"
	    "  --csv FILE     write the results as CSV\n"
	    "  -v             debug lines to stderr\n"
	    "  -h             this help\n"
	    "Latency is reported as perftest does: SEND, WRITE and WRITE WITH IMM are half\n"
	    "the round trip of a ping-pong, READ the full round trip; the two largest\n"
	    "samples are dropped. BW peak is the best rate over any stretch of the run that\n"
	    "carries 1/16 of its bytes (at least the average); MiB/s are 2^20 bytes per second.\n",
	    PROGRAM, (unsigned)REX_DEFAULT_PORT, BW_SIZE, LAT_SIZE, BW_ITERS, BW_SEND_ITERS, LAT_ITERS,
	    BW_DEPTH, BW_SIGNAL, BW_SIGNAL_SIZE, LAT_WARMUP);
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

/* [parse] */
static int parse_command_line(struct options *o, int argc, char **argv)
{
	static const struct option longs[] = {{"json", required_argument, NULL, 'J'},
	                                      {"csv", required_argument, NULL, 'C'},
	                                      {"max-size", required_argument, NULL, 'M'},
	                                      {"help", no_argument, NULL, 'h'},
	                                      {NULL, 0, NULL, 0}};
	char flag[3] = "-?";
	uint64_t v;
	int opt, op;

	rex_error_set_hint_hook(rex_options_hint);
	*o = (struct options){
	    .port = REX_DEFAULT_PORT, .op = BENCH_OP_WRITE, .qps = 1, .max_size = SWEEP_MAX};
	opterr = 0;
	optind = 1;
	while ((opt = getopt_long(argc, argv, ":p:o:m:s:an:D:t:q:Q:I:ew:vh", longs, NULL)) != -1) {
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
				return bad_usage("-o %s: not one of send, write, write_imm, read",
				                 optarg);
			o->op = (unsigned)op;
			break;
		case 'm':
			if (strcmp(optarg, "bw") && strcmp(optarg, "lat"))
				return bad_usage("-m %s: not one of bw, lat", optarg);
			o->mode = strcmp(optarg, "bw") ? BENCH_MODE_LAT : BENCH_MODE_BW;
			break;
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
	if (o->mode == BENCH_MODE_LAT && o->qps > 1)
		return bad_usage("-q: latency runs on one QP (as perftest)%s", "");
	if (o->mode == BENCH_MODE_LAT && o->depth_set && o->depth != 1)
		return bad_usage("-t: latency keeps one message in flight%s", "");
	if (o->mode == BENCH_MODE_LAT && o->events && o->op == BENCH_OP_WRITE)
		return bad_usage("-e: WRITE latency watches memory, not completions; use -o "
		                 "write_imm%s",
		                 "");
	/* [checks] */
	/* perftest's defaults where nothing was given. */
	if (!o->size_set)
		o->size = o->mode == BENCH_MODE_BW ? BW_SIZE : LAT_SIZE;
	if (!o->iters_set)
		o->iters = o->mode == BENCH_MODE_LAT ? LAT_ITERS
		           : o->op == BENCH_OP_SEND  ? BW_SEND_ITERS
		                                     : BW_ITERS;
	if (o->mode == BENCH_MODE_LAT)
		o->depth = 1;
	else if (!o->depth_set)
		o->depth = BW_DEPTH;
	if (!o->warmup_set)
		o->warmup = o->mode == BENCH_MODE_LAT ? LAT_WARMUP : o->depth;
	if (o->mode == BENCH_MODE_LAT && o->iters > MAX_SAMPLES)
		return bad_usage("-n: latency keeps at most 4194304 samples%s", "");
	if (o->sweep && o->max_size < SWEEP_MIN)
		return bad_usage("--max-size %s: below the sweep's 2 bytes", "");
	return REX_OPTIONS_OK;
}
/* [parse] */

/* The sizes of the run, and the largest. */
static size_t sizes(const struct options *o, uint32_t *out)
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

static uint32_t largest(const struct options *o)
{
	uint32_t list[MAX_ROWS];
	size_t n = sizes(o, list); /* at least one */

	return list[n - 1];
}

/* Selective signalling for size \p size: -Q, or perftest's default. */
static uint32_t signal_every(const struct options *o, uint32_t size)
{
	uint32_t sig = o->sig_set ? o->sig : size > BW_SIGNAL_SIZE ? 1 : BW_SIGNAL;

	if (o->mode == BENCH_MODE_LAT)
		return 1;
	return sig < o->depth ? sig : o->depth;
}

static bool all_established(const struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (cl->qps[i].conn.state != REX_STATE_ESTABLISHED)
			return false;
	return true;
}

static void close_all(struct client *cl, bool failed)
{
	unsigned i;

	for (i = 0; cl->qps && i < cl->o.qps; i++)
		if (cl->qps[i].conn.id && !cl->qps[i].released)
			rex_aconn_close(&cl->qps[i].conn, failed);
}

static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct client *cl = arg;

	(void)loop;
	if (cl->stopping)
		_exit(REX_EXIT_FAILURE);
	cl->stopping = true;
	cl->broken = true;
	fprintf(stderr, "client: %s: stopping\n", signo == SIGINT ? "SIGINT" : "SIGTERM");
	close_all(cl, true);
}

/* [refill] */
/* Keep the window full: post what it has room for as one chain, one
 * doorbell. Every sig-th work request is signalled, and the run's last. */
static int refill(struct qp *q)
{
	struct client *cl = q->cl;
	uint64_t room = cl->o.depth - (q->posted - q->done), left = q->target - q->posted;
	uint64_t k = room < left ? room : left, i, j;
	int ret;

	if (k == 0)
		return 0;
	for (i = 0; i < k; i++) {
		j = q->posted + i + 1;
		q->wr[i].send_flags =
		    cl->send_flags | (j % cl->sig == 0 || j == q->target ? IBV_SEND_SIGNALED : 0);
	}
	q->wr[k - 1].next = NULL;
	ret = rex_aconn_post_send(&q->conn, q->wr); /* numbers each */
	q->wr[k - 1].next = k < cl->o.depth ? &q->wr[k] : NULL;
	if (ret)
		return ret;
	q->posted += k;
	return 0;
}
/* [refill] */

/* [step] */
static void handle_recv(struct qp *q, const struct ibv_wc *wc)
{
	struct client *cl = q->cl;
	uint32_t imm = be32toh(wc->imm_data);
	bool lat = cl->o.mode == BENCH_MODE_LAT;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		if (lat && cl->o.op == BENCH_OP_WRITE_IMM &&
		    bench_ctrl_type(imm) == BENCH_CTRL_DATA) {
			q->answers++;
			return;
		}
	} else if (wc->wc_flags & IBV_WC_WITH_IMM) {
		if (bench_ctrl_type(imm) == BENCH_CTRL_READY && !q->ready) {
			q->ready = true;
			return;
		}
		if (bench_ctrl_type(imm) == BENCH_CTRL_RESULT && !q->result_in) {
			q->result = bench_ctrl_value(imm);
			q->result_in = true;
			return;
		}
	} else if (lat && cl->o.op == BENCH_OP_SEND && wc->byte_len == cl->size) {
		q->answers++;
		return;
	}
	fprintf(stderr,
	        "client: %s: unexpected message from the server (opcode %d, %u bytes, "
	        "immediate 0x%08x)\n",
	        q->conn.name, wc->opcode, wc->byte_len, imm);
	rex_aconn_close(&q->conn, true);
}

/* Take the QP's completions; in a bandwidth run, count and refill. */
static void qp_step(struct qp *q)
{
	struct client *cl = q->cl;
	struct rex_aconn *c = &q->conn;
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	int good, taken, i;
	unsigned reposts = 0;
	uint64_t done;

	do {
		good = rex_aconn_poll(c, wc, REX_ACONN_WC_BATCH, &taken);
		for (i = 0; i < good; i++)
			if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV) {
				reposts++;
				handle_recv(q, &wc[i]);
			}
	} while (taken == REX_ACONN_WC_BATCH);
	if (c->state != REX_STATE_ESTABLISHED)
		return;
	if (reposts && rex_aconn_post_recvs(c, q->recv_sge.length ? &q->recv_sge : NULL, reposts))
		goto out_close;
	if (cl->phase != PHASE_BW)
		return;
	/* A signalled completion numbered s: every send up to s is done. */
	done = c->sq_done - q->base;
	if (done > q->done) {
		cl->bytes_done += (done - q->done) * cl->size;
		q->done = done;
		cl->progress = true;
	}
	if (refill(q))
		goto out_close;
	return;
out_close:
	rex_aconn_close(c, true);
}

static void on_completions(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	(void)loop;
	qp_step(lcq->arg);
}
/* [step] */

/* Run the loop (control traffic, CM events) until \p done says so, the
 * connections break, or \p timeout_ms passes. */
static int drive(struct client *cl, bool (*done)(struct client *), int timeout_ms, const char *what,
                 bool watch)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (!done(cl)) {
		if (watch &&
		    (cl->broken || (cl->established == cl->o.qps && !all_established(cl)))) {
			cl->broken = true;
			return -ECONNRESET;
		}
		if (now_ns() > end) {
			fprintf(stderr, "client: no %s from the server within %d ms\n", what,
			        timeout_ms);
			return -ETIMEDOUT;
		}
		if (rex_loop_run_once(cl->loop, 100) < 0)
			return -EIO;
	}
	return 0;
}

static bool all_ready(struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (!cl->qps[i].ready)
			return false;
	return true;
}

static bool all_results(struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (!cl->qps[i].result_in)
			return false;
	return true;
}

/* [connect] */
static int connect_qp(struct rex_aconn *c)
{
	struct qp *q = (struct qp *)c; /* conn is its first member */
	struct client *cl = q->cl;
	const struct options *o = &cl->o;
	bool lat = o->mode == BENCH_MODE_LAT;
	bool answers_by_write = lat && (o->op == BENCH_OP_WRITE || o->op == BENCH_OP_WRITE_IMM);
	uint32_t max = largest(o);
	uint8_t data[BENCH_HELLO_LEN];
	struct bench_hello h;
	struct rex_aconn_dev *dev;
	struct rdma_conn_param param = {.private_data = data, .private_data_len = sizeof(data)};
	/* Least privilege: READ and latency answers land in our memory. */
	struct rex_pool_attr attr = {
	    .buf_size = (size_t)max * (lat ? 2 : 1),
	    .count = o->qps,
	    .access = (o->op == BENCH_OP_READ || lat ? IBV_ACCESS_LOCAL_WRITE : 0) |
	              (answers_by_write ? IBV_ACCESS_REMOTE_WRITE : 0)};

	dev = rex_aconn_dev_get(&cl->devices, c->id->verbs);
	if (!dev)
		return -ENODEV;
	/* One pool for all our connections on the device, registered once. */
	if (!dev->user && !(dev->user = rex_pool_create(dev->pd, &attr)))
		return -ENOMEM;
	q->pool = dev->user;
	q->buf = rex_pool_get(q->pool);
	if (!q->buf)
		return -ENOBUFS;
	q->mem = q->buf->addr;
	q->dest = lat ? q->mem + max : q->mem;
	if (lat && o->op == BENCH_OP_SEND)
		q->recv_sge = (struct ibv_sge){
		    .addr = (uintptr_t)q->dest, .length = max, .lkey = q->buf->lkey};
	c->lcq.arg = q;
	if (rex_aconn_create_queues(c, dev, o->depth + 16, CLIENT_RECVS, o->inline_size,
	                            on_completions))
		return -EIO;
	if (rex_aconn_post_recvs(c, q->recv_sge.length ? &q->recv_sge : NULL, CLIENT_RECVS))
		return -EIO;
	h = (struct bench_hello){.op = (uint8_t)o->op,
	                         .mode = (uint8_t)o->mode,
	                         .max_size = max,
	                         .depth = o->depth,
	                         .qp_index = (uint16_t)q->index,
	                         .qps = (uint16_t)o->qps,
	                         .addr = answers_by_write ? (uintptr_t)q->dest : 0,
	                         .rkey = q->buf->rkey};
	bench_hello_encode(&h, data);
	if (o->op == BENCH_OP_READ) /* READs in flight at once */
		param.initiator_depth = dev->attr.max_qp_init_rd_atom < 255
		                            ? (uint8_t)dev->attr.max_qp_init_rd_atom
		                            : 255;
	return rex_aconn_connect(c, &param);
}

static int check_accept(struct qp *q, const struct rex_cm_event *ev)
{
	char why[BENCH_WHY_SIZE];
	int ret =
	    bench_accept_decode(ev->private_data, ev->private_data_len, &q->peer, why, sizeof(why));

	if (ret == 0 && q->peer.length < largest(&q->cl->o)) {
		snprintf(why, sizeof(why), "its buffer has %" PRIu32 " bytes, we need %" PRIu32,
		         q->peer.length, largest(&q->cl->o));
		ret = -EMSGSIZE;
	}
	if (ret)
		fprintf(stderr, "client: %s: bad accept from the server: %s\n", q->conn.name, why);
	return ret;
}

/* ESTABLISHED: the server's accept carries its buffer; check it. */
static int qp_established(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	struct qp *q = (struct qp *)c;
	int ret = check_accept(q, ev);

	if (ret == 0)
		q->cl->established++;
	return ret;
}

/* The server disconnected first: a failure, unless we are stopping. */
static bool server_left(struct rex_aconn *c)
{
	struct qp *q = (struct qp *)c;

	if (q->cl->stopping)
		return true;
	fprintf(stderr, "client: %s: the server disconnected\n", c->name);
	q->cl->broken = true;
	return false;
}

/* A failed CM event (rex_aconn printed it): the run is broken. A server's
 * rejection says why in its private data. */
static void qp_failed(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	struct qp *q = (struct qp *)c;
	struct bench_reject r;
	char why[128];

	q->cl->broken = true;
	if (ev->type != RDMA_CM_EVENT_REJECTED)
		return;
	if (ev->status == REJ_BY_SERVER &&
	    bench_reject_decode(ev->private_data, ev->private_data_len, &r) == 0)
		fprintf(stderr, "client: %s: rejected by the server: %s\n", c->name,
		        bench_reject_format(&r, why, sizeof(why)));
	else if (ev->status == REJ_NO_LISTENER)
		fprintf(stderr, "  hint: %s\n", rex_options_hint("rdma_connect", ECONNREFUSED));
}
/* [connect] */

/* Every id of ours is a connection, whose events rex_aconn routes: what
 * comes here is the channel itself failing. */
static void on_cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct client *cl = arg;

	(void)devs;
	fprintf(stderr, "client: %s\n",
	        ev->status == -EIO ? "the CM event channel failed" : rdma_event_str(ev->type));
	cl->broken = true;
	close_all(cl, true);
}

static void qp_released(struct rex_aconn *c)
{
	struct qp *q = (struct qp *)c;

	/* The pool buffer goes back only now: no work request can use it. */
	if (q->buf)
		rex_pool_put(q->pool, q->buf);
	q->buf = NULL;
	q->released = true;
	q->cl->open--;
}

/* What the client does at the steps of a connection's life. */
static const struct rex_aconn_ops qp_ops = {
    .route_resolved = connect_qp,
    .established = qp_established,
    .peer_left = server_left,
    .cm_failed = qp_failed,
    .released = qp_released,
};

/* Before the device's PD goes: its pool (-EBUSY while a buffer is out). */
static int release_pool(struct rex_aconn_dev *dev)
{
	return rex_pool_destroy(dev->user);
}

static int create_loop(struct client *cl)
{
	static const int signals[] = {SIGINT, SIGTERM};

	cl->loop = rex_loop_create();
	if (!cl->loop)
		return -errno;
	return rex_loop_add_signals(cl->loop, signals, 2, on_signal, cl);
}

static bool connected(struct client *cl)
{
	return cl->established == cl->o.qps;
}

/* [connect-all] */
/* Every connection resolved, connected and set up before any clock runs. */
static int connect_all(struct client *cl)
{
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICSERV, .ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	char port[8];
	unsigned i;
	int ret;

	snprintf(port, sizeof(port), "%u", (unsigned)cl->o.port);
	ret = getaddrinfo(cl->o.server, port, &hints, &cl->server);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s", cl->o.server, gai_strerror(ret));
		cl->server = NULL;
		return -EINVAL;
	}
	cl->qps = calloc(cl->o.qps, sizeof(*cl->qps));
	if (!cl->qps) {
		rex_report_errno("calloc", ENOMEM);
		return -ENOMEM;
	}
	cl->channel = rdma_create_event_channel();
	if (!cl->channel) {
		ret = -errno;
		rex_report_errno("rdma_create_event_channel", errno);
		return ret;
	}
	ret = rex_cm_channel_nonblocking(cl->channel);
	if (ret)
		return ret;
	/* Every connection's life, and the CM channel read in the loop. No
	 * idle deadline: a run's control phases have their own. */
	rex_aconn_devs_init(&cl->devices, cl->loop, "client", cl->channel, NULL, on_cm_event, cl);
	cl->devices.dev_release = release_pool;
	ret = rex_aconn_devs_watch(&cl->devices);
	if (ret)
		return ret;
	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[i];
		struct rdma_cm_id *id;

		q->cl = cl;
		q->index = i;
		q->wr = calloc(cl->o.depth, sizeof(*q->wr));
		q->sge = calloc(cl->o.depth, sizeof(*q->sge));
		if (!q->wr || !q->sge) {
			rex_report_errno("calloc", ENOMEM);
			return -ENOMEM;
		}
		if (rdma_create_id(cl->channel, &id, NULL, RDMA_PS_TCP)) {
			ret = -errno;
			rex_report_errno("rdma_create_id", errno);
			return ret;
		}
		rex_aconn_init(&q->conn, &cl->devices, id, REX_STATE_RESOLVING, &qp_ops);
		snprintf(q->conn.name, sizeof(q->conn.name), "connection %u", i);
		cl->open++;
		if (rex_aconn_resolve(&q->conn, cl->server->ai_addr))
			return -EIO;
	}
	ret = drive(cl, connected, (int)cl->devices.attr.setup_timeout_ms + 1000, "connection",
	            true);
	if (ret == 0)
		cl->device = ibv_get_device_name(cl->qps[0].conn.dev->verbs->device);
	return ret;
}
/* [connect-all] */

/* [prepare] */
/* Before a size: the work requests, the pattern, the server told. */
static int start_size(struct client *cl, uint32_t size)
{
	const struct options *o = &cl->o;
	unsigned i, k;

	cl->size = size;
	cl->pings = 0;
	cl->sig = signal_every(o, size);
	cl->send_flags = o->op != BENCH_OP_READ && size <= o->inline_size ? IBV_SEND_INLINE : 0;
	for (i = 0; i < o->qps; i++) {
		struct qp *q = &cl->qps[i];
		static const enum ibv_wr_opcode opcodes[BENCH_OP_COUNT] = {
		    IBV_WR_SEND, IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ};

		for (k = 0; k < o->depth; k++) {
			q->sge[k] = (struct ibv_sge){
			    .addr = (uintptr_t)q->mem, .length = size, .lkey = q->buf->lkey};
			q->wr[k] = (struct ibv_send_wr){
			    .sg_list = &q->sge[k],
			    .num_sge = 1,
			    .opcode = opcodes[o->op],
			    .imm_data = htobe32(bench_ctrl_imm(BENCH_CTRL_DATA, 0)),
			    .wr.rdma = {.remote_addr = q->peer.addr, .rkey = q->peer.rkey},
			    .next = k + 1 < o->depth ? &q->wr[k + 1] : NULL};
		}
		/* What we send carries the pattern; what we read or get back
		 * lands on zeros, so the check proves it came. */
		if (o->op == BENCH_OP_READ)
			memset(q->mem, 0, size);
		else
			bench_pattern_fill(q->mem, size, bench_seed(q->index, size, 0));
		if (q->dest != q->mem)
			memset(q->dest, 0, size);
		q->ready = q->result_in = false;
		q->answers = 0;
		if (rex_aconn_post_imm(&q->conn, bench_ctrl_imm(BENCH_CTRL_START, size)))
			return -EIO;
	}
	return drive(cl, all_ready, CTRL_TIMEOUT_MS, "READY", true);
}
/* [prepare] */

/* Look at the loop: signals and CM events (busy polling only). */
static int look_at_loop(struct client *cl)
{
	if (rex_loop_run_once(cl->loop, 0) < 0)
		return -EIO;
	if (cl->broken || !all_established(cl)) {
		cl->broken = true;
		return -ECONNRESET;
	}
	return 0;
}

/* [bw-peak] */
/* Note the bytes completed at time \p t (see struct bw_mark). */
static void mark(struct client *cl, uint64_t t)
{
	size_t i;

	if (cl->mark_skip++ % cl->mark_stride)
		return;
	if (cl->nmarks == MAX_MARKS) {
		for (i = 0; i < MAX_MARKS / 2; i++)
			cl->marks[i] = cl->marks[2 * i];
		cl->nmarks = MAX_MARKS / 2;
		cl->mark_stride *= 2;
	}
	cl->marks[cl->nmarks++] = (struct bw_mark){.t = t, .bytes = cl->bytes_done};
}

/* BW peak, after the run: the best rate over any stretch between two marks
 * that carries at least 1/PEAK_SHARE of the run's bytes (two pointers over
 * the marks, whose bytes only grow). Never below the average. In bytes/s. */
static double peak_rate(const struct client *cl)
{
	const struct bw_mark *m = cl->marks;
	size_t i, j = 0, n = cl->nmarks;
	uint64_t want;
	double best = 0, rate;

	if (n < 2 || m[n - 1].t == m[0].t)
		return 0;
	want = (m[n - 1].bytes - m[0].bytes) / PEAK_SHARE;
	for (i = 0; i < n; i++) {
		if (j < i)
			j = i;
		while (j < n && m[j].bytes - m[i].bytes < want)
			j++;
		if (j == n)
			break;
		if (m[j].t > m[i].t) {
			rate = (double)(m[j].bytes - m[i].bytes) * 1e9 / (double)(m[j].t - m[i].t);
			best = rate > best ? rate : best;
		}
	}
	return best;
}
/* [bw-peak] */

/* [bw] */
/* \p count messages per QP (0: until \p end_ns), the window kept full. */
static int run_bw(struct client *cl, uint64_t count, uint64_t end_ns, double *peak_bps)
{
	uint64_t t, t0 = now_ns(), looked = t0, active = t0;
	unsigned i, idle = 0, pending;
	bool timed_out = false;

	cl->bytes_done = 0;
	cl->nmarks = 0;
	cl->mark_stride = 1;
	cl->mark_skip = 0;
	mark(cl, t0);
	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[i];

		q->base = q->conn.sq_posted;
		q->posted = q->done = 0;
		q->target = count ? count : UINT64_MAX;
	}
	cl->phase = PHASE_BW;
	for (i = 0; i < cl->o.qps; i++)
		if (refill(&cl->qps[i]))
			rex_aconn_close(&cl->qps[i].conn, true);
	cl->progress = false;
	for (;;) {
		pending = 0;
		if (cl->o.events) {
			if (rex_loop_run_once(cl->loop, 100) < 0 || cl->broken ||
			    !all_established(cl))
				goto out_broken;
		} else {
			for (i = 0; i < cl->o.qps; i++)
				qp_step(&cl->qps[i]);
		}
		for (i = 0; i < cl->o.qps; i++)
			pending += cl->qps[i].done < cl->qps[i].target;
		/* One clock read per batch of completions, or per 256 empty polls. */
		if (!cl->progress && ++idle % 256 && pending)
			continue;
		t = now_ns();
		if (cl->progress) {
			cl->progress =
			    false; /* sticky until here: completions the loop took count too */
			active = t;
			mark(cl, t);
		}
		if (!pending)
			break;
		if (end_ns && t >= end_ns && !timed_out) {
			/* -D: post no more; the last posted must be signalled. */
			timed_out = true;
			for (i = 0; i < cl->o.qps; i++) {
				struct qp *q = &cl->qps[i];

				q->target = q->posted + (q->posted % cl->sig != 0);
				refill(q);
			}
		}
		if (t - active > STALL_NS) {
			fprintf(stderr, "client: no completion for %llu ms: is the server gone?\n",
			        STALL_NS / 1000000);
			goto out_broken;
		}
		if (!cl->o.events && t - looked >= LOOK_AT_LOOP_NS) {
			looked = t;
			if (look_at_loop(cl))
				goto out_broken;
		}
	}
	cl->phase = PHASE_CONTROL;
	*peak_bps = peak_rate(cl);
	return 0;
out_broken:
	cl->phase = PHASE_CONTROL;
	cl->broken = true;
	return -ECONNRESET;
}
/* [bw] */

/* [lat] */
/* Wait for the answer to ping \p i (busy, or through the loop with -e). */
static int wait_answer(struct client *cl, struct qp *q, uint64_t i, uint64_t seq)
{
	const volatile uint8_t *last = q->dest + cl->size - 1;
	uint64_t spins = 0, start = 0, t;

	for (;;) {
		if (cl->o.op == BENCH_OP_WRITE) {
			if (*last == bench_tag(i))
				return 0;
		} else if (cl->o.op == BENCH_OP_READ ? q->conn.sq_done >= seq : q->answers > i) {
			return 0;
		}
		if (cl->o.events) {
			if (rex_loop_run_once(cl->loop, 100) < 0)
				return -EIO;
		} else if (cl->o.op != BENCH_OP_WRITE || spins % 64 == 0) {
			qp_step(q);
		}
		if (++spins % 4096 && !cl->o.events)
			continue;
		t = now_ns();
		if (!start)
			start = t;
		if (t - start > STALL_NS) {
			fprintf(stderr, "client: no answer for %llu ms: is the server gone?\n",
			        STALL_NS / 1000000);
			return -ETIMEDOUT;
		}
		if (look_at_loop(cl))
			return -ECONNRESET;
	}
}

/* \p count ping-pongs (0: until \p end_ns); the times in cl->samples when \p keep. */
static int run_lat(struct client *cl, uint64_t count, uint64_t end_ns, bool keep, size_t *kept)
{
	struct qp *q = &cl->qps[0];
	uint8_t *tag = q->mem + cl->size - 1;
	struct ibv_send_wr *wr = &q->wr[0];
	uint64_t i, n, t0, t1, looked = now_ns();
	int ret;

	*kept = 0;
	wr->next = NULL;
	for (n = 0; count ? n < count : *kept < cl->max_samples; n++) {
		i = cl->pings++; /* numbered across warm-up and timed run, as the server counts */
		/* Keep the send queue from filling: completions of earlier pings. */
		while (q->conn.sq_posted - q->conn.sq_done > 8 &&
		       q->conn.state == REX_STATE_ESTABLISHED)
			qp_step(q);
		if (cl->o.op == BENCH_OP_WRITE)
			*tag = bench_tag(i);
		wr->send_flags = cl->send_flags | IBV_SEND_SIGNALED;
		t0 = now_ns();
		ret = rex_aconn_post_send(&q->conn, wr);
		if (ret == 0)
			ret = wait_answer(cl, q, i, rex_aconn_send_number(&q->conn, wr->wr_id));
		t1 = now_ns();
		if (ret) {
			cl->broken = true;
			return ret;
		}
		/* As perftest: READ the round trip, the others half of it. */
		if (keep)
			cl->samples[(*kept)++] =
			    (double)(t1 - t0) / (cl->o.op == BENCH_OP_READ ? 1e3 : 2e3);
		if (end_ns && t1 >= end_ns)
			break;
		if (!cl->o.events && t1 - looked >= LOOK_AT_LOOP_NS) {
			looked = t1;
			if (look_at_loop(cl))
				return -ECONNRESET;
		}
	}
	return 0;
}
/* [lat] */

/* [verify] */
/* After the timed region: the server checks what it got, we check what we read or got back. */
static int finish_size(struct client *cl, bool *verified)
{
	const struct options *o = &cl->o;
	uint32_t size = cl->size;
	size_t len, off;
	unsigned i;
	int ret;

	for (i = 0; i < o->qps; i++)
		if (rex_aconn_post_imm(&cl->qps[i].conn, bench_ctrl_imm(BENCH_CTRL_DONE, 0)))
			return -EIO;
	ret = drive(cl, all_results, CTRL_TIMEOUT_MS, "RESULT", true);
	if (ret)
		return ret;
	*verified = true;
	for (i = 0; i < o->qps; i++) {
		struct qp *q = &cl->qps[i];

		if (q->result != 0 && q->result != BENCH_RESULT_NA) {
			fprintf(stderr,
			        "client: %s: the server found the data of size %" PRIu32
			        " different at offset %" PRIu32 "\n",
			        q->conn.name, size, q->result - 1);
			*verified = false;
		}
		len = o->op == BENCH_OP_WRITE && o->mode == BENCH_MODE_LAT ? size - 1 : size;
		if (o->op == BENCH_OP_READ)
			off = bench_pattern_check(q->mem, len, bench_seed(q->index, size, 1));
		else if (o->mode == BENCH_MODE_LAT)
			off = bench_pattern_check(q->dest, len, bench_seed(q->index, size, 0));
		else
			off = len;
		if (off != len) {
			fprintf(stderr,
			        "client: %s: data of size %" PRIu32 " differs at offset %zu\n",
			        q->conn.name, size, off);
			*verified = false;
		}
	}
	return 0;
}
/* [verify] */

static double cpu_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Busy polling: while a size runs, the CQs raise no events (an armed CQ
 * makes the device signal the completion channel for a completion we poll
 * anyway: on Soft-RoCE, kernel work on the CPU that is also the NIC). After
 * it, armed again and polled once, for the control messages. */
static void set_busy_polled(struct client *cl, bool busy)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[i];

		q->conn.lcq.busy_polled = busy;
		if (!busy && q->conn.state == REX_STATE_ESTABLISHED) {
			rex_loop_cq_arm(&q->conn.lcq);
			qp_step(q);
		}
	}
}

/* [run-size] */
static int run_size(struct client *cl, uint32_t size, struct bench_row *row)
{
	const struct options *o = &cl->o;
	struct rusage r0, r1;
	uint64_t t0 = 0, t1 = 0, end = 0;
	double peak = 0;
	size_t kept = 0;
	uint64_t n = o->duration > 0 ? 0 : o->iters;
	uint64_t warmup = o->warmup;
	int ret;

	if (o->mode == BENCH_MODE_BW && !o->warmup_set && warmup * size > BW_WARMUP_BYTES)
		warmup = BW_WARMUP_BYTES / size > 0 ? BW_WARMUP_BYTES / size : 1;

	ret = start_size(cl, size);
	if (ret)
		return ret;
	if (!o->events)
		set_busy_polled(cl, true);
	/* Warm-up: the same path, untimed. */
	if (warmup)
		ret = o->mode == BENCH_MODE_BW ? run_bw(cl, warmup, 0, &peak)
		                               : run_lat(cl, warmup, 0, false, &kept);
	if (ret)
		goto out_events;
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_ns();
	if (o->duration > 0)
		end = t0 + (uint64_t)(o->duration * 1e9);
	ret =
	    o->mode == BENCH_MODE_BW ? run_bw(cl, n, end, &peak) : run_lat(cl, n, end, true, &kept);
	t1 = now_ns();
	getrusage(RUSAGE_SELF, &r1);
out_events:
	if (!o->events)
		set_busy_polled(cl, false);
	if (ret)
		return ret;

	*row = (struct bench_row){
	    .op = o->op, .mode = o->mode, .bytes = size, .qps = o->qps, .depth = o->depth};
	row->seconds = (double)(t1 - t0) / 1e9;
	row->cpu_user_s = cpu_seconds(&r1.ru_utime) - cpu_seconds(&r0.ru_utime);
	row->cpu_sys_s = cpu_seconds(&r1.ru_stime) - cpu_seconds(&r0.ru_stime);
	if (o->mode == BENCH_MODE_BW) {
		double msgs = (double)cl->bytes_done / size;

		row->iterations = (uint64_t)msgs / o->qps;
		row->bw_avg_mib_s = (double)cl->bytes_done / row->seconds / (1 << 20);
		row->bw_peak_mib_s =
		    peak / (1 << 20) > row->bw_avg_mib_s ? peak / (1 << 20) : row->bw_avg_mib_s;
		row->msg_rate_mpps = msgs / row->seconds / 1e6;
	} else {
		row->iterations = kept;
		bench_lat_summarize(cl->samples, kept, &row->lat);
	}
	return finish_size(cl, &row->verified);
}
/* [run-size] */

static void print_parameters(struct client *cl)
{
	const struct options *o = &cl->o;
	uint32_t first = signal_every(o, 1), last = signal_every(o, largest(o));

	printf("client: %s %s, %u QP%s, depth %u, signal every %u", bench_op_name(o->op),
	       bench_mode_name(o->mode), o->qps, o->qps == 1 ? "" : "s", o->depth, first);
	if (first != last)
		printf(" (%u above %u B, as perftest)", last, BW_SIGNAL_SIZE);
	printf(", inline %u, %s\n", o->inline_size,
	       o->events ? "completion channel" : "busy polling");
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
	bench_print_header(stdout, cl->o.mode);
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
	                        .mode = cl->o.mode,
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

static bool all_released(struct client *cl)
{
	return cl->open == 0;
}

/* [disconnect] */
static int disconnect_all(struct client *cl, bool failed)
{
	close_all(cl, failed);
	return drive(cl, all_released, (int)cl->devices.attr.drain_timeout_ms + 2000, "disconnect",
	             false);
}
/* [disconnect] */

static int release_everything(struct client *cl)
{
	int ret = cl->open == 0 ? rex_aconn_devs_release(&cl->devices) : -EBUSY;
	unsigned i;

	if (cl->channel) {
		rex_loop_remove_fd(cl->loop, cl->channel->fd);
		rdma_destroy_event_channel(cl->channel);
	}
	for (i = 0; cl->qps && i < cl->o.qps; i++) {
		free(cl->qps[i].wr);
		free(cl->qps[i].sge);
	}
	free(cl->qps);
	free(cl->samples);
	free(cl->marks);
	if (cl->server)
		freeaddrinfo(cl->server);
	return ret;
}

static int allocate_samples(struct client *cl)
{
	time_t now = time(NULL);
	struct tm tm;

	strftime(cl->date, sizeof(cl->date), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	if (cl->o.mode != BENCH_MODE_LAT) {
		cl->marks = calloc(MAX_MARKS, sizeof(*cl->marks));
		if (!cl->marks) {
			rex_report_errno("calloc", ENOMEM);
			return -ENOMEM;
		}
		return 0;
	}
	cl->max_samples = cl->o.duration > 0          ? MAX_SAMPLES
	                  : cl->o.iters < MAX_SAMPLES ? cl->o.iters
	                                              : MAX_SAMPLES;
	cl->samples = calloc(cl->max_samples, sizeof(*cl->samples));
	if (!cl->samples) {
		rex_report_errno("calloc", ENOMEM);
		return -ENOMEM;
	}
	return 0;
}

/* [main] */
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

	if (create_loop(&cl) || allocate_samples(&cl))
		goto out_destroy_loop;
	ret = connect_all(&cl);
	if (ret == 0) {
		printf("client: %u connection%s to %s port %u established\n", cl.o.qps,
		       cl.o.qps == 1 ? "" : "s", cl.o.server, (unsigned)cl.o.port);
		ret = run_all_sizes(&cl);
	}
	if (write_outputs(&cl) == 0 && ret == 0)
		status = REX_EXIT_OK;
	if (disconnect_all(&cl, ret != 0))
		status = REX_EXIT_FAILURE;
	if (release_everything(&cl))
		status = REX_EXIT_FAILURE;
	if (status == REX_EXIT_OK)
		printf("client: done\n");
	else
		fprintf(stderr, "client: failed\n");
out_destroy_loop:
	if (rex_loop_destroy(cl.loop))
		status = REX_EXIT_FAILURE;
	return status;
}
/* [main] */
