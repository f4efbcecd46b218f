/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 05, the client: one thread driving many connections, each
 *        keeping a window of messages in flight.
 *
 * What it teaches: the same event loop as the server (common/rex_loop.c);
 * the active side of the CM without a single blocking call (address and
 * route resolution, connect: each call returns at once, each outcome is an
 * event routed through `id->context`); a window of requests in flight on
 * every connection, limited by the server's credits; and numbers for the
 * whole: totals, per-connection counts, round-trip median and p99, and
 * messages per second.
 *
 * Run it against 05-async-server (or 02-send-recv-server, which speaks
 * the same protocol, one connection at a time):
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
#include <netdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "conn.h"
#include "rex_cm.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_loop.h"
#include "rex_options.h"
#include "wire.h"

/* [constants] */
#define PROGRAM "05-async-client"

#define DEFAULT_SIZE  64      /* payload bytes per message (-s) */
#define DEFAULT_COUNT 1000    /* messages per connection (-n) */
#define MAX_COUNT     1000000 /* per connection */
#define MAX_WINDOW    64      /* messages in flight per connection (-w) */
#define MAX_QPS       256     /* connections (-q): a QP, a CQ, 2 regions each */
/* We keep the round-trip time of every message, 8 bytes each: COUNT times
 * CONNECTIONS at most 4 Mi (32 MiB). */
#define MAX_SAMPLES (4u << 20)
/* Reasons in a REJECTED event (IB CM reject reasons, as on RoCE): nobody
 * listens on that port ("invalid service ID"), or the server's program
 * called rdma_reject() ("consumer defined"). */
#define REJ_NO_LISTENER 8
#define REJ_BY_SERVER   28
/* [constants] */

struct client;

/* One connection and its share of the work. */
struct connection {
	struct as_conn conn; /* first: the connection's callbacks get &conn.ac */
	struct client *client;
	unsigned index;
	uint64_t sent;            /* DATA messages posted */
	uint64_t echoed;          /* their echoes, checked */
	struct timespec *sent_at; /* when message i was posted, at [i % window] */
	double *rtt_us;           /* this connection's slice of client->rtt_us */
	uint64_t bye_number; /* the send number of our BYE */
	bool bye_posted, bye_done;
	bool released;
};

