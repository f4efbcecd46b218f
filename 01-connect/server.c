/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 01, the server: accepting a connection through the RDMA connection manager.
 *
 * What it teaches: the RDMA connection manager (CM) and its event channel;
 * binding and listening; a connect request as an event that brings a new
 * rdma_cm_id; checking the client's versioned greeting (CM private data)
 * before committing any resources, and rejecting a bad one; accepting with a
 * greeting of our own; answering the client's disconnect; tearing down in
 * the reverse order of creation. (The PD, CQ and QP: connection.c.)
 *
 * Run it, then 01-connect-client: build/bin/01-connect-server -a 10.77.0.1
 * on a machine with RDMA (a NIC, or Soft-RoCE), or in the lab VM:
 *
 *     scripts/lab pair 'build/bin/01-connect-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/01-connect-client -a $RDMA_LAB_ADDR'
 *
 * It serves one client, then exits (serving many is chapter 05). Exit
 * status: 0 the client was served; 1 it was refused or something failed
 * (stderr names the call); 2 bad command line; 77 no RDMA device.
 * The walkthrough is docs/01-connect.md.
 */
#include <errno.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "connection.h"
#include "rex_cm.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

/* [constants] */
#define PROGRAM "01-connect-server" /* also the text of our greeting */

/* Connect requests the CM holds for us until we take one. We serve one
 * client; others that knock meanwhile are refused when the listener goes. */
#define LISTEN_BACKLOG 8
/* How long we wait, after accepting, for the client's confirmation (RTU), in
 * ms. It normally takes one round trip; a client not there after 5 s has
 * given up or died. */
#define ESTABLISHED_TIMEOUT_MS 5000
/* How long we wait for a connected client to disconnect, in ms. This
 * chapter's client disconnects at once. A client that vanishes without a
 * disconnect request (a crash of its machine, a cut cable) is never noticed
 * otherwise: an idle RC connection sends nothing, so nothing times out. */
#define PEER_DISCONNECT_TIMEOUT_MS 30000

/* How often the client's device resends a send we had no receive posted for
 * (receiver not ready, RNR): our accept tells the client's QP. A 3-bit field
 * where 7 means "retry forever", which would hang the client instead of
 * failing its send. 6 is the most that ends. (There is no RETRY_COUNT here:
 * rdma_accept() ignores retry_count; the client's connect request sets it.) */
#define RNR_RETRY_COUNT 6
/* [constants] */

/* Everything the server owns, created in this order, destroyed in reverse. */
struct server {
	struct rex_options opts;
	struct rdma_event_channel *listen_channel; /* where connect requests arrive */
	struct rdma_cm_id *listener;               /* bound to the port */
	struct rdma_event_channel *channel;        /* the client's connection's events */
	struct rdma_cm_id *id;                     /* the client's connection */
	struct connection conn;                    /* its PD, CQ and QP (connection.h) */
	struct rex_cm_event request;               /* the connect request, private data included */
	char peer[REX_CM_ADDRESS_LEN];             /* the client's address and port, for messages */
	bool client_left;                          /* its DISCONNECTED came before ESTABLISHED */
	int teardown_errors;                       /* a destroy call failed: exit 1 */
};

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "accept one 01-connect-client connection through the RDMA CM, "
	               "exchange greetings, answer its disconnect",
	    .is_server = true,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
}

/* [create-event-channel] */
static int create_event_channel(struct rdma_event_channel **channel)
{
	int err;

	/*
	 * The connection manager works asynchronously: a call such as
	 * rdma_listen() only starts something, and what happens later (a client
	 * asks to connect, a client disconnects) arrives as an event on an event
	 * channel. The channel is a file descriptor, so it can be poll()ed with
	 * a timeout.
	 */
	*channel = rdma_create_event_channel();
	if (!*channel) {
		err = errno;
		rex_report_errno("rdma_create_event_channel", err);
		return -err;
	}
	/* Non-blocking: a readable CM fd can still block, since librdmacm may
	 * discard an event and read again. */
	err = rex_cm_channel_nonblocking(*channel);
	if (err) {
		rdma_destroy_event_channel(*channel); /* returns nothing */
		*channel = NULL;
	}
	return err;
}
/* [create-event-channel] */

