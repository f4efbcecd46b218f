/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 01, the client: one connection through the RDMA connection manager.
 *
 * What it teaches: the RDMA connection manager (CM) and its event channel;
 * resolving the server's address and then a route to it; the three verbs
 * objects every connection needs (a protection domain, a completion queue with
 * a completion channel, and a reliable-connected queue pair); connecting with
 * a small versioned greeting in the CM's private data, and reading the
 * server's greeting back; disconnecting; and tearing everything down in the
 * reverse order of creation.
 *
 * Run it against 01-connect-server on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/01-connect-server -a 10.77.0.1 &
 *     build/bin/01-connect-client -a 10.77.0.1
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab run -- sh -c 'build/bin/01-connect-server -a "$RDMA_LAB_ADDR" & sleep 1;
 *         build/bin/01-connect-client -a "$RDMA_LAB_ADDR"; wait'
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
/* How long the disconnect handshake may take, in ms: one round trip. */
#define DISCONNECT_TIMEOUT_MS 2000

/* Queue sizes. This chapter posts no work at all, but a queue pair needs
 * room for at least one work request per queue; small numbers keep the
 * memory the device reserves for us small (chapter 02 posts real work). */
#define QUEUE_DEPTH 4                 /* work requests per send and per receive queue */
#define CQ_ENTRIES  (2 * QUEUE_DEPTH) /* one completion for every request of both queues */
#define SGE_PER_WR  1                 /* scatter/gather entries per work request */

/* How often the device resends a packet the peer did not acknowledge, and a
 * send the peer had no receive posted for (receiver not ready, RNR). Both
 * are 3-bit fields where 7 means "retry forever": a dead peer would then
 * hang us instead of failing the work request. 6 is the most that ends. */
#define RETRY_COUNT     6
#define RNR_RETRY_COUNT 6
/* [constants] */

/* Everything the client owns, created in this order, destroyed in reverse. */
struct client {
	struct rex_options opts;
	struct rdma_event_channel *channel;    /* where the CM reports our events */
	struct rdma_cm_id *id;                 /* our end of the connection */
	struct ibv_pd *pd;                     /* protection domain */
	struct ibv_comp_channel *comp_channel; /* how the CQ would wake us */
	struct ibv_cq *cq;                     /* completion queue */
	/* the queue pair is c->id->qp: rdma_create_qp() hangs it on the id */
	bool connected;      /* ESTABLISHED arrived: disconnect at the end */
	int teardown_errors; /* a destroy call failed: exit 1 */
};

/* The numeric text of an address, e.g. "10.77.0.1", for messages. */
static const char *format_address(const struct sockaddr *sa, char *buf, size_t len)
{
	socklen_t sa_len =
	    sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	int ret = getnameinfo(sa, sa_len, buf, len, NULL, 0, NI_NUMERICHOST);

	if (ret)
		snprintf(buf, len, "(address unknown: %s)", gai_strerror(ret));
	return buf;
}

static int parse_command_line(struct client *c, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "connect to 01-connect-server through the RDMA CM, exchange "
	               "greetings, disconnect",
	    .is_server = false,
	};

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
	return 0;
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

/* [resolve-address] */
static int resolve_address(struct client *c)
{
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM, /* one answer per address, not one per socket type */
	};
	struct addrinfo *ai;
	char port[8];
	char text[NI_MAXHOST];
	int ret;
	int err;

	/* -a may be a name: turn it into an IP address first, as for TCP. */
	snprintf(port, sizeof(port), "%u", (unsigned)c->opts.port);
	ret = getaddrinfo(c->opts.addr, port, &hints, &ai);
	if (ret) {
		fprintf(stderr,
		        "getaddrinfo %s: %s\n  hint: check the server's name or address given with "
		        "-a\n",
		        c->opts.addr, ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -EHOSTUNREACH;
	}

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
	printf("client: address resolved: %s via %s port %u\n",
	       format_address(rdma_get_peer_addr(c->id), text, sizeof(text)),
	       ibv_get_device_name(c->id->verbs->device), (unsigned)c->id->port_num);
	return 0;
}
/* [resolve-address] */

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

/* [create-pd] */
static int create_pd(struct client *c)
{
	int err;

	/*
	 * A protection domain groups the queue pairs and the memory regions that
	 * may be used together: a QP can only touch memory registered in its own
	 * PD. One PD per connection keeps connections apart.
	 */
	c->pd = ibv_alloc_pd(c->id->verbs);
	if (!c->pd) {
		err = errno;
		rex_report_errno("ibv_alloc_pd", err);
		return -err;
	}
	printf("client: protection domain allocated\n");
	return 0;
}
/* [create-pd] */

/* [create-cq] */
static int create_cq(struct client *c)
{
	int err;
	int ret;

	/* Devices differ in how big their queues may be: ask, do not assume. */
	ret = rex_device_check_queues(c->id->verbs, CQ_ENTRIES, QUEUE_DEPTH, SGE_PER_WR);
	if (ret)
		return ret;

	/*
	 * The device reports each finished work request as a completion in a
	 * completion queue (CQ). A program can poll the CQ, or sleep until the
	 * CQ signals its completion channel, a file descriptor like the CM's
	 * event channel. Chapter 02 uses both; here we only create them.
	 */
	c->comp_channel = ibv_create_comp_channel(c->id->verbs);
	if (!c->comp_channel) {
		err = errno;
		rex_report_errno("ibv_create_comp_channel", err);
		return -err;
	}
	c->cq = ibv_create_cq(c->id->verbs, CQ_ENTRIES, NULL, c->comp_channel, 0);
	if (!c->cq) {
		err = errno;
		rex_report_errno("ibv_create_cq", err);
		goto out_destroy_comp_channel;
	}
	/* The device may round the size up: cqe is what we really got. */
	printf("client: completion queue created: %d entries, with a completion channel\n",
	       c->cq->cqe);
	return 0;

out_destroy_comp_channel:
	ret = ibv_destroy_comp_channel(c->comp_channel); /* returns an errno value */
	if (ret)
		rex_report_errno("ibv_destroy_comp_channel", ret);
	c->comp_channel = NULL;
	return -err;
}
/* [create-cq] */

