/* SPDX-License-Identifier: MIT */
/**
 * \file 06-mr-pool/server.c
 * \brief Chapter 06, the benchmark's server: the target of 06-mr-pool-client's
 *        SENDs, WRITEs, WRITEs WITH IMM and READs, its memory one pool
 *        registered once.
 *
 * What it shows: chapter 05's service helper (common/rex_svc.h) serving
 * many connections, each handed one buffer of a pool (common/rex_pool.h)
 * registered once per device, at its first connection, with exactly the
 * access the served ops need, and a memory window over it; a client
 * whose parameters the server was not started for is rejected with a reason
 * both sides print; the data is checked after each timed run, never during.
 *
 *     build/bin/06-mr-pool-server [-B ADDR] [-p PORT] [-s MAX_SIZE] [-o OPS]
 *
 * OPS is a comma list of send, write, write_imm, read (default all). It
 * serves client runs until SIGINT or SIGTERM, then drains, releases
 * everything, prints its totals and exits 0 (1 when the server itself
 * failed; 2 bad command line; 77 no usable RDMA device: none, or an iWARP
 * one bound with -B). A session's benchmark
 * work (control messages, answers, the check of the data) is server_run.c.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "server.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_loop.h"
#include "rex_options.h"
#include "rex_pool.h"

/* [constants] */
#define PROGRAM "06-mr-pool-server"

#define DEFAULT_MAX_SIZE (8u << 20) /* -s: the sweep's largest message */
/* Buffers in the pool: connections served at once. The pool is
 * SERVER_BUFFERS * MAX_SIZE bytes of pinned memory (64 MiB by default). */
#define SERVER_BUFFERS 8u
/* Receives kept posted when nothing more is needed: control messages and
 * latency pings. Bandwidth SEND and WRITE WITH IMM: twice the client's
 * window and a margin, so the client never meets "receiver not ready". */
#define SERVER_SMALL_RECVS 16
#define SERVER_SENDS       16 /* control messages and latency answers */
/* While a run is on, polls of the helper between two looks at the loop
 * (signals, CM events): a few hundred microseconds. */
#define SERVER_POLLS_PER_LOOP 4096
#define LISTEN_BACKLOG        64
/* [constants] */

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [-B ADDR] [-p PORT] [-s MAX_SIZE] [-o OPS] [-g GRANT] [-L MS] [-S RECVS]\n"
	    "       [--lend] [-v] [-h]\n"
	    "Serve 06-mr-pool-client runs until SIGINT or SIGTERM.\n"
	    "  -B ADDR      address to bind (default: all)\n"
	    "  -p PORT      port (default %u)\n"
	    "  -s MAX_SIZE  largest message a client may use, K/M suffixes (default %u);\n"
	    "               the pool registers %u buffers of it; latency answers come\n"
	    "               from a buffer's second half when a client's messages fit twice\n"
	    "  -o OPS       ops served, a comma list of send, write, write_imm, read, fadd,\n"
	    "               cas, or all\n"
	    "               (default all); memory is registered for exactly these\n"
	    "  -g GRANT     what a client's rkey opens: window (default: a memory window\n"
	    "               over its own buffer, with its op's right alone) or pool (the\n"
	    "               pool's region: every buffer, every right served)\n"
	    "  -L MS        a window's lease: revoked MS ms after it is granted (default 0:\n"
	    "               at the client's end)\n"
	    "  -S RECVS     one shared receive queue of RECVS receives of %u bytes for every\n"
	    "               session, each taking its window's share (default 0: each its own;\n"
	    "               with it, a SEND of %u bytes at most)\n"
	    "  --lend       latency runs: pings taken, answers posted and polled, with the\n"
	    "               verbs alone, as perftest's server does, on the QP and CQ the\n"
	    "               helper lends (rex_svc_conn_lend()); not with -L or -S\n"
	    "  -v           debug lines to stderr\n"
	    "  -h, --help   this help\n"
	    "  --version    the version\n",
	    PROGRAM, (unsigned)REX_DEFAULT_PORT, DEFAULT_MAX_SIZE, SERVER_BUFFERS,
	    SERVER_SRQ_BUF_SIZE, SERVER_SRQ_BUF_SIZE);
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