struct client {
	struct rex_options opts;
	struct rex_loop *loop;
	struct addrinfo *server;            /* resolved once, for all of them */
	struct rex_aconn_devs devices;
	struct connection *conns; /* opts.qps of them */
	double *rtt_us;           /* opts.qps * opts.count round-trip times */
	unsigned open, established, failed;
	struct timespec start, all_established, first_send, last_echo;
	bool sending; /* first_send is set */
	bool stopping;
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void on_completions(struct rex_loop *loop, struct rex_loop_cq *lcq);
static int connect_connection(struct rex_aconn *c);
static int connection_established(struct rex_aconn *c, const struct rex_cm_event *ev);
static bool server_left(struct rex_aconn *c);
static void connection_failed(struct rex_aconn *c, const struct rex_cm_event *ev);
static void connection_released(struct rex_aconn *c);

/* [connection-ops] */
/* What the client does at the steps of a connection's life. */
static const struct rex_aconn_ops connection_ops = {
    .route_resolved = connect_connection,
    .established = connection_established,
    .peer_left = server_left,
    .cm_failed = connection_failed,
    .released = connection_released,
};
/* [connection-ops] */

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
	    .max_size = SR_MAX_PAYLOAD,
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

/* Close every connection started and not released yet, as failed. */
static void close_all(struct client *cl)
{
	unsigned i;

	for (i = 0; cl->conns && i < cl->opts.qps; i++)
		if (cl->conns[i].conn.ac.id && !cl->conns[i].released)
			rex_aconn_close(&cl->conns[i].conn.ac, true);
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
	close_all(cl); /* interrupted: not a success */
}
/* [shutdown] */

/* [send-window] */
static int post_message(struct connection *cn, uint8_t type)
{
	struct as_conn *c = &cn->conn;
	uint64_t seq = (uint64_t)cn->index << 32 | cn->sent; /* unique in the whole run */
	uint32_t slot;
	uint8_t *buf = as_conn_send_buffer(c, &slot);
	uint32_t length = type == SR_DATA ? (uint32_t)cn->client->opts.size : 0;
	int ret;

	if (type == SR_DATA) {
		sr_pattern_fill(buf + SR_HEADER_SIZE, length, seq);
		clock_gettime(CLOCK_MONOTONIC, &cn->sent_at[cn->sent % cn->client->opts.window]);
	}
	ret = as_conn_send(c, slot, type, length);
	if (ret)
		return ret;
	if (type == SR_BYE) {
		cn->bye_number = c->ac.sq_posted; /* the send just numbered */
		cn->bye_posted = true;
	}
	return 0;
}

static void send_window(struct connection *cn)
{
	struct client *cl = cn->client;
	struct as_conn *c = &cn->conn;
	uint32_t slot;

	if (c->ac.state != REX_STATE_ESTABLISHED)
		return;
	if (!cl->sending) {
		clock_gettime(CLOCK_MONOTONIC, &cl->first_send);
		cl->sending = true;
	}
	/* Keep the window full: as long as messages are left, the window has
	 * room, the server has granted a credit and a buffer is free. */
	while (cn->sent < cl->opts.count && cn->sent - cn->echoed < cl->opts.window &&
	       c->credits > 0 && as_conn_send_buffer(c, &slot)) {
		if (post_message(cn, SR_DATA))
			goto out_close;
		cn->sent++;
	}
	/* All echoed: BYE, which needs a credit too. Its completion means the
	 * server has it; then we disconnect. */
	if (cn->echoed == cl->opts.count && !cn->bye_posted && c->credits > 0 &&
	    as_conn_send_buffer(c, &slot) && post_message(cn, SR_BYE))
		goto out_close;
	return;
out_close:
	rex_aconn_close(&c->ac, true);
}
/* [send-window] */

/* [handle-echo] */
static int handle_echo(struct connection *cn, const struct ibv_wc *wc, uint32_t slot)
{
	struct client *cl = cn->client;
	struct as_conn *c = &cn->conn;
	const uint8_t *buf = rex_buffers_slot(&c->recv, slot);
	uint64_t seq = (uint64_t)cn->index << 32 | cn->echoed;
	struct sr_header hdr;
	struct timespec now;
	size_t offset;

	if (as_conn_take_message(c, wc, slot, &hdr))
		return -EPROTO;
	if (hdr.type != SR_ECHO || hdr.length != cl->opts.size || cn->echoed >= cn->sent) {
		fprintf(
		    stderr,
		    "client: %s: unexpected %s of %u bytes, %" PRIu64 " of %" PRIu64 " echoed\n",
		    c->ac.name, sr_type_name(hdr.type), (unsigned)hdr.length, cn->echoed, cn->sent);
		return -EPROTO;
	}
	/* RC delivers in order and the server echoes in order: this is the
	 * echo of the oldest message in flight on this connection. */
	if (!sr_pattern_check(buf + SR_HEADER_SIZE, hdr.length, seq, &offset)) {
		fprintf(stderr, "client: %s: echo of message %" PRIu64 " differs at offset %zu\n",
		        c->ac.name, cn->echoed, offset);
		return -EBADMSG;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	cn->rtt_us[cn->echoed] =
	    seconds_between(&cn->sent_at[cn->echoed % cl->opts.window], &now) * 1e6;
	cn->echoed++;
	cl->last_echo = now;
	/* The buffer is free again: post it, and owe the server a credit. */
	return as_conn_repost(c, slot);
}

static void on_completions(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	struct connection *cn = lcq->arg;
	struct as_conn *c = &cn->conn;
	struct ibv_wc wc[AS_WC_BATCH];
	int good, taken, i, ret;

	(void)loop;
	do {
		good = rex_aconn_poll(&c->ac, wc, AS_WC_BATCH, &taken);
		for (i = 0; i < good && c->ac.state == REX_STATE_ESTABLISHED; i++) {
			if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV) {
				ret = handle_echo(cn, &wc[i], rex_wr_id_slot(wc[i].wr_id));
				if (ret)
					rex_aconn_close(&c->ac, true);
				continue;
			}
			/* A send is done: rex_aconn's books free its buffer. */
			if (cn->bye_posted &&
			    rex_aconn_send_number(&c->ac, wc[i].wr_id) == cn->bye_number) {
				cn->bye_done = true;
				rex_aconn_close(&c->ac, false); /* the disconnect: we are done */
			}
		}
	} while (taken == AS_WC_BATCH);
	send_window(cn);
}
/* [handle-echo] */

/* [connect] */
/* [connect-route] */
/* ROUTE_RESOLVED: the id knows its device now. Queues, buffers, receives,
 * then the connect request with our hello. */
static int connect_connection(struct rex_aconn *ac)
{
	struct connection *cn = (struct connection *)ac; /* conn.ac is its first member */
	struct client *cl = cn->client;
	uint32_t slots = cl->opts.window + 1; /* the window, and BYE */
	uint8_t data[SR_HELLO_WIRE_SIZE];
	struct sr_hello hello;
	struct rex_aconn_dev *dev;
	struct rdma_conn_param param = {.private_data = data, .private_data_len = sizeof(data)};

	dev = rex_aconn_dev_get(&cl->devices, ac->id->verbs);
	if (!dev)
		return -ENODEV;
	if (as_conn_create_queues(&cn->conn, dev, slots, slots, (uint32_t)cl->opts.size,
	                          on_completions, cn))
		return -EIO;
	/* Our hello: the receives we posted, and the largest payload we send. */
	sr_hello_init(&hello, (uint16_t)slots, (uint32_t)cl->opts.size);
	sr_hello_encode(&hello, data);
	/* Returns at once: ESTABLISHED comes later, as an event. */
	return rex_aconn_connect(ac, &param);
}
/* [connect-route] */

/* ESTABLISHED: the server's hello came with it; check it, then send. */
static int check_server_hello(struct connection *cn, const struct rex_cm_event *ev)
{
	struct as_conn *c = &cn->conn;
	struct sr_hello hello;
	char why[SR_WHY_SIZE];
	int ret;

	ret = sr_hello_decode(ev->private_data, ev->private_data_len, &hello, why, sizeof(why));
	if (ret == 0 && hello.max_payload < cn->client->opts.size) {
		snprintf(why, sizeof(why), "max payload %u, but we send %" PRIu64,
		         (unsigned)hello.max_payload, cn->client->opts.size);
		ret = -EMSGSIZE;
	}
	if (ret) {
		fprintf(stderr, "client: %s: bad hello from the server: %s\n", c->ac.name, why);
		return ret;
	}
	c->credits = hello.credits;
	c->credit_limit = hello.credits;
	return 0;
}
/* [connect] */

/* [connection-event] */
/* ESTABLISHED: check the server's hello, then fill the window. */
static int connection_established(struct rex_aconn *ac, const struct rex_cm_event *ev)
{
	struct connection *cn = (struct connection *)ac;
	struct client *cl = cn->client;
	int ret = check_server_hello(cn, ev);

	if (ret)
		return ret;
	if (++cl->established == cl->opts.qps) {
		clock_gettime(CLOCK_MONOTONIC, &cl->all_established);
		printf("client: %u connection%s established in %.3f s\n", cl->established,
		       cl->established == 1 ? "" : "s",
		       seconds_between(&cl->start, &cl->all_established));
	}
	send_window(cn);
	return 0;
}

/* The server disconnected first: fine only once our BYE is through. */
static bool server_left(struct rex_aconn *ac)
{
	struct connection *cn = (struct connection *)ac;

	if (!cn->bye_done)
		fprintf(stderr,
		        "client: %s: the server disconnected after %" PRIu64 " of %" PRIu64
		        " echoes\n",
		        ac->name, cn->echoed, cn->client->opts.count);
	return cn->bye_done;
}

/* A rejection says why in a number: hints for the two we expect. */
static void connection_failed(struct rex_aconn *ac, const struct rex_cm_event *ev)
{
	(void)ac;
	if (ev->type != RDMA_CM_EVENT_REJECTED)
		return;
	if (ev->status == REJ_NO_LISTENER)
		fprintf(stderr, "  hint: %s\n  hint: %s\n", rex_errno_hint("rdma_connect", ECONNREFUSED),
		        rex_options_hint("rdma_connect", ECONNREFUSED));
	else if (ev->status == REJ_BY_SERVER)
		fprintf(stderr, "  hint: the server rejected it: its output says why\n");
}

/* Every id of ours is a connection, whose events rex_aconn routes: what
 * comes here is the channel itself failing. Nothing more will come. */
static void on_cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	(void)devs;
	fprintf(stderr, "client: %s: closing every connection\n",
	        ev->status == -EIO ? "the CM event channel failed" : rdma_event_str(ev->type));
	close_all(arg);
}
/* [connection-event] */

