/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 05, the client: one thread driving many connections, each
 *        keeping a window of messages in flight.
 *
 * What it teaches: the same event loop and helper as the server
 * (common/rex_svc.h): the active side of the CM without a single blocking
 * call (address and route resolution, connect: each call returns at once,
 * each outcome is an event routed through `id->context`, all of it the
 * helper's); a window of requests in flight on every connection, within
 * the server's credits; and numbers for the whole: totals, per-connection
 * counts, round-trip median and p99, and messages per second.
 *
 * Run it against 05-async-server:
 *
 *     build/bin/05-async-client -a 10.77.0.1 [-q CONNECTIONS] [-w WINDOW] [-n COUNT] [-s SIZE]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/05-async-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/05-async-client -a $RDMA_LAB_ADDR -q 8 -w 4'
 *
 * Each of the CONNECTIONS sends COUNT messages of SIZE bytes, at most
 * WINDOW at once, checks that every echo is byte for byte what it sent,
 * says bye and disconnects. SIGINT or SIGTERM closes every connection
 * first. Exit status: 0 every echo of every connection intact; 1 something
 * failed (stderr says what); 2 bad command line; 77 no RDMA device.
 * The walkthrough is docs/05-async.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "echo.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_loop.h"
#include "rex_options.h"
#include "rex_wire.h"
#include "wire.h"

/* [constants] */
#define PROGRAM "05-async-client"

#define DEFAULT_SIZE  64      /* payload bytes per message (-s) */
#define DEFAULT_COUNT 1000    /* messages per connection (-n) */
#define MAX_COUNT     1000000 /* per connection */
#define MAX_WINDOW    64      /* messages in flight per connection (-w) */
#define MAX_QPS       1024    /* connections (-q): a QP, a CQ, 2 regions each */
/* We keep the round-trip time of every message, 8 bytes each: COUNT times
 * CONNECTIONS at most 4 Mi (32 MiB). */
#define MAX_SAMPLES (4u << 20)
/* [constants] */

struct client;

/* One connection and its share of the work. */
struct connection {
	struct client *client;
	unsigned index;
	uint64_t sent;            /* DATA messages handed to the helper */
	uint64_t echoed;          /* their echoes, checked */
	struct timespec *sent_at; /* when message i was sent, at [i % window] */
	double setup_ms;          /* from its dial to its ESTABLISHED */
	double *rtt_us;           /* this connection's slice of client->rtt_us */
	bool bye_sent, bye_answered;
	bool failed;
};

struct client {
	struct rex_options opts;
	struct rex_loop *loop;
	struct rex_svc *svc;
	struct connection *conns; /* opts.qps of them */
	double *rtt_us;           /* opts.qps * opts.count round-trip times */
	uint8_t *msg;             /* a DATA being written: type byte and payload */
	unsigned open, established, failed;
	struct timespec start, all_established, first_send, last_echo;
	struct rex_svc_conn_counts counts; /* every connection's, summed as each closes */
	bool sending; /* first_send is set */
	bool stopping;
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static int parse_command_line(struct client *c, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "send COUNT messages of SIZE bytes on each of CONNECTIONS to "
	               "05-async-server, WINDOW in flight on each, check every echo",
	    .is_server = false,
	    .flags = REX_OPT_SIZE | REX_OPT_COUNT | REX_OPT_WINDOW | REX_OPT_QPS,
	    .defaults = {.size = DEFAULT_SIZE, .count = DEFAULT_COUNT, .window = 1, .qps = 1},
	    .min_size = 1,
	    .max_size = AS_MAX_PAYLOAD,
	    .min_count = 1,
	    .max_count = MAX_COUNT,
	    .max_window = MAX_WINDOW,
	    .max_qps = MAX_QPS,
	};
	int ret;

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	ret = rex_options_parse(&spec, argc, argv, &c->opts, stdout, stderr);
	if (ret == REX_OPTIONS_OK && c->opts.count * c->opts.qps > MAX_SAMPLES) {
		fprintf(stderr,
		        "%s: -n %" PRIu64 " times -q %u: more than the %u round trips "
		        "we keep\n",
		        PROGRAM, c->opts.count, c->opts.qps, MAX_SAMPLES);
		rex_options_usage(&spec, stderr);
		return REX_OPTIONS_BAD;
	}
	return ret;
}

static const char *signal_name(int signo)
{
	return signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "signal";
}

/* [shutdown] */
static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct client *cl = arg;

	(void)loop;
	if (cl->stopping) {
		fprintf(stderr, "client: %s again: leaving at once, without draining\n",
		        signal_name(signo));
		_exit(REX_EXIT_FAILURE);
	}
	cl->stopping = true;
	printf("client: %s: closing %u open connection%s\n", signal_name(signo), cl->open,
	       cl->open == 1 ? "" : "s");
	rex_svc_stop(cl->svc); /* interrupted: a connection short of its echoes failed */
}
/* [shutdown] */

