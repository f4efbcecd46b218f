/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 05, the server: one thread, one event loop, many clients
 *        at once, each echoed with chapter 02's credits.
 *
 * What it teaches: a single-threaded `epoll` loop (common/rex_loop.c) over
 * the CM event channel made non-blocking, the completion channel of each
 * device, the device's asynchronous events, a signalfd and timers; the CM
 * events of every connection arriving on one channel and routed through
 * `id->context`, each copied and acknowledged before it is acted on; accept
 * without blocking; a state machine per connection (connecting,
 * established, draining, closed); buffers that stay the device's until
 * their completions arrive, even when a client disconnects; deadlines for
 * the handshake and for a client that goes silent; and a graceful shutdown
 * on SIGINT or SIGTERM that releases everything.
 *
 * The service is chapter 02's echo (02-send-recv/wire.h: the hello in
 * private data, 8-byte headers, DATA/ECHO/BYE, credits piggybacked), so any
 * 02 client works against it too. A connection's life is common/rex_aconn.c,
 * born in this chapter; its messages with credits are 05-async/conn.c.
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
 * failed, or on a second signal; 2 bad command line; 77 no RDMA device.
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
#define PROGRAM "05-async-server"

/* Receives we keep posted per connection: the credits a client starts with
 * (chapter 02's 16). Echo buffers: as many, fewer if the client grants fewer. */
#define SERVER_RECVS 16
#define SERVER_SENDS 16
/* Memory registered for all connections at once, in bytes: pinned RAM. A
 * client's hello decides its share (32 slots of header + max payload, up
 * to 32 MiB); past the total, a new connection is rejected. */
#define SERVER_MEMORY_MAX (256u << 20)
/* Connect requests the kernel holds for us until we take them: 32 clients
 * of 8 connections may knock at once. More are rejected by the kernel. */
#define LISTEN_BACKLOG 256
/* [constants] */

struct server;

/* One connection: chapter 02's session, without its blocking waits. */
struct session {
	struct as_conn conn; /* first: the connection's callbacks get &conn */
	struct server *server;
	unsigned long number;
	/* DATA received and not yet echoed, in arrival order. */
	struct {
		uint32_t slot;   /* the receive buffer it is in */
		uint32_t length; /* its payload, checked by sr_header_decode() */
	} pending[SERVER_RECVS];
	uint32_t pending_first, npending;
	uint64_t received, echoed;
	bool bye;                    /* the client said BYE */
	size_t memory;               /* bytes registered for it */
	struct session *prev, *next; /* in server->sessions */
};

struct server {
	struct rex_options opts;
	struct rex_loop *loop;
	struct rdma_cm_id *listener; /* NULL once we stop accepting */
	char name[REX_CM_ADDRESS_LEN];
	struct rex_aconn_devs devices;
	struct session *sessions; /* open ones */
	unsigned long numbered;   /* connections ever taken: numbers them */
	unsigned long open, served, failed, rejected;
	uint64_t echoed;
	size_t memory; /* registered for all open connections */
	bool stopping; /* a signal came: no new connections, exit after the last */
	int status;
};

static void on_completions(struct rex_loop *loop, struct rex_loop_cq *lcq);
static int session_established(struct rex_aconn *c, const struct rex_cm_event *ev);
static bool session_left(struct rex_aconn *c);
static void session_released(struct rex_aconn *c);

/* [session-ops] */
/* What the server does at the steps of a connection's life. */
static const struct rex_aconn_ops session_ops = {
    .established = session_established,
    .peer_left = session_left,
    .released = session_released,
};
/* [session-ops] */

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "echo the messages of many 05-async-client connections at once, "
	               "from one thread, until SIGINT or SIGTERM",
	    .is_server = true,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
}

static const char *signal_name(int signo)
{
	return signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "signal";
}

/* The server is done once it stops accepting and the last connection is gone. */
static void stop_when_idle(struct server *s)
{
	if (s->stopping && s->open == 0)
		rex_loop_stop(s->loop);
}

/* [shutdown] */
/* [shut-down] */
static void shut_down(struct server *s, const char *why)
{
	struct session *ss;

	s->stopping = true;
	printf("server: %s: no new connections; closing %lu open\n", why, s->open);
	/* Stop accepting: requests that arrive now find nobody listening. The
	 * connections the listener made are ids of their own, not touched. */
	if (s->listener && rdma_destroy_id(s->listener))
		rex_report_errno("rdma_destroy_id", errno);
	s->listener = NULL;
	/* Disconnect each; each drains and is released by the loop, as after
	 * any close. (A close only posts the release: the list stays whole.) */
	for (ss = s->sessions; ss; ss = ss->next)
		rex_aconn_close(&ss->conn.ac, false);
	stop_when_idle(s);
}
/* [shut-down] */

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
	shut_down(s, signal_name(signo));
}
/* [shutdown] */

