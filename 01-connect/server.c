/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 01, the server: accepting connections through the RDMA connection manager.
 *
 * What it teaches: the RDMA connection manager (CM) and its event channel;
 * binding and listening; a connect request as an event that brings a new
 * rdma_cm_id with it; checking the client's versioned greeting (CM private
 * data) before committing any resources, and rejecting a client that sends a
 * bad one; the protection domain, completion queue with a completion channel
 * and reliable-connected queue pair of a connection; accepting with a
 * greeting of our own; waiting for the client to disconnect; and tearing
 * everything down in the reverse order of creation.
 *
 * Run it, then 01-connect-client, on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/01-connect-server -a 10.77.0.1 [-p PORT] [-c CLIENTS]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab run -- sh -c 'build/bin/01-connect-server -a "$RDMA_LAB_ADDR" & sleep 1;
 *         build/bin/01-connect-client -a "$RDMA_LAB_ADDR"; wait'
 *
 * It serves one client, or -c CLIENTS one after another (0: until killed).
 * Exit status: 0 every client was served; 1 a client failed or something
 * else did (stderr names the call); 2 bad command line; 77 no RDMA device.
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
#define PROGRAM "01-connect-server" /* also the text of our greeting */

/* Connect requests the CM holds for us while we are busy with a client. */
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
/* The most clients -c accepts (0 means no limit). */
#define MAX_CLIENTS 1000000

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

/* One end of the CM: an event channel and an id, and for a connection the
 * verbs objects, created in this order and destroyed in reverse. */
struct endpoint {
	struct rdma_event_channel *channel; /* where the CM reports this id's events */
	struct rdma_cm_id *id;
	struct ibv_pd *pd;                     /* protection domain */
	struct ibv_comp_channel *comp_channel; /* how the CQ would wake us */
	struct ibv_cq *cq;                     /* completion queue */
	/* the queue pair is ep->id->qp: rdma_create_qp() hangs it on the id */
	int teardown_errors; /* a destroy call failed */
};

struct server {
	struct rex_options opts;
	struct endpoint listener;    /* bound to the port; sees connect requests */
	struct endpoint conn;        /* the client being served */
	struct rex_cm_event request; /* its connect request, private data included */
	char peer[NI_MAXHOST];       /* its address, for messages */
	unsigned long served;        /* clients handled, well or not */
	unsigned long failed;        /* of those, the ones that failed */
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

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "accept 01-connect-client connections through the RDMA CM, "
	               "exchange greetings, wait for the disconnect",
	    .is_server = true,
	    .flags = REX_OPT_CLIENTS,
	    .defaults = {.clients = 1},
	    .max_clients = MAX_CLIENTS,
	};

	return rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
}

/* [create-event-channel] */
static int create_event_channel(struct endpoint *ep)
{
	int err;

	/*
	 * The connection manager works asynchronously: a call such as
	 * rdma_listen() only starts something, and what happens later (a client
	 * asks to connect, a client disconnects) arrives as an event on an event
	 * channel. The channel is a file descriptor, so it can be poll()ed with
	 * a timeout.
	 */
	ep->channel = rdma_create_event_channel();
	if (!ep->channel) {
		err = errno;
		rex_report_errno("rdma_create_event_channel", err);
		return -err;
	}
	return 0;
}
/* [create-event-channel] */

/* [create-id] */
static int create_id(struct endpoint *ep)
{
	int err;

	/*
	 * An rdma_cm_id is to RDMA what a socket is to TCP. This one will only
	 * listen, like a listening socket: each client that connects arrives
	 * with an id of its own. RDMA_PS_TCP asks for the reliable, connected
	 * service (a queue pair of type RC).
	 */
	if (rdma_create_id(ep->channel, &ep->id, NULL, RDMA_PS_TCP)) {
		err = errno;
		rex_report_errno("rdma_create_id", err);
		return -err;
	}
	return 0;
}
/* [create-id] */