/* [send-window] */
static void send_window(struct rex_svc_conn *c)
{
	struct connection *cn = rex_svc_conn_user(c);
	struct client *cl = cn->client;
	uint32_t len = AS_TYPE_SIZE + (uint32_t)cl->opts.size;
	uint8_t bye = AS_BYE;
	int ret = 0;

	if (!cl->sending) {
		clock_gettime(CLOCK_MONOTONIC, &cl->first_send);
		cl->sending = true;
	}
	/* Keep the window full. The helper waits for the server's credits;
	 * -ENOBUFS says every send slot is taken: on_send_ready() goes on. */
	while (ret == 0 && cn->sent < cl->opts.count && cn->sent - cn->echoed < cl->opts.window) {
		uint64_t seq = (uint64_t)cn->index << 32 | cn->sent; /* unique in the run */

		cl->msg[0] = AS_DATA;
		sr_pattern_fill(cl->msg + AS_TYPE_SIZE, cl->opts.size, seq);
		clock_gettime(CLOCK_MONOTONIC, &cn->sent_at[cn->sent % cl->opts.window]);
		ret = rex_svc_send(c, cl->msg, len); /* copied: cl->msg is ours again */
		cn->sent += ret == 0;
	}
	/* All echoed: BYE. The server answers it with its own; then we
	 * disconnect (on_message()). */
	if (ret == 0 && cn->echoed == cl->opts.count && !cn->bye_sent) {
		ret = rex_svc_send(c, &bye, sizeof(bye));
		cn->bye_sent = ret == 0;
	}
	if (ret && ret != -ENOBUFS)
		rex_svc_close(c, true);
}
/* [send-window] */

/* [handle-echo] */
static void on_message(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	struct connection *cn = rex_svc_conn_user(c);
	struct client *cl = cn->client;
	const uint8_t *m = msg;
	uint64_t seq = (uint64_t)cn->index << 32 | cn->echoed;
	struct timespec now;
	size_t offset;

	if (cn->bye_sent && len == AS_TYPE_SIZE && m[0] == AS_BYE) {
		cn->bye_answered = true;
		rex_svc_conn_peer_done(c); /* the protocol is done with it */
		rex_svc_close(c, false);   /* and we disconnect */
		return;
	}
	if (len != AS_TYPE_SIZE + cl->opts.size || m[0] != AS_DATA || cn->echoed >= cn->sent) {
		fprintf(stderr,
		        "client: %s: unexpected message of %" PRIu32
		        " bytes (type 0x%02x), %" PRIu64 " of %" PRIu64 " echoed\n",
		        rex_svc_conn_name(c), len, len ? m[0] : 0, cn->echoed, cn->sent);
		rex_svc_close(c, true);
		return;
	}
	/* RC delivers in order and the server echoes in order: this is the
	 * echo of the oldest message in flight on this connection. */
	if (!sr_pattern_check(m + AS_TYPE_SIZE, cl->opts.size, seq, &offset)) {
		fprintf(stderr, "client: %s: echo of message %" PRIu64 " differs at offset %zu\n",
		        rex_svc_conn_name(c), cn->echoed, offset);
		rex_svc_close(c, true);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	cn->rtt_us[cn->echoed] =
	    seconds_between(&cn->sent_at[cn->echoed % cl->opts.window], &now) * 1e6;
	cn->echoed++;
	cl->last_echo = now;
	send_window(c); /* room in the window again */
}
/* [handle-echo] */

/* [connection-event] */
/* ESTABLISHED: the server's credits came with it; fill the window. */
static void on_established(struct rex_svc_conn *c, const void *pdata, size_t len)
{
	struct connection *cn = rex_svc_conn_user(c);
	struct client *cl = cn->client;

	struct timespec now;

	(void)pdata;
	(void)len;
	clock_gettime(CLOCK_MONOTONIC, &now);
	cn->setup_ms = seconds_between(&cl->start, &now) * 1e3; /* all are dialled at start */
	if (++cl->established == cl->opts.qps) {
		cl->all_established = now;
		printf("client: %u connection%s established in %.3f s\n", cl->established,
		       cl->established == 1 ? "" : "s",
		       seconds_between(&cl->start, &cl->all_established));
	}
	send_window(c);
}

/* Every echo intact and our BYE answered: a success. */
static void on_closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	struct connection *cn = rex_svc_conn_user(c);
	struct client *cl = cn->client;
	struct rex_svc_conn_counts n;

	rex_svc_conn_counts(c, &n);
	cl->counts.sends += n.sends;
	cl->counts.post_calls += n.post_calls;
	cl->counts.completions += n.completions;
	cn->failed = why != REX_SVC_DONE || cn->echoed < cl->opts.count || !cn->bye_answered;
	if (why == REX_SVC_PEER_LEFT)
		fprintf(stderr,
		        "client: %s: the server disconnected after %" PRIu64 " of %" PRIu64
		        " echoes\n",
		        rex_svc_conn_name(c), cn->echoed, cl->opts.count);
	cl->failed += cn->failed;
	if (--cl->open == 0)
		rex_loop_stop(cl->loop);
}
/* [connection-event] */

