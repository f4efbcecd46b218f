/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 01, the client: one connection through the RDMA connection manager.
 *
 * What it teaches: the RDMA connection manager (CM) and its event channel;
 * resolving the server's address and then a route to it; connecting with a
 * small versioned greeting in the CM's private data, and reading the
 * server's greeting back; disconnecting; tearing down in the reverse order
 * of creation. (The PD, CQ and QP every connection needs: connection.c.)
 *
 * Run it against 01-connect-server: build/bin/01-connect-client -a 10.77.0.1
 * on a machine with RDMA (a NIC, or Soft-RoCE), or in the lab VM:
 *
 *     scripts/lab pair 'build/bin/01-connect-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/01-connect-client -a $RDMA_LAB_ADDR'
 *
 * Exit status: 0 connected and disconnected cleanly; 1 something failed (the
 * message on stderr names the call); 2 bad command line; 77 no RDMA device.
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
#define PROGRAM "01-connect-client" /* also the text of our greeting */

/* How long the CM may take to find the RDMA device that reaches the server
 * and the server's hardware address (on RoCE: an ARP lookup), in ms. A LAN
 * answers in well under a millisecond; 2 s allows for a busy machine and
 * still fails fast. */
#define RESOLVE_ADDR_TIMEOUT_MS 2000
/* How long the CM may take to find a path to the server, in ms. On RoCE the
 * route is a local routing-table lookup; InfiniBand asks the subnet manager. */
#define RESOLVE_ROUTE_TIMEOUT_MS 2000
/* We wait this much longer than the CM's own timeout for its answer, in ms,
 * so the CM's precise error event arrives before our generic "no event". */
#define CM_EVENT_SLACK_MS 1000
/* How long we wait for the server to accept, in ms. The CM itself resends a
 * lost connect request for well over a minute before it gives up; a server
 * that has not answered in 5 s is not coming, and a user wants to know now. */
#define CONNECT_TIMEOUT_MS 5000
/* How long the disconnect handshake may take, in ms: one round trip, as the
 * server answers our request at once. */
#define DISCONNECT_TIMEOUT_MS 2000

/* How often a device resends a packet the peer did not acknowledge
 * (RETRY_COUNT: our connect request sets it for both queue pairs, since
 * rdma_accept() ignores the server's), and a send the peer had no receive
 * posted for (receiver not ready, RNR: ours sets the server's QP, the
 * server's accept sets ours). Both are 3-bit fields. RNR retry 7 means
 * "forever", which would hang a sender instead of failing it; retry count 7
 * is an ordinary count in the spec, but Soft-RoCE reads it as forever too.
 * 6 is the most that ends everywhere. */
#define RETRY_COUNT     6
#define RNR_RETRY_COUNT 6
/* [constants] */

/* Everything the client owns, created in this order, destroyed in reverse. */
struct client {
	struct rex_options opts;
	struct rdma_event_channel *channel; /* where the CM reports our events */
	struct rdma_cm_id *id;              /* our end of the connection */
	struct connection conn;             /* its PD, CQ and QP (connection.h) */
	bool connected;                     /* ESTABLISHED arrived: disconnect at the end */
	int teardown_errors;                /* a destroy call failed: exit 1 */
};

static int parse_command_line(struct client *c, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "connect to 01-connect-server through the RDMA CM, exchange "
	               "greetings, disconnect",
	    .is_server = false,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &c->opts, stdout, stderr);
}

/* [create-event-channel] */
static int create_event_channel(struct client *c)
{
	int err;

	/*
	 * The connection manager works asynchronously: a call such as
	 * rdma_resolve_addr() only starts an operation, and its outcome arrives
	 * later as an event (ADDR_RESOLVED, or ADDR_ERROR) on an event channel.
	 * The channel is a file descriptor, so it can be poll()ed with a timeout.
	 */
	c->channel = rdma_create_event_channel();
	if (!c->channel) {
		err = errno;
		rex_report_errno("rdma_create_event_channel", err);
		return -err;
	}
	/* Non-blocking: a readable CM fd can still block, since librdmacm may
	 * discard an event and read again. */
	err = rex_cm_channel_nonblocking(c->channel);
	if (err) {
		rdma_destroy_event_channel(c->channel); /* returns nothing */
		c->channel = NULL;
	}
	return err;
}
/* [create-event-channel] */

/* [create-id] */
static int create_id(struct client *c)
{
	int err;

	/*
	 * An rdma_cm_id is to RDMA what a socket is to TCP: the handle for one
	 * end of one connection. RDMA_PS_TCP asks for the reliable, connected
	 * service (a queue pair of type RC); its events go to our channel.
	 */
	if (rdma_create_id(c->channel, &c->id, NULL, RDMA_PS_TCP)) {
		err = errno;
		rex_report_errno("rdma_create_id", err);
		return -err;
	}
	return 0;
}
/* [create-id] */