static void reject(struct rdma_cm_id *id)
{
	if (rdma_reject(id, NULL, 0))
		rex_report_errno("rdma_reject", errno);
	if (rdma_destroy_id(id))
		rex_report_errno("rdma_destroy_id", errno);
}

/* [connect-request] */
static void on_connect_request(struct server *s, struct rdma_cm_id *id,
                               const struct rex_cm_event *ev)
{
	char peer[REX_CM_ADDRESS_LEN], why[SR_WHY_SIZE];
	struct sr_hello hello;
	uint8_t data[SR_HELLO_WIRE_SIZE];
	struct rdma_conn_param param = {.private_data = data, .private_data_len = sizeof(data)};
	struct session *ss;
	struct rex_aconn_dev *dev;
	uint32_t sends;
	size_t memory;

	rex_cm_format_address(rdma_get_peer_addr(id), peer, sizeof(peer));
	/* The hello is peer input, and decides how much memory we register:
	 * check it before anything is created. */
	if (sr_hello_decode(ev->private_data, ev->private_data_len, &hello, why, sizeof(why))) {
		fprintf(stderr, "server: rejecting %s: bad hello: %s\n", peer, why);
		goto out_reject;
	}
	sends = hello.credits < SERVER_SENDS ? hello.credits : SERVER_SENDS;
	memory = (size_t)(SERVER_RECVS + sends) * (SR_HEADER_SIZE + hello.max_payload);
	if (s->memory + memory > SERVER_MEMORY_MAX) {
		fprintf(stderr,
		        "server: rejecting %s: its %zu bytes would take the memory registered "
		        "for all connections past %u bytes\n",
		        peer, memory, SERVER_MEMORY_MAX);
		goto out_reject;
	}

	ss = calloc(1, sizeof(*ss));
	if (!ss) {
		rex_report_errno("calloc", errno);
		goto out_reject;
	}
	ss->server = s;
	ss->number = ++s->numbered;
	ss->memory = memory;
	s->memory += memory;
	ss->next = s->sessions;
	if (s->sessions)
		s->sessions->prev = ss;
	s->sessions = ss;
	s->open++;
	/* [accept] */
	/* From here the connection has a state, and every way out of it
	 * (even a failure right now) goes through DRAINING to its release. */
	rex_aconn_init(&ss->conn.ac, &s->devices, id, REX_STATE_CONNECTING, &session_ops);
	snprintf(ss->conn.ac.name, sizeof(ss->conn.ac.name), "connection %lu from %s", ss->number,
	         peer);
	ss->conn.credits = hello.credits;
	ss->conn.credit_limit = hello.credits;

	/* The device's PD and completion channel (made on first use), then
	 * this connection's CQ, QP and buffers, with every receive posted. */
	dev = rex_aconn_dev_get(&s->devices, id->verbs);
	if (!dev || as_conn_create_queues(&ss->conn, dev, sends, SERVER_RECVS, hello.max_payload,
	                                  on_completions, ss))
		goto out_close;

	/* Our hello: the receives we posted are the client's first credits. */
	sr_hello_init(&hello, SERVER_RECVS, hello.max_payload);
	sr_hello_encode(&hello, data);
	/* On a non-blocking channel rdma_accept() returns at once: the
	 * outcome, ESTABLISHED or an error, comes later as an event. */
	if (rex_aconn_accept(&ss->conn.ac, &param))
		goto out_close;
	printf("server: %s: hello: window credits %u, max payload %u byte%s: accepting\n",
	       ss->conn.ac.name, (unsigned)ss->conn.credit_limit, (unsigned)hello.max_payload,
	       hello.max_payload == 1 ? "" : "s");
	return;
	/* [accept] */

out_close:
	rex_aconn_close(&ss->conn.ac, true);
	return;
out_reject:
	s->rejected++;
	reject(id);
}
/* [connect-request] */

