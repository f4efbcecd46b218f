/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 05, the server: one thread, one event loop, many clients
 *        at once, each echoed with chapter 02's credits.
 *
 * What it teaches: a service is a handful of callbacks. Everything else is
 * the helper born in this chapter, common/rex_svc.h over rex_aconn.h: a
 * single-threaded `epoll` loop (common/rex_loop.c) over the CM event
 * channel made non-blocking, the completion channel of each device, the
 * device's asynchronous events, a signalfd and timers; the CM events of
 * every connection arriving on one channel and routed through
 * `id->context`; accept without blocking; a state machine per connection
 * (connecting, established, draining, closed); buffers that stay the
 * device's until their completions arrive, even when a client
 * disconnects; deadlines for the handshake and for a client that goes
 * silent; chapter 02's credits. This file says what the service does: check
 * a hello, echo a message, count, and shut down on SIGINT or SIGTERM.
 *
 * Run it, then 05-async-client, on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/05-async-server -a 10.77.0.1 [-p PORT]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/05-async-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/05-async-client -a $RDMA_LAB_ADDR -q 8 -w 4'
 *
 * It serves every client that comes, at once, until SIGINT or SIGTERM; then
 * it stops accepting, disconnects every connection, waits for their work
 * requests to drain, releases everything and prints its totals. A second
 * signal while it drains ends it at once. Exit status: 0 after a signal
 * (clients that failed are counted, not fatal); 1 when the server itself
 * failed (its listener's device went away, say), or on a second signal;
 * 2 bad command line; 77 no RDMA device. The walkthrough is docs/05-async.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "echo.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_loop.h"
#include "rex_options.h"
#include "rex_wire.h"

/* [constants] */
#define PROGRAM "05-async-server"

/* Receive slots per connection: the credits a client starts with (chapter
 * 02's 16). Send slots: as many echoes in flight or waiting for a credit. */
#define SERVER_RECVS 16
#define SERVER_SENDS 16
/* Connections served at once: each registers 32 slots of a header and
 * AS_MAX_PAYLOAD bytes (136 KiB of pinned memory); past it, a new one is
 * rejected (136 MiB in all). A build may set another bound (-D) to find a
 * machine's own limit, as the 06 part 5 page does. */
#ifndef SERVER_MAX_CONNS
#define SERVER_MAX_CONNS 1024u
#endif
/* Connect requests the kernel holds for us until we take them: 32 clients
 * of 8 connections may knock at once. More are rejected by the kernel. */
#define LISTEN_BACKLOG 256
/* [constants] */

struct server {
	struct rex_options opts;
	struct rex_loop *loop;
	struct rex_svc *svc;
	uint64_t echoed;
	bool stopping; /* a signal came: a second one leaves at once */
};

/* One client's connection: what the service keeps of it. */
struct session {
	uint64_t echoed;
	bool bye; /* the client said BYE */
};

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "echo the messages of many 05-async-client connections at once, "
	               "from one thread, until SIGINT or SIGTERM",
	    .is_server = true,
	    /* Chapter 06's shared receive queue (docs/06-mr-pool-srq.md): every
	     * connection's receives from one queue, its share its credits. */
	    .flags = REX_OPT_SRQ,
	    .max_srq = SERVER_RECVS * SERVER_MAX_CONNS,
	};

	int ret;

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	ret = rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
	if (ret == REX_OPTIONS_OK && s->opts.srq && s->opts.srq < SERVER_RECVS) {
		fprintf(stderr,
		        "%s: -S %" PRIu32 ": fewer receives than one connection's %u credits\n",
		        PROGRAM, s->opts.srq, SERVER_RECVS);
		rex_options_usage(&spec, stderr);
		return REX_OPTIONS_BAD;
	}
	return ret;
}