/* [start] */
static int start_connections(struct client *cl)
{
	static const int signals[] = {SIGINT, SIGTERM};
	static const struct rex_svc_ops ops = {
	    .established = on_established,
	    .message = on_message,
	    .send_ready = send_window,
	    .closed = on_closed,
	};
	struct rex_svc_config cfg;
	uint8_t hello[AS_HELLO_SIZE];
	unsigned i;

	cl->loop = rex_loop_create();
	if (!cl->loop || rex_loop_add_signals(cl->loop, signals, 2, on_signal, cl))
		return -1;
	cl->conns = calloc(cl->opts.qps, sizeof(*cl->conns));
	cl->rtt_us = calloc(cl->opts.qps * cl->opts.count, sizeof(*cl->rtt_us));
	cl->msg = malloc(AS_TYPE_SIZE + cl->opts.size);
	if (!cl->conns || !cl->rtt_us || !cl->msg) {
		rex_report_errno("calloc", ENOMEM);
		return -1;
	}
	/* Receive slots for the window's echoes (the server's credits), send
	 * slots for the window and the BYE. */
	as_config(&cfg, "client");
	cfg.msg_size = AS_TYPE_SIZE + (uint32_t)cl->opts.size;
	cfg.msg_recvs = cl->opts.window < 4 ? 4 : cl->opts.window;
	cfg.msg_sends = cl->opts.window + 1;
	cfg.send_depth = cfg.msg_sends;
	cl->svc = rex_svc_create(cl->loop, &cfg, &ops, cl);
	if (!cl->svc)
		return -1;
	rex_put_be32(hello, (uint32_t)cl->opts.size); /* our hello: what we send */

	clock_gettime(CLOCK_MONOTONIC, &cl->start);
	for (i = 0; i < cl->opts.qps; i++) {
		struct connection *cn = &cl->conns[i];

		cn->client = cl;
		cn->index = i;
		cn->rtt_us = cl->rtt_us + (size_t)i * cl->opts.count;
		cn->sent_at = calloc(cl->opts.window, sizeof(*cn->sent_at));
		if (!cn->sent_at) {
			rex_report_errno("calloc", ENOMEM);
			return -1; /* the ones started go on; main() waits for them */
		}
		/* Returns at once; on_established() or on_closed() comes later. */
		if (rex_svc_dial(cl->svc, cl->opts.addr, cl->opts.port, hello, sizeof(hello), cn))
			return -1;
		cl->open++;
	}
	printf("client: %u connection%s to %s port %u: %" PRIu64 " messages of %" PRIu64
	       " byte%s each, window %u\n",
	       cl->opts.qps, cl->opts.qps == 1 ? "" : "s", cl->opts.addr, (unsigned)cl->opts.port,
	       cl->opts.count, cl->opts.size, cl->opts.size == 1 ? "" : "s", cl->opts.window);
	return 0;
}
/* [start] */