/* [create-id] */
static int create_id(struct server *s)
{
	int err;

	/*
	 * An rdma_cm_id is to RDMA what a socket is to TCP. This one will only
	 * listen, like a listening socket: the client that connects arrives
	 * with an id of its own. RDMA_PS_TCP asks for the reliable, connected
	 * service (a queue pair of type RC).
	 */
	if (rdma_create_id(s->listen_channel, &s->listener, NULL, RDMA_PS_TCP)) {
		err = errno;
		rex_report_errno("rdma_create_id", err);
		return -err;
	}
	return 0;
}
/* [create-id] */

static int listen_for_client(struct server *s)
{
	struct addrinfo hints = {
	    /* Without -a: the wildcard address, all IPv4 interfaces. */
	    .ai_family = s->opts.addr ? AF_UNSPEC : AF_INET,
	    .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM, /* one answer per address, not one per socket type */
	};
	struct addrinfo *ai;
	char port[8];
	char text[REX_CM_ADDRESS_LEN];
	int ret;
	int err;

	snprintf(port, sizeof(port), "%u", (unsigned)s->opts.port);
	ret = getaddrinfo(s->opts.addr, port, &hints, &ai);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s\n  hint: check the address given with -a",
		           s->opts.addr ? s->opts.addr : "(any)",
		           ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -EADDRNOTAVAIL;
	}

	/* [listen] */
	/*
	 * Binding claims the port in the CM's own port space (separate from
	 * TCP's). Binding to an address of an RDMA interface also ties the id
	 * to that device; the wildcard address listens on every device.
	 */
	ret = rdma_bind_addr(s->listener, ai->ai_addr);
	err = errno;
	freeaddrinfo(ai);
	if (ret) {
		rex_report_errno("rdma_bind_addr", err);
		return -err;
	}
	if (rdma_listen(s->listener, LISTEN_BACKLOG)) {
		err = errno;
		rex_report_errno("rdma_listen", err);
		return -err;
	}
	printf("server: listening on %s\n",
	       rex_cm_format_address(rdma_get_local_addr(s->listener), text, sizeof(text)));
	return 0;
	/* [listen] */
}

static int wait_for_connect_request(struct server *s)
{
	struct rdma_cm_id *id;
	int ret;
	int err;

	/* [wait-connect-request] */
	/* A client's connect request (REQ) arrives as an event: wait for it. */
	ret = rex_cm_wait(s->listen_channel, RDMA_CM_EVENT_CONNECT_REQUEST, -1, &s->request);
	if (ret)
		return ret;

	/*
	 * The event brings a new id, made for this connection: we own it now,
	 * and must accept, reject or destroy it. Its events would arrive on the
	 * listener's channel, where a second client's request could come
	 * between them; so we move the id to an event channel of its own.
	 */
	id = s->request.id;
	ret = create_event_channel(&s->channel);
	if (ret)
		goto out_destroy_id;
	if (rdma_migrate_id(id, s->channel)) {
		err = errno;
		rex_report_errno("rdma_migrate_id", err);
		ret = -err;
		goto out_destroy_event_channel;
	}
	s->id = id;
	printf("server: connect request from %s\n",
	       rex_cm_format_address(rdma_get_peer_addr(id), s->peer, sizeof(s->peer)));
	return 0;
	/* [wait-connect-request] */

out_destroy_event_channel:
	rdma_destroy_event_channel(s->channel); /* returns nothing */
	s->channel = NULL;
out_destroy_id:
	/* Destroying an id we have not accepted makes the CM reject the client. */
	if (rdma_destroy_id(id))
		rex_report_errno("rdma_destroy_id", errno);
	return ret;
}