/* [create-qp] */
static int create_qp(struct client *c)
{
	struct ibv_qp_init_attr attr = {
	    .send_cq = c->cq, /* one CQ for both queues: simple, and enough here */
	    .recv_cq = c->cq,
	    .cap =
	        {
	            .max_send_wr = QUEUE_DEPTH,
	            .max_recv_wr = QUEUE_DEPTH,
	            .max_send_sge = SGE_PER_WR,
	            .max_recv_sge = SGE_PER_WR,
	        },
	    .qp_type = IBV_QPT_RC, /* reliable connected: ordered, acknowledged */
	};
	int err;

	/*
	 * The queue pair (QP) is the connection's engine: a send queue and a
	 * receive queue of work requests that the device executes. Created
	 * through the CM, the QP belongs to our id, and the CM moves it through
	 * its states (INIT, ready to receive, ready to send) while connecting.
	 */
	if (rdma_create_qp(c->id, c->pd, &attr)) {
		err = errno;
		rex_report_errno("rdma_create_qp", err);
		return -err;
	}
	printf("client: queue pair created: RC, number %u\n", c->id->qp->qp_num);
	return 0;
}
/* [create-qp] */

/* [connect] */
static int connect_to_server(struct client *c)
{
	uint8_t data[GREETING_WIRE_SIZE];
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
	printf("client: connecting with greeting: version %u \"%s\"\n", (unsigned)hello.version,
	       hello.text);
	return 0;
}
/* [connect] */

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

/* [wait-established] */
static int wait_for_established(struct client *c)
{
	struct rex_cm_event ev;
	struct greeting peer;
	char text[NI_MAXHOST];
	char why[GREETING_WHY_SIZE];
	int ret;

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
		        "client: no answer from %s port %u\n"
		        "  hint: is the server running at that address, and is it reachable over "
		        "RDMA?\n",
		        format_address(rdma_get_peer_addr(c->id), text, sizeof(text)),
		        (unsigned)c->opts.port);
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
}
/* [wait-established] */

/* [disconnect] */
static void disconnect(struct client *c)
{
	int ret;

	if (!c->connected)
		return;
	/*
	 * rdma_disconnect() moves our QP to the error state (any work still
	 * queued would complete with a flush error) and sends a disconnect
	 * request (DREQ). The server's CM replies (DREP), and both sides get
	 * DISCONNECTED.
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

/* [teardown] */
/*
 * Teardown, in the reverse order of creation: the QP uses the CQ and the PD,
 * the CQ uses the completion channel, and all of them hang off the id's
 * device, which the id keeps open until rdma_destroy_id(). A destroy call
 * fails (EBUSY) when something still uses the object: a bug worth an exit 1.
 */
static void destroy_qp(struct client *c)
{
	rdma_destroy_qp(c->id); /* returns nothing: it cannot report failure */
}

static void destroy_cq(struct client *c)
{
	int ret = ibv_destroy_cq(c->cq); /* returns an errno value */

	if (ret) {
		rex_report_errno("ibv_destroy_cq", ret);
		c->teardown_errors++;
	}
	ret = ibv_destroy_comp_channel(c->comp_channel); /* returns an errno value */
	if (ret) {
		rex_report_errno("ibv_destroy_comp_channel", ret);
		c->teardown_errors++;
	}
}

static void destroy_pd(struct client *c)
{
	int ret = ibv_dealloc_pd(c->pd); /* returns an errno value */

	if (ret) {
		rex_report_errno("ibv_dealloc_pd", ret);
		c->teardown_errors++;
	}
}

static void destroy_id(struct client *c)
{
	if (rdma_destroy_id(c->id)) {
		rex_report_errno("rdma_destroy_id", errno);
		c->teardown_errors++;
	}
}

static void destroy_event_channel(struct client *c)
{
	rdma_destroy_event_channel(c->channel); /* returns nothing */
}
/* [teardown] */

/* [main] */
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

	if (create_event_channel(&c))
		goto out;
	if (create_id(&c))
		goto out_destroy_event_channel;
	if (resolve_address(&c))
		goto out_destroy_id;
	if (resolve_route(&c))
		goto out_destroy_id;
	if (create_pd(&c))
		goto out_destroy_id;
	if (create_cq(&c))
		goto out_destroy_pd;
	if (create_qp(&c))
		goto out_destroy_cq;
	if (connect_to_server(&c))
		goto out_destroy_qp;
	if (wait_for_established(&c))
		goto out_disconnect;
	status = REX_EXIT_OK;

out_disconnect:
	disconnect(&c);
out_destroy_qp:
	destroy_qp(&c);
out_destroy_cq:
	destroy_cq(&c);
out_destroy_pd:
	destroy_pd(&c);
out_destroy_id:
	destroy_id(&c);
out_destroy_event_channel:
	destroy_event_channel(&c);
out:
	return c.teardown_errors ? REX_EXIT_FAILURE : status;
}
/* [main] */