static int resolve_address(struct client *c)
{
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM, /* one answer per address, not one per socket type */
	};
	struct addrinfo *ai;
	char port[8];
	char text[REX_CM_ADDRESS_LEN];
	int ret;
	int err;

	/* -a may be a name: turn it into an IP address first, as for TCP. */
	snprintf(port, sizeof(port), "%u", (unsigned)c->opts.port);
	ret = getaddrinfo(c->opts.addr, port, &hints, &ai);
	if (ret) {
		rex_errorf(
		    "getaddrinfo %s: %s\n  hint: check the server's name or address given with -a",
		    c->opts.addr, ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -EHOSTUNREACH;
	}

	/* [resolve-address] */
	/*
	 * Address resolution finds which local RDMA device and port reach the
	 * server, and binds our id to them: from now on c->id->verbs is that
	 * device, open and ready. On RoCE it also resolves the server's Ethernet
	 * address, as ARP does for IP. We use the first address the name gave.
	 */
	ret = rdma_resolve_addr(c->id, NULL, ai->ai_addr, RESOLVE_ADDR_TIMEOUT_MS);
	err = errno;
	freeaddrinfo(ai);
	if (ret) {
		rex_report_errno("rdma_resolve_addr", err);
		return -err;
	}
	ret = rex_cm_wait(c->channel, RDMA_CM_EVENT_ADDR_RESOLVED,
	                  RESOLVE_ADDR_TIMEOUT_MS + CM_EVENT_SLACK_MS, NULL);
	if (ret)
		return ret;
	printf("client: address resolved: %s via %s (device port %u)\n",
	       rex_cm_format_address(rdma_get_peer_addr(c->id), text, sizeof(text)),
	       ibv_get_device_name(c->id->verbs->device), (unsigned)c->id->port_num);
	return 0;
	/* [resolve-address] */
}

/* [resolve-route] */
static int resolve_route(struct client *c)
{
	int err;
	int ret;

	/* The route is the path the connection's packets take. On RoCE it comes
	 * from the IP routing table (and gives the GID to send from). */
	if (rdma_resolve_route(c->id, RESOLVE_ROUTE_TIMEOUT_MS)) {
		err = errno;
		rex_report_errno("rdma_resolve_route", err);
		return -err;
	}
	ret = rex_cm_wait(c->channel, RDMA_CM_EVENT_ROUTE_RESOLVED,
	                  RESOLVE_ROUTE_TIMEOUT_MS + CM_EVENT_SLACK_MS, NULL);
	if (ret)
		return ret;
	printf("client: route resolved\n");
	return 0;
}
/* [resolve-route] */

static int connect_to_server(struct client *c)
{
	uint8_t data[GREETING_WIRE_SIZE];
	/* [connect] */
	struct rdma_conn_param param = {
	    /* What we say about ourselves: the server reads it before it
	     * accepts, so it can turn away a client it does not understand. */
	    .private_data = data,
	    .private_data_len = sizeof(data),
	    /* RDMA READs in flight, each way: none in this chapter. Chapter
	     * 03 raises them; granting what is not needed is wasted trust. */
	    .responder_resources = 0,
	    .initiator_depth = 0,
	    .retry_count = RETRY_COUNT,
	    .rnr_retry_count = RNR_RETRY_COUNT,
	};
	struct greeting hello;
	char text[REX_CM_ADDRESS_LEN];
	int err;
	int ret;

	ret = greeting_init(&hello, PROGRAM);
	if (ret) {
		rex_report_errno("greeting_init", ret);
		return ret;
	}
	greeting_encode(&hello, data);

	/* Sends the CM's connect request (REQ) with our greeting inside. */
	if (rdma_connect(c->id, &param)) {
		err = errno;
		rex_report_errno("rdma_connect", err);
		return -err;
	}
	/* [connect] */
	/* Our own address and port: the server names us by them. */
	printf("client: connecting from %s with greeting: version %u \"%s\"\n",
	       rex_cm_format_address(rdma_get_local_addr(c->id), text, sizeof(text)),
	       (unsigned)hello.version, hello.text);
	return 0;
}

/* [explain-rejection] */
/* The server may have said why it refused us: a refusal, plain text in the
 * reject's private data. Like everything a peer sends, it is checked first. */
static void explain_rejection(const struct rex_cm_event *ev)
{
	char reason[REFUSAL_SIZE_MAX];

	if (refusal_decode(ev->private_data, ev->private_data_len, reason, sizeof(reason)))
		return; /* no reason given, or none we can print */
	fprintf(stderr,
	        "client: the server refused the connection: %s\n"
	        "  hint: run a client and a server of the same chapter and version\n",
	        reason);
}
/* [explain-rejection] */