/* [released] */
static void connection_released(struct rex_aconn *c)
{
	struct connection *cn = (struct connection *)c; /* conn.ac is its first member */
	struct client *cl = cn->client;

	cn->released = true;
	/* The QP is gone: the device touches none of the buffers now. */
	if (as_conn_release_buffers(&cn->conn))
		c->failed = true;
	/* Every echo intact and our BYE taken: a success, even if the
	 * server's answer to our disconnect came late (c->drain_cut). */
	if (c->failed || cn->echoed < cl->opts.count || !cn->bye_done)
		cl->failed++;
	rex_debug(cl->opts.verbose, "client", "%s: released", c->name);
	if (--cl->open == 0)
		rex_loop_stop(cl->loop);
}
/* [released] */

/* [create-loop] */
static int create_loop(struct client *cl)
{
	static const int signals[] = {SIGINT, SIGTERM};

	cl->loop = rex_loop_create();
	if (!cl->loop)
		return -errno;
	return rex_loop_add_signals(cl->loop, signals, 2, on_signal, cl);
}
/* [create-loop] */

/* [start] */
static int start_connections(struct client *cl)
{
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICSERV, .ai_family = AF_INET, .ai_socktype = SOCK_STREAM};
	struct rex_aconn_attr attr;
	char port[8];
	unsigned i;
	int ret;

	snprintf(port, sizeof(port), "%u", (unsigned)cl->opts.port);
	ret = getaddrinfo(cl->opts.addr, port, &hints, &cl->server);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s", cl->opts.addr, gai_strerror(ret));
		cl->server = NULL;
		return -EINVAL;
	}
	cl->conns = calloc(cl->opts.qps, sizeof(*cl->conns));
	cl->rtt_us = calloc(cl->opts.qps * cl->opts.count, sizeof(*cl->rtt_us));
	if (!cl->conns || !cl->rtt_us) {
		rex_report_errno("calloc", ENOMEM);
		return -ENOMEM;
	}
	/* One CM channel for every connection, non-blocking and read by the
	 * loop; the connections' settings. All our ids are connections, so no
	 * event is left for us to handle but a failing channel. */
	as_conn_attr(&attr);
	ret = rex_aconn_devs_create(&cl->devices, cl->loop, "client", &attr, on_cm_event, cl);
	if (ret)
		return ret;

	clock_gettime(CLOCK_MONOTONIC, &cl->start);
	for (i = 0; i < cl->opts.qps; i++) {
		struct connection *cn = &cl->conns[i];
		struct rdma_cm_id *id;

		cn->client = cl;
		cn->index = i;
		cn->rtt_us = cl->rtt_us + (size_t)i * cl->opts.count;
		cn->sent_at = calloc(cl->opts.window, sizeof(*cn->sent_at));
		if (!cn->sent_at) {
			rex_report_errno("calloc", ENOMEM);
			return -ENOMEM; /* the ones started go on; main() waits for them */
		}
		if (rdma_create_id(cl->devices.channel, &id, NULL, RDMA_PS_TCP)) {
			ret = -errno;
			rex_report_errno("rdma_create_id", errno);
			return ret;
		}
		rex_aconn_init(&cn->conn.ac, &cl->devices, id, REX_STATE_RESOLVING, &connection_ops);
		snprintf(cn->conn.ac.name, sizeof(cn->conn.ac.name), "connection %u", i);
		cl->open++;
		/* Returns at once; ADDR_RESOLVED (or ADDR_ERROR) comes as an event. */
		if (rex_aconn_resolve(&cn->conn.ac, cl->server->ai_addr))
			rex_aconn_close(&cn->conn.ac, true);
	}
	printf("client: %u connection%s to %s port %u: %" PRIu64 " messages of %" PRIu64
	       " byte%s each, window %u\n",
	       cl->opts.qps, cl->opts.qps == 1 ? "" : "s", cl->opts.addr, (unsigned)cl->opts.port,
	       cl->opts.count, cl->opts.size, cl->opts.size == 1 ? "" : "s", cl->opts.window);
	return 0;
}
/* [start] */