static int parse_command_line(struct server *s, int argc, char **argv)
{
	uint64_t v;
	int opt, ops;

	rex_error_set_hint_hook(rex_options_hint);
	s->port = REX_DEFAULT_PORT;
	s->max_size = DEFAULT_MAX_SIZE;
	s->ops = BENCH_OPS_ALL;
	s->grant = BENCH_GRANT_WINDOW;
	static const struct option longs[] = {{"help", no_argument, NULL, 'h'},
	                                      {"version", no_argument, NULL, 'V'},
	                                      {"lend", no_argument, NULL, 'P'},
	                                      {NULL, 0, NULL, 0}};

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":B:p:s:o:g:L:S:vh", longs, NULL)) != -1) {
		switch (opt) {
		case 'B':
			s->addr = optarg;
			break;
		case 'p':
			if (rex_parse_uint(optarg, 1, 65535, &v))
				return bad_usage("-p %s: out of range (1..65535)", optarg);
			s->port = (uint16_t)v;
			break;
		case 's':
			if (rex_parse_size(optarg, 1, BENCH_MAX_SIZE, &v))
				return bad_usage("-s %s: not a size in 1..128M", optarg);
			s->max_size = (uint32_t)v;
			break;
		case 'o':
			ops = bench_ops_parse(optarg);
			if (ops <= 0)
				return bad_usage(
				    "-o %s: not a list of send, write, write_imm, read, fadd, cas",
				    optarg);
			s->ops = (unsigned)ops;
			break;
		case 'g':
			if (strcmp(optarg, "window") == 0)
				s->grant = BENCH_GRANT_WINDOW;
			else if (strcmp(optarg, "pool") == 0)
				s->grant = BENCH_GRANT_POOL;
			else
				return bad_usage("-g %s: not one of window, pool", optarg);
			break;
		case 'L':
			if (rex_parse_uint(optarg, 0, 3600000, &v))
				return bad_usage("-L %s: out of range (0..3600000 ms)", optarg);
			s->lease_ms = (uint32_t)v;
			break;
		case 'S':
			if (rex_parse_uint(optarg, 0, 1u << 20, &v) ||
			    (v > 0 && v < SERVER_SMALL_RECVS))
				return bad_usage("-S %s: not 0, nor in %u..1048576", optarg,
				                 SERVER_SMALL_RECVS);
			s->srq_recvs = (uint32_t)v;
			break;
		case 'P':
			s->lend = true;
			break;
		case 'v':
			s->verbose = true;
			break;
		case 'h':
			usage(stdout);
			return REX_OPTIONS_HELP;
		case 'V':
			rex_options_version(PROGRAM, stdout);
			return REX_OPTIONS_HELP;
		case ':':
			return bad_usage("-%s: needs a value", (char[]){(char)optopt, 0});
		default: /* an unknown long option leaves optopt 0: name it whole */
			if (optopt == 0)
				return bad_usage("%s: unknown option", argv[optind - 1]);
			return bad_usage("-%s: unknown option", (char[]){(char)optopt, 0});
		}
	}
	if (optind < argc)
		return bad_usage("%s: unexpected argument", argv[optind]);
	/* A lent QP takes no sends of the helper's: no lease's revoke, and no
	 * shared receive queue, mid-run. */
	if (s->lend && (s->lease_ms || s->srq_recvs))
		return bad_usage("--lend: not with -L or -S");
	return REX_OPTIONS_OK;
}

static void shut_down(struct server *s, const char *why)
{
	s->stopping = true;
	printf("server: %s: no new connections; closing %u open\n", why, rex_svc_conns(s->svc));
	rex_svc_stop(s->svc); /* on_stopped() once the last is released */
}

static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct server *s = arg;

	(void)loop;
	if (s->stopping) {
		fprintf(stderr, "server: signal %d again: leaving at once, without draining\n",
		        signo);
		_exit(REX_EXIT_FAILURE);
	}
	shut_down(s, signo == SIGINT ? "SIGINT" : "SIGTERM");
}