/* [listen] */
static int listen_for_clients(struct server *s)
{
	struct addrinfo hints = {
	    /* Without -a: the wildcard address, all IPv4 interfaces. */
	    .ai_family = s->opts.addr ? AF_UNSPEC : AF_INET,
	    .ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	    .ai_socktype = SOCK_STREAM, /* one answer per address, not one per socket type */
	};
	struct addrinfo *ai;
	char port[8];
	char text[NI_MAXHOST];
	int ret;
	int err;

	snprintf(port, sizeof(port), "%u", (unsigned)s->opts.port);
	ret = getaddrinfo(s->opts.addr, port, &hints, &ai);
	if (ret) {
		fprintf(stderr, "getaddrinfo %s: %s\n  hint: check the address given with -a\n",
		        s->opts.addr ? s->opts.addr : "(any)",
		        ret == EAI_SYSTEM ? strerror(errno) : gai_strerror(ret));
		return -EADDRNOTAVAIL;
	}

	/*
	 * Binding claims the port in the CM's own port space (separate from
	 * TCP's). Binding to an address of an RDMA interface also ties the id
	 * to that device; the wildcard address listens on every device.
	 */
	ret = rdma_bind_addr(s->listener.id, ai->ai_addr);
	err = errno;
	freeaddrinfo(ai);
	if (ret) {
		rex_report_errno("rdma_bind_addr", err);
		return -err;
	}
	if (rdma_listen(s->listener.id, LISTEN_BACKLOG)) {
		err = errno;
		rex_report_errno("rdma_listen", err);
		return -err;
	}
	printf("server: listening on %s port %u\n",
	       format_address(rdma_get_local_addr(s->listener.id), text, sizeof(text)),
	       (unsigned)be16toh(rdma_get_src_port(s->listener.id)));
	return 0;
}
/* [listen] */

/* [wait-connect-request] */
static int wait_for_connect_request(struct server *s)
{
	struct rdma_cm_id *id;
	int ret;
	int err;

	/* A client's connect request (REQ) arrives as an event: wait for it. */
	ret = rex_cm_wait(s->listener.channel, RDMA_CM_EVENT_CONNECT_REQUEST, -1, &s->request);
	if (ret)
		return ret;

	/*
	 * The event brings a new id, made for this connection: we own it now,
	 * and must accept, reject or destroy it. Its events would arrive on the
	 * listener's channel, mixed with the next clients' requests; so we move
	 * the id to an event channel of its own. Requests that come meanwhile
	 * wait on the listener's channel until we are ready for them.
	 */
	id = s->request.id;
	memset(&s->conn, 0, sizeof(s->conn));
	ret = create_event_channel(&s->conn);
	if (ret)
		goto out_destroy_id;
	if (rdma_migrate_id(id, s->conn.channel)) {
		err = errno;
		rex_report_errno("rdma_migrate_id", err);
		ret = -err;
		goto out_destroy_event_channel;
	}
	s->conn.id = id;
	printf("server: connect request from %s\n",
	       format_address(rdma_get_peer_addr(id), s->peer, sizeof(s->peer)));
	return 0;

out_destroy_event_channel:
	rdma_destroy_event_channel(s->conn.channel);
	s->conn.channel = NULL;
out_destroy_id:
	/* Destroying an id we have not accepted makes the CM reject the client. */
	if (rdma_destroy_id(id))
		rex_report_errno("rdma_destroy_id", errno);
	return ret;
}
/* [wait-connect-request] */

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
	if (rdma_reject(s->conn.id, data, (uint8_t)len))
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

/* [create-pd] */
static int create_pd(struct endpoint *ep)
{
	int err;

	/*
	 * A protection domain groups the queue pairs and the memory regions that
	 * may be used together: a QP can only touch memory registered in its own
	 * PD. One PD per connection keeps clients apart. The connection's id
	 * already knows its device (ep->id->verbs): the one the request came in on.
	 */
	ep->pd = ibv_alloc_pd(ep->id->verbs);
	if (!ep->pd) {
		err = errno;
		rex_report_errno("ibv_alloc_pd", err);
		return -err;
	}
	printf("server: protection domain allocated\n");
	return 0;
}
/* [create-pd] */