/* [run] */
static int run_loop(struct client *cl)
{
	/* Until the last connection is released (rex_loop_stop()). */
	return cl->open ? rex_loop_run(cl->loop) : 0;
}
/* [run] */

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

static void report(struct client *cl)
{
	uint64_t total = 0;
	size_t n = 0;
	double elapsed;
	unsigned i;

	for (i = 0; i < cl->opts.qps; i++) {
		struct connection *cn = &cl->conns[i];

		printf("client: connection %u: %" PRIu64 " of %" PRIu64 " echoed%s\n", i,
		       cn->echoed, cl->opts.count,
		       cn->conn.ac.failed || cn->echoed < cl->opts.count || !cn->bye_done ? ", failed"
		                                                                       : "");
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
	ret = rex_aconn_devs_destroy(&cl->devices);
	for (i = 0; cl->conns && i < cl->opts.qps; i++)
		free(cl->conns[i].sent_at);
	free(cl->conns);
	free(cl->rtt_us);
	if (cl->server)
		freeaddrinfo(cl->server);
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

	if (create_loop(&cl))
		goto out_destroy_loop;
	ret = start_connections(&cl);
	/* When starting failed half-way, the connections started are closed,
	 * and drained in the loop like any others. */
	if (ret)
		close_all(&cl);
	if (run_loop(&cl) == 0 && ret == 0) {
		report(&cl);
		if (cl.failed == 0)
			status = REX_EXIT_OK;
	}
	if (release_everything(&cl))
		status = REX_EXIT_FAILURE;
out_destroy_loop:
	if (rex_loop_destroy(cl.loop))
		status = REX_EXIT_FAILURE;
	return status;
}
/* [main] */