/* [request] */
/* A client knocks: its hello is peer input, checked before we accept. */
static int on_request(struct rex_svc_conn *c, const void *hello, size_t len, void *reply,
                      size_t *reply_len)
{
	struct server *s = rex_svc_user(rex_svc_conn_svc(c));
	struct session *ss;
	uint32_t size = len == AS_HELLO_SIZE ? rex_get_be32(hello) : 0;

	(void)reply, (void)reply_len; /* no answer: the helper's tells the credits */
	if (size < 1 || size > AS_MAX_PAYLOAD) {
		fprintf(stderr, "server: rejecting %s: bad hello (%zu bytes, size %" PRIu32 ")\n",
		        rex_svc_conn_name(c), len, size);
		return -1;
	}
	if (rex_svc_conns(s->svc) >= SERVER_MAX_CONNS) {
		fprintf(stderr, "server: rejecting %s: %u connections open, the most we serve\n",
		        rex_svc_conn_name(c), SERVER_MAX_CONNS);
		return -1;
	}
	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		rex_report_errno("calloc", errno);
		return -1;
	}
	rex_svc_conn_set_user(c, ss);
	printf("server: %s: hello: messages of %" PRIu32 " byte%s: accepting\n",
	       rex_svc_conn_name(c), size, size == 1 ? "" : "s");
	return 0;
}
/* [request] */

/* A DATA, a BYE of one byte, nothing after the BYE: anything else is a
 * broken client, said and closed. */
static bool unexpected(struct rex_svc_conn *c, const struct session *ss, uint8_t type, uint32_t len)
{
	if (!ss->bye && (type == AS_DATA || (type == AS_BYE && len == AS_TYPE_SIZE)))
		return false;
	fprintf(stderr, "server: %s: unexpected message of %" PRIu32 " bytes (type 0x%02x)%s\n",
	        rex_svc_conn_name(c), len, type, ss->bye ? " after BYE" : "");
	return true;
}

/* [echo] */
/* A message: the echo of a DATA, the answer to a BYE. */
static void on_message(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	struct server *s = rex_svc_user(rex_svc_conn_svc(c));
	struct session *ss = rex_svc_conn_user(c);
	uint8_t type = len ? *(const uint8_t *)msg : 0;
	int ret;

	if (unexpected(c, ss, type, len)) {
		rex_svc_close(c, true);
		return;
	}
	/* A DATA goes back as it came, and a BYE too: the client, its BYE
	 * answered, disconnects. Copied: the receive goes back at once. */
	ret = rex_svc_send(c, msg, len);
	if (ret == -ENOBUFS) {
		rex_svc_hold(c); /* every send slot in flight: again when one is free */
	} else if (ret) {
		rex_svc_close(c, true);
	} else if (type == AS_BYE) {
		ss->bye = true;
		rex_svc_conn_peer_done(c); /* its disconnect is the end now */
	} else {
		ss->echoed++;
		s->echoed++;
	}
}
/* [echo] */

/* [closed] */
/* The connection is gone, everything of it released: the last word on it. */
static void on_closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	struct server *s = rex_svc_user(rex_svc_conn_svc(c));
	struct session *ss = rex_svc_conn_user(c);
	struct rex_svc_msg_stats st;

	if (!ss)
		return; /* the helper closed it before our on_request() took it */
	rex_svc_conn_msg_stats(c, &st);
	rex_debug(s->opts.verbose, "server",
	          "%s: messages sent %" PRIu64 ", received %" PRIu64 ", credit-only %" PRIu64
	          ", waits for a credit %" PRIu64,
	          rex_svc_conn_name(c), st.sent, st.received, st.credit_only, st.waits);
	printf("server: %s: closed: %" PRIu64 " echoed%s\n", rex_svc_conn_name(c), ss->echoed,
	       why != REX_SVC_DONE ? ", failed"
	       : ss->bye           ? ""
	                           : ", before its bye");
	free(ss);
}

/* After rex_svc_stop(): the last connection is closed. */
static void on_stopped(struct rex_svc *svc)
{
	struct server *s = rex_svc_user(svc);

	rex_loop_stop(s->loop);
}
/* [closed] */

/* [shut-down] */
static const char *signal_name(int signo)
{
	return signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "signal";
}

static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct server *s = arg;

	(void)loop;
	if (s->stopping) {
		/* Draining takes too long for someone: leave now. When the
		 * process is gone, the kernel tears down whatever it left:
		 * QPs, CQs, registrations, CM ids (the peers see disconnects). */
		fprintf(stderr, "server: %s again: leaving at once, without draining\n",
		        signal_name(signo));
		_exit(REX_EXIT_FAILURE);
	}
	s->stopping = true;
	printf("server: %s: no new connections; closing %u open\n", signal_name(signo),
	       rex_svc_conns(s->svc));
	/* Stop listening, disconnect each; each drains and is released by the
	 * loop, as after any close; on_stopped() after the last. */
	rex_svc_stop(s->svc);
}
/* [shut-down] */