/* [report] */
static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile of n sorted values (chapter 02's). */
static double percentile(const double *sorted, size_t n, unsigned p)
{
	size_t rank = (n * p + 99) / 100;

	return sorted[rank ? rank - 1 : 0];
}

/* From the dials to each ESTABLISHED, of those established. */
static void report_setup(struct client *cl)
{
	unsigned i, n = 0;

	for (i = 0; i < cl->opts.qps; i++)
		if (cl->conns[i].setup_ms > 0)
			cl->rtt_us[n++] = cl->conns[i].setup_ms; /* rtt_us is free: reused */
	if (n == 0)
		return;
	qsort(cl->rtt_us, n, sizeof(*cl->rtt_us), compare_double);
	printf("client: setup ms: count %u median %.1f p99 %.1f max %.1f\n", n,
	       percentile(cl->rtt_us, n, 50), percentile(cl->rtt_us, n, 99), cl->rtt_us[n - 1]);
}

static void report(struct client *cl)
{
	uint64_t rounds, idle;
	uint64_t total = 0;
	size_t n = 0;
	double elapsed;
	unsigned i;

	for (i = 0; i < cl->opts.qps; i++) {
		struct connection *cn = &cl->conns[i];

		printf("client: connection %u: %" PRIu64 " of %" PRIu64 " echoed%s\n", i + 1,
		       cn->echoed, cl->opts.count, cn->failed ? ", failed" : "");
		/* Gather the times into one array, in place: slice i moves down. */
		memmove(cl->rtt_us + n, cn->rtt_us, cn->echoed * sizeof(*cl->rtt_us));
		n += cn->echoed;
		total += cn->echoed;
	}
	if (n > 0) {
		elapsed = seconds_between(&cl->first_send, &cl->last_echo);
		printf("client: %" PRIu64 " echoes of %" PRIu64 " byte%s intact in %.3f s: %.0f "
		       "messages/s\n",
		       total, cl->opts.size, cl->opts.size == 1 ? "" : "s", elapsed,
		       elapsed > 0 ? (double)total / elapsed : 0.0);
		qsort(cl->rtt_us, n, sizeof(*cl->rtt_us), compare_double);
		printf("client: rtt us: count %zu min %.1f median %.1f p99 %.1f max %.1f\n", n,
		       cl->rtt_us[0], percentile(cl->rtt_us, n, 50), percentile(cl->rtt_us, n, 99),
		       cl->rtt_us[n - 1]);
	}
	report_setup(cl);
	rex_loop_rounds(cl->loop, &rounds, &idle);
	rex_debug(cl->opts.verbose, "client",
	          "the loop ran %" PRIu64 " rounds, %" PRIu64 " of them with nothing ready", rounds,
	          idle);
	rex_debug(cl->opts.verbose, "client",
	          "%" PRIu64 " sends posted in %" PRIu64 " ibv_post_send() calls; %" PRIu64
	          " completions taken",
	          cl->counts.sends, cl->counts.post_calls, cl->counts.completions);
	printf("client: done: %u connection%s, %u failed\n", cl->opts.qps,
	       cl->opts.qps == 1 ? "" : "s", cl->failed);
}
/* [report] */

/* [release] */
static int release_everything(struct client *cl)
{
	int ret = 0;
	unsigned i;

	/* Every connection released its QP, CQ, memory and id already; when
	 * the loop failed they did not (-EBUSY), and the kernel cleans up. */
	ret = rex_svc_destroy(cl->svc);
	for (i = 0; cl->conns && i < cl->opts.qps; i++)
		free(cl->conns[i].sent_at);
	free(cl->conns);
	free(cl->rtt_us);
	free(cl->msg);
	if (rex_loop_destroy(cl->loop))
		ret = -1;
	return ret;
}
/* [release] */

/* [main] */
int main(int argc, char **argv)
{
	struct client cl = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&cl, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	ret = start_connections(&cl);
	/* When starting failed half-way, the connections started are closed,
	 * and drained in the loop like any others. */
	if (ret && cl.svc)
		rex_svc_stop(cl.svc);
	/* Until the last connection is closed (rex_loop_stop()). */
	if ((cl.open == 0 || rex_loop_run(cl.loop) == 0) && ret == 0) {
		report(&cl);
		if (cl.failed == 0)
			status = REX_EXIT_OK;
	}
	if (release_everything(&cl))
		status = REX_EXIT_FAILURE;
	return status;
}
/* [main] */