/* [reject] */
static void reject_client(struct server *s, const char *why)
{
	uint8_t data[REFUSAL_SIZE_MAX];
	char reason[REFUSAL_SIZE_MAX];
	size_t len;

	/*
	 * rdma_reject() answers the request with a reject (REJ), which can
	 * carry private data too (at most 148 bytes): we put the reason there,
	 * as plain text that a client of any version can print.
	 */
	snprintf(reason, sizeof(reason), "bad greeting: %s", why);
	len = refusal_encode(reason, data, sizeof(data));
	if (rdma_reject(s->id, data, (uint8_t)len))
		rex_report_errno("rdma_reject", errno);
}
/* [reject] */

/* [check-greeting] */
static int check_greeting(struct server *s)
{
	struct greeting hello;
	char why[GREETING_WHY_SIZE];
	int ret;

	/*
	 * The client's greeting came in the connect request's private data. On
	 * InfiniBand and RoCE that field is 56 bytes whatever the client sent,
	 * so expect padding after the greeting. We check it before we spend any
	 * resources on this client, and refuse it if we do not understand it.
	 */
	rex_debug(s->opts.verbose, "server", "CONNECT_REQUEST carried %u bytes of private data",
	          (unsigned)s->request.private_data_len);
	ret = greeting_decode(s->request.private_data, s->request.private_data_len, &hello, why,
	                      sizeof(why));
	if (ret) {
		fprintf(stderr, "server: rejecting %s: bad greeting: %s\n", s->peer, why);
		reject_client(s, why);
		return ret;
	}
	printf("server: greeting from client: version %u \"%s\"\n", (unsigned)hello.version,
	       hello.text);
	return 0;
}
/* [check-greeting] */

/* [accept] */
static int accept_client(struct server *s)
{
	uint8_t data[GREETING_WIRE_SIZE];
	struct rdma_conn_param param = {
	    /* Our greeting, in the accept's private data (at most 196 bytes). */
	    .private_data = data,
	    .private_data_len = sizeof(data),
	    /* RDMA READs in flight, each way: none in this chapter. */
	    .responder_resources = 0,
	    .initiator_depth = 0,
	    .rnr_retry_count = RNR_RETRY_COUNT, /* for the client's QP */
	};
	struct greeting hello;
	int err;
	int ret;

	ret = greeting_init(&hello, PROGRAM);
	if (ret) {
		rex_report_errno("greeting_init", ret);
		return ret;
	}
	greeting_encode(&hello, data);

	/* Makes our QP ready to receive and to send, then sends the accept
	 * (REP): from the server's side, the connection is ready to use. */
	if (rdma_accept(s->id, &param)) {
		err = errno;
		rex_report_errno("rdma_accept", err);
		return -err;
	}
	printf("server: accepting with greeting: version %u \"%s\"\n", (unsigned)hello.version,
	       hello.text);
	return 0;
}
/* [accept] */

/* [wait-established] */
static int wait_for_established(struct server *s)
{
	struct rex_cm_event ev;
	int ret;

	/* The client confirms our accept (RTU), and the CM reports
	 * ESTABLISHED: the connection is up at both ends. But a client that
	 * leaves at once can be seen to leave first: its disconnect request
	 * may be handled before its RTU (or the RTU was lost), and then
	 * DISCONNECTED comes alone. It had our accept: that is its normal end. */
	ret = rex_cm_wait_either(s->channel, RDMA_CM_EVENT_ESTABLISHED, RDMA_CM_EVENT_DISCONNECTED,
	                         ESTABLISHED_TIMEOUT_MS, &ev);
	if (ret)
		return ret;
	if (ev.type == RDMA_CM_EVENT_DISCONNECTED) {
		s->client_left = true;
		printf("server: client left before its connection was established here\n");
		return 0;
	}
	printf("server: connection established\n");
	return 0;
}
/* [wait-established] */