/* -S: every connection's receives from one shared receive queue (chapter
 * 06, docs/06-mr-pool-srq.md); said before the server listens. */
static void share_receives(const struct server *s, struct rex_svc_config *cfg)
{
	cfg->srq_recvs = s->opts.srq;
	if (cfg->srq_recvs)
		printf("server: one shared receive queue of %u receives per device: %u "
		       "connections at most, each starting with %u credits, up to %u\n",
		       cfg->srq_recvs, cfg->srq_recvs / REX_SVC_SRQ_FIRST, REX_SVC_SRQ_FIRST,
		       cfg->msg_recvs);
}

/* [serve] */
static int serve(struct server *s)
{
	static const int signals[] = {SIGINT, SIGTERM};
	static const struct rex_svc_ops ops = {
	    .request = on_request,
	    .message = on_message,
	    .closed = on_closed,
	    .stopped = on_stopped,
	};
	struct rex_svc_config cfg;

	/* SIGINT and SIGTERM become events of the loop, handled between two
	 * completions like anything else: no handler, no flag, no race. */
	s->loop = rex_loop_create();
	if (!s->loop || rex_loop_add_signals(s->loop, signals, 2, on_signal, s))
		return -1;
	as_config(&cfg, "server");
	cfg.msg_size = AS_TYPE_SIZE + AS_MAX_PAYLOAD;
	cfg.msg_recvs = SERVER_RECVS;
	cfg.msg_sends = SERVER_SENDS;
	cfg.send_depth = SERVER_SENDS;
	cfg.backlog = LISTEN_BACKLOG;
	share_receives(s, &cfg);
	s->svc = rex_svc_create(s->loop, &cfg, &ops, s);
	if (!s->svc || rex_svc_serve(s->svc, s->opts.addr, s->opts.port))
		return -1;
	printf("server: listening on %s port %u\n", s->opts.addr ? s->opts.addr : "0.0.0.0",
	       (unsigned)s->opts.port);
	return 0;
}
/* [serve] */

/* With -v, what held the loop longest: a round of completion events, a
 * round of CM events (chapter 05's exercises take their budgets out). */
static void report_loop(const struct server *s, const struct rex_svc_stats *st)
{
	rex_debug(s->opts.verbose, "server",
	          "loop: at most %u completion events in a round (budget %d)",
	          rex_loop_most_cq_events(s->loop), REX_LOOP_BUDGET);
	rex_debug(s->opts.verbose, "server",
	          "loop: at most %u CM events in a round (budget %d), the longest %.1f ms",
	          st->cm.most_events, REX_ACONN_CM_BUDGET, st->cm.longest_round_ns / 1e6);
	rex_debug(s->opts.verbose, "server",
	          "loop: longest CM event %.1f ms; latest begun %.1f ms into its round (budget %d)",
	          st->cm.longest_event_ns / 1e6, st->cm.latest_begin_ns / 1e6,
	          REX_ACONN_CM_BUDGET_MS);
}

/* [report] */
static int report_totals(const struct server *s)
{
	struct rex_svc_stats st;
	struct rex_srq_stats q;

	rex_svc_stats(s->svc, &st);
	printf("server: done: %lu connection%s served, %lu failed, %lu rejected; %" PRIu64
	       " messages echoed\n",
	       st.closed, st.closed == 1 ? "" : "s", st.failed, st.rejected, s->echoed);
	if (rex_svc_srq_stats(s->svc, &q))
		printf("server: shared receive queue: %u receives, %" PRIu64 " taken, %u posted "
		       "at the fewest, %" PRIu64 " low-water events, %lu connections refused\n",
		       q.depth, q.taken, q.min_posted, q.limit_events, st.srq_full);
	report_loop(s, &st);
	return st.listener_lost ? -1 : 0;
}
/* [report] */

/* [main] */
int main(int argc, char **argv)
{
	struct server s = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&s, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	/* Everything happens in callbacks from here on, one at a time, until
	 * the last connection is released after a signal. */
	if (serve(&s) == 0 && rex_loop_run(s.loop) == 0 && report_totals(&s) == 0)
		status = REX_EXIT_OK;
	/* Every connection is gone (the loop ran until then): the devices'
	 * PDs and channels have nothing left in them, and say so. */
	if (rex_svc_release_all(s.svc, s.loop))
		status = REX_EXIT_FAILURE;
	return status;
}
/* [main] */