static void on_stopped(struct rex_svc *svc)
{
	struct server *s = rex_svc_user(svc);

	s->stopped = true;
}

/* [pool] */
/* The device's pool, registered once at its first connection. */
static struct rex_pool *device_pool(struct server *s, struct rex_svc_conn *c)
{
	struct ibv_pd *pd = rex_svc_conn_pd(c);
	struct rex_pool_attr attr = {.buf_size = s->max_size,
	                             .count = SERVER_BUFFERS,
	                             .access = grant_pool_access(s->ops, s->grant)};
	struct rex_pool *pool = rex_svc_conn_dev_user(c);

	if (!pool) {
		pool = rex_pool_create(pd, &attr);
		rex_svc_conn_set_dev_user(c, pool);
		if (pool)
			printf("server: pool on %s: %u buffers of %" PRIu32
			       " bytes, one registration; %s\n",
			       ibv_get_device_name(pd->context->device), SERVER_BUFFERS,
			       s->max_size,
			       s->grant == BENCH_GRANT_WINDOW ? "a window per client"
			                                      : "its rkey to every client");
	}
	return pool;
}

/* Before the device's PD goes: its pool (-EBUSY while a buffer is out). */
static int release_pool(struct rex_svc *svc, struct ibv_pd *pd, void *pool)
{
	(void)svc, (void)pd;
	return rex_pool_destroy(pool);
}
/* [pool] */

/* What a client asks in its hello, against what this server serves: 0, or
 * why not in \p rej. */
static int check_hello(struct server *s, struct rex_svc_conn *c, const struct bench_hello *h,
                       struct bench_reject *rej)
{
	const struct ibv_device_attr *dev = rex_svc_conn_device_attr(c);
	bool bw_recvs =
	    h->mode == BENCH_MODE_BW && (h->op == BENCH_OP_SEND || h->op == BENCH_OP_WRITE_IMM);

	if (!(s->ops & (1u << h->op)))
		*rej = (struct bench_reject){BENCH_REJECT_OP, h->op, s->ops};
	else if (h->max_size > s->max_size)
		*rej = (struct bench_reject){BENCH_REJECT_SIZE, h->max_size, s->max_size};
	else if (s->srq_recvs && h->op == BENCH_OP_SEND && h->max_size > SERVER_SRQ_BUF_SIZE)
		*rej =
		    (struct bench_reject){BENCH_REJECT_SRQ_SIZE, h->max_size, SERVER_SRQ_BUF_SIZE};
	else if (h->mode == BENCH_MODE_LAT &&
	         (h->op == BENCH_OP_WRITE || h->op == BENCH_OP_WRITE_IMM) &&
	         (h->addr == 0 || h->addr + h->max_size < h->addr)) {
		fprintf(stderr, "server: %s: bad hello: no buffer for the answers\n",
		        rex_svc_conn_name(c));
		rej->reason = BENCH_REJECT_HELLO;
	} else if (bw_recvs && (int)(2 * h->depth + 8) > dev->max_qp_wr) {
		*rej = (struct bench_reject){BENCH_REJECT_DEPTH, h->depth,
		                             (uint64_t)(dev->max_qp_wr - 8) / 2};
	} else {
		return 0;
	}
	return -1;
}

/* [connect-request] */
/* The client's hello decides what the session gets: its buffer from the
 * pool, its receive queue, its grant; the accept carries them back. */