/* [create-cq] */
static int create_cq(struct endpoint *ep)
{
	int err;
	int ret;

	/* Devices differ in how big their queues may be: ask, do not assume. */
	ret = rex_device_check_queues(ep->id->verbs, CQ_ENTRIES, QUEUE_DEPTH, SGE_PER_WR);
	if (ret)
		return ret;

	/*
	 * The device reports each finished work request as a completion in a
	 * completion queue (CQ). A program can poll the CQ, or sleep until the
	 * CQ signals its completion channel, a file descriptor like the CM's
	 * event channel. Chapter 02 uses both; here we only create them.
	 */
	ep->comp_channel = ibv_create_comp_channel(ep->id->verbs);
	if (!ep->comp_channel) {
		err = errno;
		rex_report_errno("ibv_create_comp_channel", err);
		return -err;
	}
	ep->cq = ibv_create_cq(ep->id->verbs, CQ_ENTRIES, NULL, ep->comp_channel, 0);
	if (!ep->cq) {
		err = errno;
		rex_report_errno("ibv_create_cq", err);
		goto out_destroy_comp_channel;
	}
	/* The device may round the size up: cqe is what we really got. */
	printf("server: completion queue created: %d entries, with a completion channel\n",
	       ep->cq->cqe);
	return 0;

out_destroy_comp_channel:
	ret = ibv_destroy_comp_channel(ep->comp_channel); /* returns an errno value */
	if (ret)
		rex_report_errno("ibv_destroy_comp_channel", ret);
	ep->comp_channel = NULL;
	return -err;
}
/* [create-cq] */