/* [wait-disconnect] */
static int wait_for_disconnect(struct server *s)
{
	int ret = 0;
	int err;

	/* The client's disconnect request (DREQ) arrives as DISCONNECTED
	 * (read already when it came in place of ESTABLISHED). */
	if (!s->client_left)
		ret = rex_cm_wait(s->channel, RDMA_CM_EVENT_DISCONNECTED,
		                  PEER_DISCONNECT_TIMEOUT_MS, NULL);
	if (ret == -ETIMEDOUT)
		fprintf(stderr,
		        "server: client %s did not disconnect within %d ms: disconnecting it\n",
		        s->peer, PEER_DISCONNECT_TIMEOUT_MS);
	/* Nothing has answered the DREQ yet: the CM sends the reply (DREP) only
	 * when we call rdma_disconnect() (or destroy the id), and until then the
	 * client's own wait for DISCONNECTED goes on. rdma_disconnect() also
	 * moves our QP to the error state, so no work can run on it any more.
	 * After a timeout, the same call ends the connection from our side. */
	if (rdma_disconnect(s->id)) {
		err = errno;
		rex_report_errno("rdma_disconnect", err);
		return ret ? ret : -err;
	}
	if (ret)
		return ret;
	printf("server: client disconnected\n");
	return 0;
}
/* [wait-disconnect] */

/* Teardown goes on after a failed destroy call, but remembers it: exit 1.
 * \p err is the call's errno value, 0 when it worked. */
static void teardown_check(struct server *s, const char *call, int err)
{
	if (err) {
		rex_report_errno(call, err);
		s->teardown_errors++;
	}
}

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

	/* [main] */
	if (create_event_channel(&s.listen_channel))
		goto out;
	if (create_id(&s))
		goto out_destroy_listener_channel;
	if (listen_for_client(&s))
		goto out_destroy_listener_id;
	if (wait_for_connect_request(&s)) /* the client's id and channel are ours now */
		goto out_destroy_listener_id;
	if (check_greeting(&s))
		goto out_destroy_client_id;
	if (create_pd(s.id, &s.conn, "server"))
		goto out_destroy_client_id;
	if (create_cq(s.id, &s.conn, "server"))
		goto out_dealloc_pd;
	if (create_qp(s.id, &s.conn, "server"))
		goto out_destroy_cq;
	if (accept_client(&s))
		goto out_destroy_qp;
	if (wait_for_established(&s))
		goto out_destroy_qp;
	if (wait_for_disconnect(&s))
		goto out_destroy_qp;
	status = REX_EXIT_OK;
	/* [main] */

	/* [teardown] */
	/* Teardown, in the reverse order of creation: the QP uses the CQ and
	 * the PD, the CQ its completion channel, and the id holds the device
	 * open. A destroy call fails (EBUSY) when something still uses the
	 * object: a bug worth an exit 1. verbs return an errno value; rdma_*
	 * return -1 and set errno. */
out_destroy_qp:
	rdma_destroy_qp(s.id); /* returns nothing: it cannot report failure */
out_destroy_cq:
	teardown_check(&s, "ibv_destroy_cq", ibv_destroy_cq(s.conn.cq));
	teardown_check(&s, "ibv_destroy_comp_channel",
	               ibv_destroy_comp_channel(s.conn.comp_channel));
out_dealloc_pd:
	teardown_check(&s, "ibv_dealloc_pd", ibv_dealloc_pd(s.conn.pd));
out_destroy_client_id:
	teardown_check(&s, "rdma_destroy_id", rdma_destroy_id(s.id) ? errno : 0);
	rdma_destroy_event_channel(s.channel); /* returns nothing */
out_destroy_listener_id:
	teardown_check(&s, "rdma_destroy_id", rdma_destroy_id(s.listener) ? errno : 0);
out_destroy_listener_channel:
	rdma_destroy_event_channel(s.listen_channel);
out:
	return s.teardown_errors ? REX_EXIT_FAILURE : status;
	/* [teardown] */
}