/* [echo] */
static int echo_one(struct session *ss)
{
	struct as_conn *c = &ss->conn;
	uint32_t rslot = ss->pending[ss->pending_first].slot;
	uint32_t length = ss->pending[ss->pending_first].length;
	uint32_t slot;
	uint8_t *buf = as_conn_send_buffer(c, &slot);
	int ret;

	/* Copy the payload out, so the receive can be posted again at once,
	 * and its credit go back with this very echo. */
	memcpy(buf + SR_HEADER_SIZE, rex_buffers_slot(&c->recv, rslot) + SR_HEADER_SIZE, length);
	ss->pending_first = (ss->pending_first + 1) % SERVER_RECVS;
	ss->npending--;
	ret = as_conn_repost(c, rslot);
	if (ret)
		return ret;
	ret = as_conn_send(c, slot, SR_ECHO, length);
	if (ret)
		return ret;
	ss->echoed++;
	ss->server->echoed++;
	return 0;
}

static void echo_pending(struct session *ss)
{
	struct as_conn *c = &ss->conn;
	uint32_t slot;

	/* Never without a credit and a free buffer: the client's next message
	 * brings credits, the next send completion frees a buffer. */
	while (ss->npending > 0 && c->credits > 0 && as_conn_send_buffer(c, &slot)) {
		if (echo_one(ss)) {
			rex_aconn_close(&c->ac, true);
			return;
		}
	}
}
/* [echo] */

/* [handle-completion] */
static int handle_completion(struct session *ss, const struct ibv_wc *wc)
{
	struct as_conn *c = &ss->conn;
	uint32_t slot = rex_wr_id_slot(wc->wr_id);
	struct sr_header hdr;
	uint32_t i;

	if (rex_wr_id_kind(wc->wr_id) == REX_WR_SEND)
		return 0; /* an echo is out: rex_aconn's books free its buffer */
	if (as_conn_take_message(c, wc, slot, &hdr))
		return -EPROTO;
	if (hdr.type == SR_ECHO || ss->bye) {
		fprintf(stderr, "server: %s: unexpected %s%s\n", c->ac.name, sr_type_name(hdr.type),
		        ss->bye ? " after BYE" : "");
		return -EPROTO;
	}
	if (hdr.type == SR_BYE) {
		ss->bye = true; /* the client disconnects next */
		return 0;
	}
	/* A DATA: echoed when a credit allows, in the order they came. */
	i = (ss->pending_first + ss->npending) % SERVER_RECVS;
	ss->pending[i].slot = slot;
	ss->pending[i].length = hdr.length;
	ss->npending++;
	ss->received++;
	return 0;
}

/* [on-completions] */
static void on_completions(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	struct session *ss = lcq->arg;
	struct ibv_wc wc[AS_WC_BATCH];
	int good, taken, i;

	(void)loop;
	/* Until the CQ is empty: the loop arms it next, and an arming raises
	 * an event only for completions that come after it. */
	do {
		good = rex_aconn_poll(&ss->conn.ac, wc, AS_WC_BATCH, &taken);
		for (i = 0; i < good && ss->conn.ac.state != REX_STATE_DRAINING; i++)
			if (handle_completion(ss, &wc[i]))
				rex_aconn_close(&ss->conn.ac, true);
	} while (taken == AS_WC_BATCH);
	/* From the accept on, not only once ESTABLISHED: the client may send
	 * as soon as our accept reaches it, and our ESTABLISHED event can wait
	 * in the CM channel behind other clients' connect requests. */
	if (ss->conn.ac.state == REX_STATE_CONNECTING || ss->conn.ac.state == REX_STATE_ESTABLISHED)
		echo_pending(ss);
}
/* [on-completions] */
/* [handle-completion] */

/* [connection-event] */
/* ESTABLISHED: a DATA may have come before this event: echo it now. */
static int session_established(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	struct session *ss = (struct session *)c; /* conn.ac is its first member */

	(void)ev;
	rex_debug(ss->server->opts.verbose, "server", "%s: established", c->name);
	echo_pending(ss);
	return 0;
}

/* The client disconnected: fine after its BYE (taken already), not before. */
static bool session_left(struct rex_aconn *c)
{
	struct session *ss = (struct session *)c;

	if (!ss->bye)
		fprintf(stderr, "server: %s: left before it said bye\n", c->name);
	return ss->bye;
}

/* Connect requests, and the listener's own events; rex_aconn hands every
 * other event to its connection. */