static int wait_for_established(struct client *c)
{
	struct rex_cm_event ev;
	struct greeting peer;
	char text[REX_CM_ADDRESS_LEN];
	char why[GREETING_WHY_SIZE];
	int ret;

	/* [wait-established] */
	/*
	 * The server answers our REQ with an accept (REP, carrying its greeting)
	 * or a reject (REJ). On an accept the CM makes our QP ready to receive
	 * and to send, confirms (RTU) and reports ESTABLISHED; on a reject,
	 * REJECTED.
	 */
	ret = rex_cm_wait(c->channel, RDMA_CM_EVENT_ESTABLISHED, CONNECT_TIMEOUT_MS, &ev);
	if (ret == -ECONNREFUSED)
		explain_rejection(&ev);
	if (ret == -ETIMEDOUT)
		fprintf(stderr,
		        "client: no answer from %s\n"
		        "  hint: is the server running at that address, and is it reachable over "
		        "RDMA?\n",
		        rex_cm_format_address(rdma_get_peer_addr(c->id), text, sizeof(text)));
	if (ret)
		return ret;
	c->connected = true;

	/* The CM pads private data to the size of its field: 196 bytes here. */
	rex_debug(c->opts.verbose, "client", "ESTABLISHED carried %u bytes of private data",
	          (unsigned)ev.private_data_len);
	ret = greeting_decode(ev.private_data, ev.private_data_len, &peer, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "client: bad greeting from the server: %s\n", why);
		return ret;
	}
	printf("client: connected: server says version %u \"%s\"\n", (unsigned)peer.version,
	       peer.text);
	return 0;
	/* [wait-established] */
}

/* [disconnect] */
static void disconnect(struct client *c)
{
	int ret;

	if (!c->connected)
		return;
	/*
	 * rdma_disconnect() moves our QP to the error state (any work still
	 * queued would complete with a flush error) and sends a disconnect
	 * request (DREQ). The server gets DISCONNECTED and answers with an
	 * rdma_disconnect() of its own (DREP); then we get DISCONNECTED.
	 */
	if (rdma_disconnect(c->id)) {
		rex_report_errno("rdma_disconnect", errno);
		c->teardown_errors++;
		return;
	}
	ret = rex_cm_wait(c->channel, RDMA_CM_EVENT_DISCONNECTED, DISCONNECT_TIMEOUT_MS, NULL);
	if (ret) {
		c->teardown_errors++;
		return;
	}
	printf("client: disconnected\n");
}
/* [disconnect] */

/* Teardown goes on after a failed destroy call, but remembers it: exit 1.
 * \p err is the call's errno value, 0 when it worked. */
static void teardown_check(struct client *c, const char *call, int err)
{
	if (err) {
		rex_report_errno(call, err);
		c->teardown_errors++;
	}
}

int main(int argc, char **argv)
{
	struct client c = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&c, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	/* [main] */
	if (create_event_channel(&c))
		goto out;
	if (create_id(&c))
		goto out_destroy_event_channel;
	if (resolve_address(&c))
		goto out_destroy_id;
	if (resolve_route(&c))
		goto out_destroy_id;
	if (create_pd(c.id, &c.conn, "client"))
		goto out_destroy_id;
	if (create_cq(c.id, &c.conn, "client"))
		goto out_dealloc_pd;
	if (create_qp(c.id, &c.conn, "client"))
		goto out_destroy_cq;
	if (connect_to_server(&c))
		goto out_destroy_qp;
	if (wait_for_established(&c))
		goto out_disconnect;
	status = REX_EXIT_OK;
	/* [main] */

	/* [teardown] */
out_disconnect:
	disconnect(&c);
	/* Teardown, in the reverse order of creation: the QP uses the CQ and
	 * the PD, the CQ its completion channel, and the id holds the device
	 * open. A destroy call fails (EBUSY) when something still uses the
	 * object: a bug worth an exit 1. verbs return an errno value; rdma_*
	 * return -1 and set errno. */
out_destroy_qp:
	rdma_destroy_qp(c.id); /* returns nothing: it cannot report failure */
out_destroy_cq:
	teardown_check(&c, "ibv_destroy_cq", ibv_destroy_cq(c.conn.cq));
	teardown_check(&c, "ibv_destroy_comp_channel",
	               ibv_destroy_comp_channel(c.conn.comp_channel));
out_dealloc_pd:
	teardown_check(&c, "ibv_dealloc_pd", ibv_dealloc_pd(c.conn.pd));
out_destroy_id:
	teardown_check(&c, "rdma_destroy_id", rdma_destroy_id(c.id) ? errno : 0);
out_destroy_event_channel:
	rdma_destroy_event_channel(c.channel); /* returns nothing */
out:
	return c.teardown_errors ? REX_EXIT_FAILURE : status;
	/* [teardown] */
}
