/* SPDX-License-Identifier: MIT */
/**
 * \file 06-mr-pool/server.c
 * \brief Chapter 06, the benchmark's server: the target of 06-mr-pool-client's
 *        SENDs, WRITEs, WRITEs WITH IMM and READs, its memory one pool
 *        registered once.
 *
 * What it shows: chapter 05's event loop serving many connections, each
 * handed one buffer of a pool (common/rex_pool.h) registered once, at the
 * first connection, with exactly the access the served ops need; a client
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
#include <unistd.h>
#include <sys/epoll.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

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
/* While a run is on, rounds of polling between two looks at the loop
 * (signals, CM events): a few hundred microseconds. */
#define SERVER_POLLS_PER_LOOP 4096
#define LISTEN_BACKLOG        64
/* [constants] */

static bool session_left(struct rex_aconn *c);
static void session_releasing(struct rex_aconn *c);
static void session_released(struct rex_aconn *c);

/* What the server does at the steps of a session's life. */
static const struct rex_aconn_ops session_ops = {
    .peer_left = session_left,
    .releasing = session_releasing,
    .released = session_released,
};

static void usage(FILE *f)
{
	fprintf(
	    f,
	    "usage: %s [-B ADDR] [-p PORT] [-s MAX_SIZE] [-o OPS] [-g GRANT] [-L MS] [-v] [-h]\n"
	    "Serve 06-mr-pool-client runs until SIGINT or SIGTERM.\n"
	    "  -B ADDR      address to bind (default: all)\n"
	    "  -p PORT      port (default %u)\n"
	    "  -s MAX_SIZE  largest message a client may use, K/M suffixes (default %u);\n"
	    "               the pool registers %u buffers of it\n"
	    "  -o OPS       ops served, a comma list of send, write, write_imm, read, fadd,\n"
	    "               cas, or all\n"
	    "               (default all); memory is registered for exactly these\n"
	    "  -g GRANT     what a client's rkey opens: window (default: a memory window\n"
	    "               over its own buffer, with its op's right alone) or pool (the\n"
	    "               pool's region: every buffer, every right served)\n"
	    "  -L MS        a window's lease: revoked MS ms after it is granted (default 0:\n"
	    "               at the client's end)\n"
	    "  -v           debug lines to stderr\n"
	    "  -h, --help   this help\n"
	    "  --version    the version\n",
	    PROGRAM, (unsigned)REX_DEFAULT_PORT, DEFAULT_MAX_SIZE, SERVER_BUFFERS);
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
	                                      {NULL, 0, NULL, 0}};

	opterr = 0;
	while ((opt = getopt_long(argc, argv, ":B:p:s:o:g:L:vh", longs, NULL)) != -1) {
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
	return REX_OPTIONS_OK;
}

static void stop_when_idle(struct server *s)
{
	if (s->stopping && s->open == 0)
		s->stopped = true;
}