static int on_request(struct rex_svc_conn *c, const void *hello, size_t len, void *reply,
                      size_t *reply_len)
{
	struct server *s = rex_svc_user(rex_svc_conn_svc(c));
	char why[BENCH_WHY_SIZE];
	struct bench_reject rej = {0};
	struct bench_accept acc;
	struct bench_hello h;
	struct rex_pool *pool;
	struct session *ss;

	/* Bound to all addresses, a request may come from an iWARP device. */
	if (rex_device_refuse_iwarp(rex_svc_conn_pd(c)->context, BENCH_IWARP_LACKS)) {
		rej = (struct bench_reject){BENCH_REJECT_OP, 0, 0};
		goto out_reject;
	}
	if (bench_hello_decode(hello, len, &h, why, sizeof(why))) {
		fprintf(stderr, "server: %s: bad hello: %s\n", rex_svc_conn_name(c), why);
		rej.reason = BENCH_REJECT_HELLO;
		goto out_reject;
	}
	if (check_hello(s, c, &h, &rej))
		goto out_reject;
	pool = device_pool(s, c);
	ss = pool ? calloc(1, sizeof(*ss)) : NULL;
	if (!ss) {
		rej.reason = BENCH_REJECT_BUSY;
		goto out_reject;
	}
	ss->buf = rex_pool_get(pool);
	if (!ss->buf) { /* back-pressure: every buffer is serving someone */
		free(ss);
		rej = (struct bench_reject){BENCH_REJECT_BUSY, 0, SERVER_BUFFERS};
		goto out_reject;
	}
	ss->conn = c;
	ss->server = s;
	ss->hello = h;
	ss->pool = pool;
	ss->mem = ss->buf->addr;
	ss->answer = session_answer_at(ss->mem, s->max_size, h.max_size);
	/* Receives: zero-length ones for control messages and WRITE WITH IMM,
	 * the buffer itself for SEND; bandwidth runs, twice the window. */
	ss->recv_depth =
	    h.mode == BENCH_MODE_BW && (h.op == BENCH_OP_SEND || h.op == BENCH_OP_WRITE_IMM)
	        ? 2 * h.depth + 8
	        : SERVER_SMALL_RECVS;
	ss->recv_sge = (struct ibv_sge){
	    .addr = (uintptr_t)ss->mem, .length = h.max_size, .lkey = ss->buf->lkey};
	acc = (struct bench_accept){.recv_depth = ss->recv_depth};
	if (rex_svc_conn_set_depths(c, SERVER_SENDS, ss->recv_depth) ||
	    grant_prepare(ss, rex_svc_conn_pd(c), pool, &acc)) {
		rex_pool_put(pool, ss->buf);
		free(ss);
		rej.reason = BENCH_REJECT_BUSY;
		goto out_reject;
	}
	rex_svc_conn_set_user(c, ss);
	ss->next = s->sessions;
	if (s->sessions)
		s->sessions->prev = ss;
	s->sessions = ss;
	bench_accept_encode(&acc, reply);
	*reply_len = BENCH_ACCEPT_LEN;
	printf("server: %s: %s %s, connection %u of %u, up to %" PRIu32 " bytes, depth %" PRIu32
	       "%s: accepting\n",
	       rex_svc_conn_name(c), bench_op_name(h.op), bench_mode_name(h.mode), h.qp_index + 1u,
	       h.qps, h.max_size, h.depth,
	       h.mode != BENCH_MODE_LAT || h.op == BENCH_OP_READ || bench_op_atomic(h.op) ? ""
	       : ss->answer != ss->mem ? ", answers from the buffer's second half"
	                               : ", answers echo the pings");
	return 0;

out_reject:
	printf("server: rejecting %s: %s\n", rex_svc_conn_name(c),
	       bench_reject_format(&rej, why, sizeof(why)));
	bench_reject_encode(&rej, reply);
	*reply_len = BENCH_REJECT_LEN;
	return -1;
}

/* The queues exist: the receives go before the accept (on a shared
 * receive queue they are the helper's, posted already). */
static int on_ready(struct rex_svc_conn *c)
{
	struct session *ss = rex_svc_conn_user(c);

	return ss->server->srq_recvs ? 0 : session_post_recvs(ss, ss->recv_depth);
}

/* [probe] */
/* Every BENCH_PROBE_MS: a client heard from since the last look is alive;
 * a quiet one gets an ALIVE, which costs it one receive. A live client
 * posts it again; a stopped one runs out, and the probe that finds no
 * receive fails the connection (bench_wire.h has the arithmetic). A WRITE
 * or READ run is quiet on our side too: its client, busy, takes the probe. */