static void on_cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct server *s = arg;

	(void)devs;
	if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		if (s->stopping) {
			s->rejected++;
			reject(ev->id);
		} else
			on_connect_request(s, ev->id, ev);
		return;
	}
	/* ADDR_CHANGE, DEVICE_REMOVAL: the listener's, or the channel failed. */
	fprintf(stderr, "server: listener: %s\n", rdma_event_str(ev->type));
	if (ev->type == RDMA_CM_EVENT_DEVICE_REMOVAL && !s->stopping) {
		s->status = REX_EXIT_FAILURE;
		shut_down(s, ev->status == -EIO ? "the CM event channel failed"
		                                : "the listener's device went away");
	}
}
/* [connection-event] */

/* [released] */
static void session_released(struct rex_aconn *c)
{
	struct session *ss = (struct session *)c; /* conn.ac is its first member */
	struct server *s = ss->server;

	/* The QP is gone: the device touches none of the buffers now. */
	if (as_conn_release_buffers(&ss->conn))
		c->failed = true;
	if (ss->prev)
		ss->prev->next = ss->next;
	else
		s->sessions = ss->next;
	if (ss->next)
		ss->next->prev = ss->prev;
	s->open--;
	s->served++;
	/* A client that never answered our disconnect failed too. */
	if (c->failed || c->drain_cut)
		s->failed++;
	s->memory -= ss->memory;
	printf("server: %s: closed: %" PRIu64 " echoed%s\n", c->name, ss->echoed,
	       c->failed || c->drain_cut ? ", failed"
	       : ss->bye                 ? ""
	                                 : ", before its bye");
	free(ss);
	stop_when_idle(s);
}
/* [released] */

/* [create-loop] */
static int create_loop(struct server *s)
{
	static const int signals[] = {SIGINT, SIGTERM};

	s->loop = rex_loop_create();
	if (!s->loop)
		return -errno;
	/* SIGINT and SIGTERM become events of the loop, handled between two
	 * completions like anything else: no handler, no flag, no race. */
	return rex_loop_add_signals(s->loop, signals, 2, on_signal, s);
}
/* [create-loop] */

/* [listen] */
static int listen_for_clients(struct server *s)
{
	struct rex_aconn_attr attr;
	int ret;

	/* One CM channel for the listener and every connection it makes,
	 * non-blocking and read by the loop; the connections' settings. */
	as_conn_attr(&attr);
	ret = rex_aconn_devs_create(&s->devices, s->loop, "server", &attr, on_cm_event, s);
	if (ret)
		return ret;
	/* Chapter 01's listener, on that channel. */
	ret = rex_aconn_listen(&s->devices, s->opts.addr, s->opts.port, LISTEN_BACKLOG,
	                       &s->listener);
	if (ret)
		return ret; /* release_everything() undoes what was made */
	rex_cm_format_address(rdma_get_local_addr(s->listener), s->name, sizeof(s->name));
	printf("server: listening on %s\n", s->name);
	return 0;
}
/* [listen] */

/* [run] */
static int run_loop(struct server *s)
{
	/* Everything happens in callbacks from here on, one at a time, until
	 * the last connection is released after a signal. */
	int ret = rex_loop_run(s->loop);

	if (ret)
		s->status = REX_EXIT_FAILURE;
	return ret;
}
/* [run] */

/* [report] */
static void report_totals(const struct server *s)
{
	printf("server: done: %lu connection%s served, %lu failed, %lu rejected; %" PRIu64
	       " messages echoed\n",
	       s->served, s->served == 1 ? "" : "s", s->failed, s->rejected, s->echoed);
}
/* [report] */

/* [release] */
static int release_everything(struct server *s)
{
	int ret = 0;

	if (s->listener && rdma_destroy_id(s->listener)) {
		ret = -errno;
		rex_report_errno("rdma_destroy_id", errno);
	}
	/* Every connection is gone (the loop ran until then): the devices'
	 * PDs and channels have nothing left in them, and say so. */
	if (rex_aconn_devs_destroy(&s->devices) == 0 && ret == 0)
		printf("server: released everything: no QP, CQ, memory region or CM id left\n");
	else
		ret = ret ? ret : -EBUSY;
	return ret;
}
/* [release] */

/* [main] */
int main(int argc, char **argv)
{
	struct server s = {0};
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&s, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	s.status = REX_EXIT_FAILURE;
	if (create_loop(&s))
		goto out_destroy_loop;
	if (listen_for_clients(&s))
		goto out_release;
	s.status = REX_EXIT_OK;
	if (run_loop(&s) == 0)
		report_totals(&s);

out_release:
	if (release_everything(&s))
		s.status = REX_EXIT_FAILURE;
out_destroy_loop:
	if (rex_loop_destroy(s.loop))
		s.status = REX_EXIT_FAILURE;
	return s.status;
}
/* [main] */