static void shut_down(struct server *s, const char *why)
{
	struct session *ss;

	s->stopping = true;
	printf("server: %s: no new connections; closing %lu open\n", why, s->open);
	if (s->listener && rdma_destroy_id(s->listener))
		rex_report_errno("rdma_destroy_id", errno);
	s->listener = NULL;
	for (ss = s->sessions; ss; ss = ss->next)
		rex_aconn_close(&ss->conn, false);
	stop_when_idle(s);
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

static void reject(struct server *s, struct rdma_cm_id *id, const char *peer,
                   const struct bench_reject *r)
{
	uint8_t data[BENCH_REJECT_LEN];
	char why[128];

	s->rejected++;
	printf("server: rejecting %s: %s\n", peer, bench_reject_format(r, why, sizeof(why)));
	bench_reject_encode(r, data);
	if (rdma_reject(id, data, sizeof(data)))
		rex_report_errno("rdma_reject", errno);
	if (rdma_destroy_id(id))
		rex_report_errno("rdma_destroy_id", errno);
}

/* [pool] */
/* The device's pool, registered once at its first connection. */
static struct rex_pool *device_pool(struct server *s, struct rex_aconn_dev *dev)
{
	struct rex_pool_attr attr = {.buf_size = s->max_size,
	                             .count = SERVER_BUFFERS,
	                             .access = grant_pool_access(s->ops, s->grant)};

	if (!dev->user) {
		dev->user = rex_pool_create(dev->pd, &attr);
		if (dev->user)
			printf("server: pool on %s: %u buffers of %" PRIu32
			       " bytes, one registration; %s\n",
			       ibv_get_device_name(dev->verbs->device), SERVER_BUFFERS, s->max_size,
			       s->grant == BENCH_GRANT_WINDOW ? "a window per client"
			                                      : "its rkey to every client");
	}
	return dev->user;
}

/* Before the device's PD goes: its pool (-EBUSY while a buffer is out). */
static int release_pool(struct rex_aconn_dev *dev)
{
	return rex_pool_destroy(dev->user);
}
/* [pool] */

/* [connect-request] */
static void on_connect_request(struct server *s, struct rdma_cm_id *id,
                               const struct rex_cm_event *ev)
{
	char peer[REX_CM_ADDRESS_LEN], why[BENCH_WHY_SIZE];
	struct bench_reject rej = {0};
	struct bench_hello h;
	struct bench_accept acc;
	uint8_t data[BENCH_ACCEPT_LEN];
	struct rdma_conn_param param = {.private_data = data, .private_data_len = sizeof(data)};
	struct rex_aconn_dev *dev;
	struct rex_pool *pool;
	struct session *ss;
	bool bw_recvs;

	rex_cm_format_address(rdma_get_peer_addr(id), peer, sizeof(peer));
	/* Bound to all addresses, a request may come from an iWARP device. */
	if (rex_device_refuse_iwarp(id->verbs, BENCH_IWARP_LACKS)) {
		rej = (struct bench_reject){BENCH_REJECT_OP, 0, 0};
		goto out_reject;
	}
	/* The hello decides what we register and post: check it first. */
	if (bench_hello_decode(ev->private_data, ev->private_data_len, &h, why, sizeof(why))) {
		fprintf(stderr, "server: %s: bad hello: %s\n", peer, why);
		rej.reason = BENCH_REJECT_HELLO;
		goto out_reject;
	}
	if (!(s->ops & (1u << h.op))) {
		rej = (struct bench_reject){BENCH_REJECT_OP, h.op, s->ops};
		goto out_reject;
	}
	if (h.max_size > s->max_size) {
		rej = (struct bench_reject){BENCH_REJECT_SIZE, h.max_size, s->max_size};
		goto out_reject;
	}
	if (h.mode == BENCH_MODE_LAT && (h.op == BENCH_OP_WRITE || h.op == BENCH_OP_WRITE_IMM) &&
	    (h.addr == 0 || h.addr + h.max_size < h.addr)) {
		fprintf(stderr, "server: %s: bad hello: no buffer for the answers\n", peer);
		rej.reason = BENCH_REJECT_HELLO;
		goto out_reject;
	}
	dev = rex_aconn_dev_get(&s->devices, id->verbs);
	pool = dev ? device_pool(s, dev) : NULL;
	if (!pool) {
		rej.reason = BENCH_REJECT_BUSY;
		goto out_reject;
	}
	bw_recvs = h.mode == BENCH_MODE_BW && (h.op == BENCH_OP_SEND || h.op == BENCH_OP_WRITE_IMM);
	if (bw_recvs && (int)(2 * h.depth + 8) > dev->attr.max_qp_wr) {
		rej = (struct bench_reject){BENCH_REJECT_DEPTH, h.depth,
		                            (uint64_t)(dev->attr.max_qp_wr - 8) / 2};
		goto out_reject;
	}
	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		rex_report_errno("calloc", errno);
		rej.reason = BENCH_REJECT_BUSY;
		goto out_reject;
	}
	ss->pool = pool;
	ss->buf = rex_pool_get(pool);
	if (!ss->buf) { /* back-pressure: every buffer is serving someone */
		free(ss);
		rej = (struct bench_reject){BENCH_REJECT_BUSY, 0, SERVER_BUFFERS};
		goto out_reject;
	}
	ss->server = s;
	ss->hello = h;
	ss->number = ++s->numbered;
	ss->mem = ss->buf->addr;
	ss->next = s->sessions;
	if (s->sessions)
		s->sessions->prev = ss;
	s->sessions = ss;
	s->open++;
	rex_aconn_init(&ss->conn, &s->devices, id, REX_STATE_CONNECTING, &session_ops);
	snprintf(ss->conn.name, sizeof(ss->conn.name), "connection %lu from %s", ss->number, peer);

	/* Receives before the accept: zero-length ones for control messages
	 * and WRITE WITH IMM, the buffer itself for SEND. */
	ss->recv_depth = bw_recvs ? 2 * h.depth + 8 : SERVER_SMALL_RECVS;
	ss->recv_sge = (struct ibv_sge){
	    .addr = (uintptr_t)ss->mem, .length = h.max_size, .lkey = ss->buf->lkey};
	ss->conn.lcq.arg = ss;
	if (rex_aconn_create_queues(&ss->conn, dev, SERVER_SENDS, ss->recv_depth, 0,
	                            session_on_completions) ||
	    rex_aconn_post_recvs(&ss->conn, h.op == BENCH_OP_SEND ? &ss->recv_sge : NULL,
	                         ss->recv_depth))
		goto out_close;

	acc = (struct bench_accept){.recv_depth = ss->recv_depth};
	if (grant_prepare(ss, dev->pd, pool, &acc))
		goto out_close;
	bench_accept_encode(&acc, data);
	/* READ and atomics: serve as many at once as the device allows;
	 * rdma_accept() lowers it to what the client asked for. */
	if (h.op == BENCH_OP_READ || bench_op_atomic(h.op))
		param.responder_resources =
		    dev->attr.max_qp_rd_atom < 255 ? (uint8_t)dev->attr.max_qp_rd_atom : 255;
	/* The QP can send once accepted: the window's bind goes first. */
	if (rex_aconn_accept(&ss->conn, &param) || grant_post(ss))
		goto out_close;
	printf("server: %s: %s %s, connection %u of %u, up to %" PRIu32 " bytes, depth %" PRIu32
	       ": accepting\n",
	       ss->conn.name, bench_op_name(h.op), bench_mode_name(h.mode), h.qp_index + 1u, h.qps,
	       h.max_size, h.depth);
	return;

out_close:
	rex_aconn_close(&ss->conn, true);
	return;
out_reject:
	reject(s, id, peer, &rej);
}
/* [connect-request] */