static void probe(struct rex_loop *loop, void *arg)
{
	struct session *ss = arg;
	int ret = 0;

	if (ss->heard) {
		ss->heard = false;
		ss->unheard = 0;
	} else {
		/* Quiet in a latency run with --lend: the helper takes the QP
		 * back for the rest of the run, and probes as ever. */
		session_lend_end(ss);
		ss->unheard++;
		ret = session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_ALIVE, ss->unheard));
	}
	if (ret == -ENOTCONN)
		return; /* closing: no more probes */
	/* -ENOBUFS: the send queue is full; -EBUSY: its QP is lent (--lend);
	 * the next look tries again. */
	if ((ret && ret != -ENOBUFS && ret != -EBUSY) ||
	    rex_loop_timer_start(loop, &ss->probe, BENCH_PROBE_MS))
		rex_svc_close(ss->conn, true);
}
/* [probe] */

/* The QP can send once accepted: the window's bind goes first, and the
 * probes start. */
static void on_accepted(struct rex_svc_conn *c)
{
	struct session *ss = rex_svc_conn_user(c);
	struct server *s = ss->server;

	rex_loop_timer_init(&ss->probe, probe, ss);
	if (grant_post(ss) || rex_loop_timer_start(s->loop, &ss->probe, BENCH_PROBE_MS))
		rex_svc_close(c, true);
}
/* [connect-request] */

/* Before the QP goes: the window bound on it. */
static void on_releasing(struct rex_svc_conn *c)
{
	grant_release(rex_svc_conn_user(c));
}

/* The client may disconnect between runs, not in the middle of one. */
static void on_closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	struct session *ss = rex_svc_conn_user(c);
	struct server *s = rex_svc_user(rex_svc_conn_svc(c));
	bool left_mid_run = why == REX_SVC_DONE && ss->active && !s->stopping;

	if (left_mid_run)
		fprintf(stderr, "server: %s: the client left in the middle of a run\n",
		        rex_svc_conn_name(c));
	else if (why == REX_SVC_FAILED && ss->unheard > 1)
		fprintf(stderr, "server: %s: silent for %u probes (%u ms each): dropped\n",
		        rex_svc_conn_name(c), ss->unheard, BENCH_PROBE_MS);
	rex_loop_timer_cancel(s->loop, &ss->probe);
	/* The pool buffer goes back only now: no work request can use it, and
	 * its window is gone. */
	grant_release(ss);
	rex_pool_put(ss->pool, ss->buf);
	session_set_active(ss, false);
	if (ss->prev)
		ss->prev->next = ss->next;
	else
		s->sessions = ss->next;
	if (ss->next)
		ss->next->prev = ss->prev;
	if (why != REX_SVC_DONE || left_mid_run || ss->bad_runs)
		s->failed++;
	printf("server: %s: closed: %" PRIu64 " run%s, %" PRIu64 " message%s received%s\n",
	       rex_svc_conn_name(c), ss->runs, ss->runs == 1 ? "" : "s", ss->messages,
	       ss->messages == 1 ? "" : "s",
	       ss->bad_runs                          ? ", data differed"
	       : why != REX_SVC_DONE || left_mid_run ? ", failed"
	                                             : "");
	free(ss);
}