/* [create-qp] */
static int create_qp(struct endpoint *ep)
{
	struct ibv_qp_init_attr attr = {
	    .send_cq = ep->cq, /* one CQ for both queues: simple, and enough here */
	    .recv_cq = ep->cq,
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
	 * through the CM, the QP belongs to the id, and the CM moves it through
	 * its states (INIT, ready to receive, ready to send) while connecting.
	 */
	if (rdma_create_qp(ep->id, ep->pd, &attr)) {
		err = errno;
		rex_report_errno("rdma_create_qp", err);
		return -err;
	}
	printf("server: queue pair created: RC, number %u\n", ep->id->qp->qp_num);
	return 0;
}
/* [create-qp] */

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

	/* Makes our QP ready to receive and to send, then sends the accept
	 * (REP): from the server's side, the connection is ready to use. */
	if (rdma_accept(s->conn.id, &param)) {
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
	int ret;

	/* The client confirms our accept (RTU), and the CM reports
	 * ESTABLISHED: the connection is up at both ends. */
	ret = rex_cm_wait(s->conn.channel, RDMA_CM_EVENT_ESTABLISHED, ESTABLISHED_TIMEOUT_MS, NULL);
	if (ret)
		return ret;
	printf("server: connection established\n");
	return 0;
}
/* [wait-established] */

/* [wait-disconnect] */
static int wait_for_disconnect(struct server *s)
{
	int ret;

	/* The client's disconnect request (DREQ) arrives as DISCONNECTED; our
	 * CM has already answered it (DREP). Nothing is queued on our QP, so
	 * there is nothing to flush: destroying the QP is all that is left. */
	ret = rex_cm_wait(s->conn.channel, RDMA_CM_EVENT_DISCONNECTED, PEER_DISCONNECT_TIMEOUT_MS,
	                  NULL);
	if (ret == -ETIMEDOUT) {
		fprintf(stderr,
		        "server: client %s did not disconnect within %d ms: "
		        "disconnecting it\n",
		        s->peer, PEER_DISCONNECT_TIMEOUT_MS);
		if (rdma_disconnect(s->conn.id))
			rex_report_errno("rdma_disconnect", errno);
	}
	if (ret)
		return ret;
	printf("server: client disconnected\n");
	return 0;
}
/* [wait-disconnect] */

/* [teardown] */
/*
 * Teardown, in the reverse order of creation: the QP uses the CQ and the PD,
 * the CQ uses the completion channel, and all of them hang off the id's
 * device, which the id keeps open until rdma_destroy_id(). A destroy call
 * fails (EBUSY) when something still uses the object: a bug worth an exit 1.
 */
static void destroy_qp(struct endpoint *ep)
{
	rdma_destroy_qp(ep->id); /* returns nothing: it cannot report failure */
}

static void destroy_cq(struct endpoint *ep)
{
	int ret = ibv_destroy_cq(ep->cq); /* returns an errno value */

	if (ret) {
		rex_report_errno("ibv_destroy_cq", ret);
		ep->teardown_errors++;
	}
	ret = ibv_destroy_comp_channel(ep->comp_channel); /* returns an errno value */
	if (ret) {
		rex_report_errno("ibv_destroy_comp_channel", ret);
		ep->teardown_errors++;
	}
}

static void destroy_pd(struct endpoint *ep)
{
	int ret = ibv_dealloc_pd(ep->pd); /* returns an errno value */

	if (ret) {
		rex_report_errno("ibv_dealloc_pd", ret);
		ep->teardown_errors++;
	}
}

static void destroy_id(struct endpoint *ep)
{
	if (rdma_destroy_id(ep->id)) {
		rex_report_errno("rdma_destroy_id", errno);
		ep->teardown_errors++;
	}
}

static void destroy_event_channel(struct endpoint *ep)
{
	rdma_destroy_event_channel(ep->channel); /* returns nothing */
}
/* [teardown] */

/* [serve-client] */
/* Everything that happens to one client after its connect request, in
 * order; then its resources are released, whatever happened. */
static void serve_client(struct server *s)
{
	struct endpoint *ep = &s->conn;
	int ret;

	ret = check_greeting(s);
	if (ret)
		goto out_destroy_id;
	ret = create_pd(ep);
	if (ret)
		goto out_destroy_id;
	ret = create_cq(ep);
	if (ret)
		goto out_destroy_pd;
	ret = create_qp(ep);
	if (ret)
		goto out_destroy_cq;
	ret = accept_client(s);
	if (ret)
		goto out_destroy_qp;
	ret = wait_for_established(s);
	if (ret)
		goto out_destroy_qp;
	ret = wait_for_disconnect(s);

out_destroy_qp:
	destroy_qp(ep);
out_destroy_cq:
	destroy_cq(ep);
out_destroy_pd:
	destroy_pd(ep);
out_destroy_id:
	destroy_id(ep);
	destroy_event_channel(ep);
	s->served++;
	if (ret || ep->teardown_errors) {
		s->failed++;
		fprintf(stderr, "server: client %s failed\n", s->peer);
	}
}
/* [serve-client] */

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

	if (create_event_channel(&s.listener))
		goto out;
	if (create_id(&s.listener))
		goto out_destroy_event_channel;
	if (listen_for_clients(&s))
		goto out_destroy_id;
	while (s.opts.clients == 0 || s.served < s.opts.clients) {
		if (wait_for_connect_request(&s))
			goto out_destroy_id;
		serve_client(&s);
	}
	printf("server: done: %lu client%s served, %lu failed\n", s.served,
	       s.served == 1 ? "" : "s", s.failed);
	status = s.failed ? REX_EXIT_FAILURE : REX_EXIT_OK;

out_destroy_id:
	destroy_id(&s.listener);
out_destroy_event_channel:
	destroy_event_channel(&s.listener);
out:
	return s.listener.teardown_errors ? REX_EXIT_FAILURE : status;
}
/* [main] */