/* The client disconnected: fine between runs, not in the middle of one. */
static bool session_left(struct rex_aconn *c)
{
	struct session *ss = (struct session *)c; /* conn is its first member */
	bool mid_run = ss->active;

	if (mid_run)
		fprintf(stderr, "server: %s: the client left in the middle of a run\n", c->name);
	session_set_active(ss, false);
	return !mid_run;
}

/* Connect requests, and the listener's own events; rex_aconn hands every
 * other event to its session. */
static void on_cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct server *s = arg;
	char peer[REX_CM_ADDRESS_LEN];

	(void)devs;
	if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (s->stopping) {
			rex_cm_format_address(rdma_get_peer_addr(ev->id), peer, sizeof(peer));
			reject(s, ev->id, peer,
			       &(struct bench_reject){.reason = BENCH_REJECT_BUSY});
		} else {
			on_connect_request(s, ev->id, ev);
		}
		return;
	}
	fprintf(stderr, "server: listener: %s\n", rdma_event_str(ev->type));
	if (ev->status == -EIO && !s->stopping) { /* the channel itself failed */
		s->status = REX_EXIT_FAILURE;
		shut_down(s, "the CM event channel failed");
	}
}

/* Before the QP goes: the window bound on it. */
static void session_releasing(struct rex_aconn *c)
{
	grant_release((struct session *)c);
}

static void session_released(struct rex_aconn *c)
{
	struct session *ss = (struct session *)c;
	struct server *s = ss->server;

	/* The pool buffer goes back only now: no work request can use it, and
	 * its window is gone (session_releasing()). */
	rex_pool_put(ss->pool, ss->buf);
	session_set_active(ss, false);
	if (ss->prev)
		ss->prev->next = ss->next;
	else
		s->sessions = ss->next;
	if (ss->next)
		ss->next->prev = ss->prev;
	s->open--;
	s->served++;
	if (c->failed || c->drain_cut || ss->bad_runs)
		s->failed++;
	printf("server: %s: closed: %" PRIu64 " run%s, %" PRIu64 " message%s received%s\n", c->name,
	       ss->runs, ss->runs == 1 ? "" : "s", ss->messages, ss->messages == 1 ? "" : "s",
	       ss->bad_runs                ? ", data differed"
	       : c->failed || c->drain_cut ? ", failed"
	                                   : "");
	free(ss);
	stop_when_idle(s);
}