/* [listen] */
static int serve(struct server *s)
{
	static const int signals[] = {SIGINT, SIGTERM};
	static const struct rex_svc_ops ops = {
	    .request = on_request,
	    .ready = on_ready,
	    .accepted = on_accepted,
	    .recv = session_recv,
	    .done = session_done,
	    .releasing = on_releasing,
	    .closed = on_closed,
	    .stopped = on_stopped,
	    .device_closing = release_pool,
	};
	struct rex_svc_config cfg;
	char ops_list[48];

	s->loop = rex_loop_create();
	if (!s->loop || rex_loop_add_signals(s->loop, signals, 2, on_signal, s))
		return -EIO;
	/* No idle deadline: a run's control phases have their own. The wire
	 * format is the chapter's own (bench_wire.h): no helper header. A
	 * client may leave between runs (on_closed() says whether it did). */
	rex_svc_config_default(&cfg);
	cfg.attr.idle_timeout_ms = 0;
	cfg.raw_pdata = true;
	cfg.peer_may_leave = true;
	cfg.backlog = LISTEN_BACKLOG;
	cfg.srq_recvs = s->srq_recvs; /* -S: each session's window a share of it */
	cfg.srq_buf_size = SERVER_SRQ_BUF_SIZE;
	/* A bandwidth run's window counts what the transport acknowledged, not
	 * what we posted again: a server that falls behind by the whole queue
	 * leaves a sender facing "receiver not ready", which it tries 7 times,
	 * waiting our min_rnr_timer each. At the helper's 12 (0.64 ms) that is
	 * 4.5 ms of slack; 28 (164 ms a try, 1.1 s in all) covers the stalls of
	 * a loaded VM (a sanitizer build there ran its 300 receives dry). */
	if (s->srq_recvs)
		cfg.attr.min_rnr_timer = SERVER_SRQ_RNR_TIMER;
	s->svc = rex_svc_create(s->loop, &cfg, &ops, s);
	if (!s->svc || rex_svc_serve(s->svc, s->addr, s->port))
		return -EIO;
	/* Bound to an address, the listener knows its device. */
	if (rex_device_refuse_iwarp(rex_svc_listen_device(s->svc), BENCH_IWARP_LACKS))
		return -EPROTONOSUPPORT;
	printf("server: listening on %s port %u: ops %s, messages up to %" PRIu32 " bytes\n",
	       s->addr ? s->addr : "0.0.0.0", (unsigned)s->port,
	       bench_ops_format(s->ops, ops_list, sizeof(ops_list)), s->max_size);
	if (s->srq_recvs)
		printf("server: one shared receive queue of %" PRIu32 " receives of %u bytes\n",
		       s->srq_recvs, SERVER_SRQ_BUF_SIZE);
	if (s->lend)
		printf("server: latency pings taken and answered on a lent QP (--lend)\n");
	return 0;
}
/* [listen] */

/* Sessions whose runs began or ended since: the helper told, here and not
 * in the callback that saw START or DONE. */
static void sync_busy(struct server *s)
{
	struct session *ss, *next;

	s->busy_changed = false;
	for (ss = s->sessions; ss; ss = next) {
		next = ss->next; /* a release is a task of the loop: the list holds */
		session_sync_busy(ss);
	}
}

/* [run] */
/* Sleep in the loop while no run is on; busy-poll the running sessions
 * while one is, looking at the loop (signals, CM events) every few
 * thousand rounds. */
static int run_loop(struct server *s)
{
	struct session *ss, *next;
	unsigned polls = 0, rounds = 0;
	int ret = 0;

	while (!s->stopped && ret >= 0) {
		if (s->busy_changed)
			sync_busy(s);
		if (s->active == 0) {
			ret = rex_loop_run_once(s->loop, -1);
			continue;
		}
		rounds++;
		for (ss = s->sessions; ss; ss = next) {
			next = ss->next; /* a release is a task of the loop: the list holds */
			if (ss->busy)
				polls += session_round(ss, rounds);
		}
		if (polls >= SERVER_POLLS_PER_LOOP) {
			polls = 0;
			ret = rex_loop_run_once(s->loop, 0);
		}
	}
	return ret < 0 ? ret : 0;
}
/* [run] */

static int report_totals(const struct server *s)
{
	struct rex_svc_stats st;

	rex_svc_stats(s->svc, &st);
	printf("server: done: %lu connection%s served, %lu failed, %lu rejected; %" PRIu64
	       " run%s, %" PRIu64 " message%s received\n",
	       st.closed, st.closed == 1 ? "" : "s", s->failed, st.rejected, s->runs,
	       s->runs == 1 ? "" : "s", s->messages, s->messages == 1 ? "" : "s");
	return st.listener_lost ? -1 : 0;
}

/* [main] */
int main(int argc, char **argv)
{
	struct server s = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = parse_command_line(&s, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	ret = serve(&s);
	if (ret == -EPROTONOSUPPORT)
		status = REX_EXIT_NO_DEVICE;
	else if (ret == 0 && run_loop(&s) == 0 && report_totals(&s) == 0)
		status = REX_EXIT_OK;
	/* Every connection is gone: nothing is left in the devices. */
	if (rex_svc_release_all(s.svc, s.loop))
		status = REX_EXIT_FAILURE;
	return status;
}
/* [main] */