static int create_loop(struct server *s)
{
	static const int signals[] = {SIGINT, SIGTERM};

	s->loop = rex_loop_create();
	if (!s->loop)
		return -errno;
	return rex_loop_add_signals(s->loop, signals, 2, on_signal, s);
}

/* [listen] */
static int listen_for_clients(struct server *s)
{
	char ops[48];
	int ret;

	/* Every session's life, and the CM channel read in the loop. No idle
	 * deadline: a run's control phases have their own. */
	ret = rex_aconn_devs_create(&s->devices, s->loop, "server", NULL, on_cm_event, s);
	if (ret)
		return ret;
	s->devices.dev_release = release_pool;
	ret = rex_aconn_listen(&s->devices, s->addr, s->port, LISTEN_BACKLOG, &s->listener);
	if (ret)
		return ret;
	/* Bound to an address, the listener knows its device. */
	if (rex_device_refuse_iwarp(s->listener->verbs, BENCH_IWARP_LACKS))
		return -EPROTONOSUPPORT;
	rex_cm_format_address(rdma_get_local_addr(s->listener), s->name, sizeof(s->name));
	printf("server: listening on %s: ops %s, messages up to %" PRIu32 " bytes\n", s->name,
	       bench_ops_format(s->ops, ops, sizeof(ops)), s->max_size);
	return 0;
}
/* [listen] */

/* [run] */
/* Sleep in the loop while no run is on; busy-poll the running sessions
 * while one is, looking at the loop (signals, CM events) every few
 * thousand rounds. */
static int run_loop(struct server *s)
{
	struct session *ss, *next;
	unsigned polls = 0;
	int ret = 0;

	while (!s->stopped && ret >= 0) {
		if (s->active == 0) {
			ret = rex_loop_run_once(s->loop, -1);
			continue;
		}
		for (ss = s->sessions; ss; ss = next) {
			next = ss->next; /* a release is a task of the loop: the list holds */
			if (!ss->busy)
				continue;
			session_poll(ss);
			if (ss->active && ss->hello.op == BENCH_OP_WRITE &&
			    ss->hello.mode == BENCH_MODE_LAT)
				session_poll_memory(ss);
		}
		if (++polls % SERVER_POLLS_PER_LOOP == 0)
			ret = rex_loop_run_once(s->loop, 0);
	}
	if (ret < 0)
		s->status = REX_EXIT_FAILURE;
	return ret < 0 ? ret : 0;
}
/* [run] */

static int release_everything(struct server *s)
{
	int ret = 0;

	if (s->listener && rdma_destroy_id(s->listener)) {
		ret = -errno;
		rex_report_errno("rdma_destroy_id", errno);
	}
	if (rex_aconn_devs_destroy(&s->devices) == 0 && ret == 0)
		printf("server: released everything: no QP, CQ, memory region or CM id left\n");
	else
		ret = ret ? ret : -EBUSY;
	return ret;
}

/* [main] */
int main(int argc, char **argv)
{
	struct server s = {0};
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = parse_command_line(&s, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	s.status = REX_EXIT_FAILURE;
	if (create_loop(&s))
		goto out_destroy_loop;
	ret = listen_for_clients(&s);
	if (ret) {
		s.status = ret == -EPROTONOSUPPORT ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;
		goto out_release;
	}
	s.status = REX_EXIT_OK;
	if (run_loop(&s) == 0)
		printf("server: done: %lu connection%s served, %lu failed, %lu rejected; %" PRIu64
		       " run%s, %" PRIu64 " message%s received\n",
		       s.served, s.served == 1 ? "" : "s", s.failed, s.rejected, s.runs,
		       s.runs == 1 ? "" : "s", s.messages, s.messages == 1 ? "" : "s");
out_release:
	if (release_everything(&s))
		s.status = REX_EXIT_FAILURE;
out_destroy_loop:
	if (rex_loop_destroy(s.loop))
		s.status = REX_EXIT_FAILURE;
	return s.status;
}
/* [main] */
