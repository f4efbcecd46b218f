/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 02, the server: two-sided messages, an echo service with credits.
 *
 * What it teaches: work requests, scatter/gather entries and work
 * completions; registering memory with only the access it needs; posting
 * receives before accepting, so the client's first SEND finds one; sleeping
 * on the completion channel instead of spinning; and credit-based flow
 * control: the client may send only as many messages as we have receives
 * posted, and we return a credit for each receive we post again.
 *
 * The connection itself is chapter 01's, now the helper common/rex_conn.c.
 *
 * Run it, then 02-send-recv-client, on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/02-send-recv-server -a 10.77.0.1 [-p PORT] [-c CLIENTS]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/02-send-recv-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/02-send-recv-client -a $RDMA_LAB_ADDR'
 *
 * It echoes every DATA message as an ECHO with the same payload until the
 * client says BYE, then waits for its disconnect. It serves one client, or
 * -c CLIENTS one after another (0: until killed). Exit status: 0 every client
 * was served; 1 a client failed or something else did (stderr says what);
 * 2 bad command line; 77 no RDMA device.
 * The walkthrough is docs/02-send-recv.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_buffers.h"
#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

/* [constants] */
#define PROGRAM "02-send-recv-server"

/* Receives we keep posted for a client: the credits it starts with. Enough
 * for a window of 16 messages; each holds a header and the client's largest
 * payload, so 16 receives of 1 MiB at most. */
#define SR_SERVER_RECVS 16
/* Send buffers for echoes, at most: an echo's buffer is busy until its send
 * completes. A client granting fewer credits gets fewer. */
#define SR_SERVER_SENDS 16

/* How long we sleep on the completion channel for the client's next
 * message, in ms. A client that died without a disconnect would otherwise
 * keep us waiting forever. */
#define CQ_WAIT_TIMEOUT_MS 10000
/* Each CM step (accept, the client's disconnect), in ms. */
#define CM_TIMEOUT_MS 5000
/* Completions taken from the CQ at once. */
#define WC_BATCH 16
/* The most clients -c accepts (0 means no limit). */
#define MAX_CLIENTS 1000000
/* [constants] */

/* One client, from its connect request to its disconnect. */
struct session {
	struct rex_conn *conn;
	struct sr_hello hello;               /* the client's: its credits and max payload */
	struct rex_buffers recv;             /* SR_SERVER_RECVS receives */
	struct rex_buffers send;             /* echoes in flight */
	uint32_t free_send[SR_SERVER_SENDS]; /* send slots not in use */
	uint32_t nfree_send;
	/* DATA received and not yet echoed, in arrival order. */
	struct {
		uint32_t slot;   /* the receive buffer it is in */
		uint32_t length; /* its payload, checked by sr_header_decode() */
	} pending[SR_SERVER_RECVS];
	uint32_t pending_first, npending;

	/* Credits: how many more messages the client has receives for. */
	uint32_t credits;
	uint32_t credit_limit; /* the client's receives: credits never exceed them */
	uint16_t credits_owed; /* receives we re-posted and have not told the client of */

	uint64_t received; /* DATA messages */
	uint64_t echoed;   /* ECHO sends completed */
	uint32_t gave_up;  /* after BYE: echoes whose acknowledgements never came */
	bool bye;          /* the client said BYE */
	char granted[96];  /* what we gave it, for error messages */
	bool established;
	uint32_t outstanding; /* work requests posted whose completion we have not seen */
};

struct server {
	struct rex_options opts;
	struct rex_listener *listener;
	unsigned long served; /* clients handled, well or not */
	unsigned long failed; /* of those, the ones that failed */
};

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "echo the messages of 02-send-recv-client, with credit-based flow "
	               "control",
	    .is_server = true,
	    .flags = REX_OPT_CLIENTS,
	    .defaults = {.clients = 1},
	    .max_clients = MAX_CLIENTS,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
}

/* [listen] */
static int listen_for_clients(struct server *s)
{
	/* Chapter 01's event channel, id, bind and listen, as one helper call. */
	s->listener = rex_listener_create(s->opts.addr, s->opts.port);
	if (!s->listener)
		return -errno;
	printf("server: listening on %s\n", s->listener->name);
	return 0;
}
/* [listen] */

/* [wait-request] */
static int wait_for_request(struct server *s, struct session *ss)
{
	struct rex_conn_attr attr;

	/* The connect request brings the client's id; the helper gives it an
	 * event channel of its own and creates its PD, CQ (with a completion
	 * channel) and QP, sized for our receives and echoes. */
	rex_conn_attr_default(&attr);
	attr.send_depth = SR_SERVER_SENDS;
	attr.recv_depth = SR_SERVER_RECVS;
	attr.cq_depth = SR_SERVER_SENDS + SR_SERVER_RECVS; /* room for every completion */
	attr.timeout_ms = CM_TIMEOUT_MS;
	ss->conn = rex_listener_get_request(s->listener, &attr);
	if (!ss->conn && errno == ECONNABORTED) {
		/* A request came, but its connection could not be set up (the
		 * memlock limit, say): the helper printed why and rejected the
		 * client. That client failed; the listener did not. */
		fprintf(stderr, "server: a client failed before it was accepted\n");
		return -ECONNABORTED;
	}
	if (!ss->conn)
		return -errno;
	printf("server: connect request from %s\n", ss->conn->peer_name);
	return 0;
}
/* [wait-request] */

/* [check-hello] */
static int check_hello(struct server *s, struct session *ss)
{
	char why[SR_WHY_SIZE];
	int ret;

	/*
	 * The client's hello: how many receives it posted (our credits) and
	 * the largest payload it will send (the size of our receives). Both
	 * come from the peer, so both are checked before we register a byte:
	 * the decoder refuses 0 credits and payloads above 1 MiB.
	 */
	rex_debug(s->opts.verbose, "server", "CONNECT_REQUEST carried %u bytes of private data",
	          (unsigned)ss->conn->peer_data_len);
	ret = sr_hello_decode(ss->conn->peer_data, ss->conn->peer_data_len, &ss->hello, why,
	                      sizeof(why));
	if (ret) {
		fprintf(stderr, "server: rejecting %s: bad hello: %s\n", ss->conn->peer_name, why);
		rex_conn_reject(ss->conn, NULL, 0);
		return ret;
	}
	ss->credits = ss->hello.credits;
	ss->credit_limit = ss->hello.credits;
	printf("server: client hello: window credits %u, max payload %u byte%s\n",
	       (unsigned)ss->hello.credits, (unsigned)ss->hello.max_payload,
	       ss->hello.max_payload == 1 ? "" : "s");
	return 0;
}
/* [check-hello] */

/* [register-memory] */
static int register_memory(struct session *ss)
{
	uint32_t sends = ss->hello.credits < SR_SERVER_SENDS ? ss->hello.credits : SR_SERVER_SENDS;
	uint32_t i;
	int ret;

	ret = rex_buffers_create(&ss->recv, ss->conn->pd, SR_SERVER_RECVS,
	                         SR_HEADER_SIZE + ss->hello.max_payload, IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	ret = rex_buffers_create(&ss->send, ss->conn->pd, sends,
	                         SR_HEADER_SIZE + ss->hello.max_payload, 0);
	if (ret) {
		rex_buffers_destroy(&ss->recv);
		return ret;
	}
	for (i = 0; i < sends; i++)
		ss->free_send[ss->nfree_send++] = i;
	printf("server: registered %u receive buffers of %zu bytes (local write) "
	       "and %u send buffers (no access flags)\n",
	       ss->recv.count, ss->recv.slot_size, sends);
	snprintf(ss->granted, sizeof(ss->granted),
	         "%u receives of %zu bytes; no remote access to any memory", ss->recv.count,
	         ss->recv.slot_size);
	return 0;
}
/* [register-memory] */

/* [post-receives] */
static int post_receives(struct session *ss)
{
	uint32_t i;
	int ret;

	/*
	 * Before we accept: the client may send the moment it is connected,
	 * and a SEND that finds no receive posted is refused with a "receiver
	 * not ready" (RNR) NAK. The QP is in the INIT state already, which
	 * accepts receives. Each receive is one credit for the client.
	 */
	for (i = 0; i < ss->recv.count; i++) {
		ret = rex_buffers_post_recv(ss->conn->qp, &ss->recv, i, rex_wr_id(SR_WR_RECV, i));
		if (ret)
			return ret;
		ss->outstanding++;
	}
	printf("server: %u receives posted, accepting\n", ss->recv.count);
	return 0;
}
/* [post-receives] */

/* [accept] */
static int accept_client(struct session *ss)
{
	uint8_t data[SR_HELLO_WIRE_SIZE];
	struct sr_hello hello;
	int ret;

	/* Our hello: the receives we posted are the client's first credits;
	 * the max payload confirms the client's, which our receives now hold. */
	sr_hello_init(&hello, SR_SERVER_RECVS, ss->hello.max_payload);
	sr_hello_encode(&hello, data);
	ret = rex_conn_accept(ss->conn, data, sizeof(data));
	if (ret)
		return ret;
	ss->established = true;
	printf("server: connection established\n");
	return 0;
}
/* [accept] */

/* [echo] */
static int echo_one(struct session *ss)
{
	uint32_t rslot = ss->pending[ss->pending_first].slot;
	uint32_t length = ss->pending[ss->pending_first].length;
	uint8_t *rbuf = rex_buffers_slot(&ss->recv, rslot);
	uint32_t slot;
	uint8_t *buf;
	struct sr_header hdr;
	int ret;

	/* [echo-credit] */
	/* Copy the payload out, so the receive can be posted again at once. */
	slot = ss->free_send[--ss->nfree_send];
	buf = rex_buffers_slot(&ss->send, slot);
	memcpy(buf + SR_HEADER_SIZE, rbuf + SR_HEADER_SIZE, length);
	ss->pending_first = (ss->pending_first + 1) % SR_SERVER_RECVS;
	ss->npending--;
	ret = rex_buffers_post_recv(ss->conn->qp, &ss->recv, rslot, rex_wr_id(SR_WR_RECV, rslot));
	if (ret)
		return ret;
	ss->outstanding++;
	ss->credits_owed++;

	/* The echo returns the credits for every receive we re-posted,
	 * including the one just now: the client may send again. */
	hdr.type = SR_ECHO;
	hdr.flags = 0;
	hdr.credits = ss->credits_owed;
	hdr.length = length;
	sr_header_encode(&hdr, buf);
	/* [echo-credit] */

	struct ibv_sge sge = {
	    .addr = (uintptr_t)buf,
	    .length = SR_HEADER_SIZE + length,
	    .lkey = ss->send.mr->lkey,
	};
	struct ibv_send_wr wr = {
	    .wr_id = rex_wr_id(SR_WR_SEND, slot),
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND,
	    .send_flags = IBV_SEND_SIGNALED, /* tells us when buf is free again */
	};
	struct ibv_send_wr *bad;

	ret = ibv_post_send(ss->conn->qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		ss->free_send[ss->nfree_send++] = slot;
		return -ret;
	}
	ss->outstanding++;
	ss->credits--;
	ss->credits_owed = 0;
	return 0;
}

static int echo_pending(struct session *ss)
{
	int ret;

	/* A sender never sends without a credit: an echo waits for one (and
	 * for a free buffer), and the next message from the client brings it. */
	while (ss->npending > 0 && ss->credits > 0 && ss->nfree_send > 0) {
		ret = echo_one(ss);
		if (ret)
			return ret;
	}
	return 0;
}
/* [echo] */

/* [handle-message] */
static int handle_message(struct session *ss, const struct ibv_wc *wc, uint32_t slot)
{
	const uint8_t *buf = rex_buffers_slot(&ss->recv, slot);
	struct sr_header hdr;
	char why[SR_WHY_SIZE];
	uint32_t i;
	int ret;

	/* [check-message] */
	/* byte_len is what the device really wrote: the header must agree. */
	ret = sr_header_decode(buf, wc->byte_len, ss->hello.max_payload, &hdr, why, sizeof(why));
	if (ret == 0 && (hdr.type == SR_ECHO || ss->bye)) {
		snprintf(why, sizeof(why), "unexpected %s%s", sr_type_name(hdr.type),
		         ss->bye ? " after BYE" : "");
		ret = -EPROTO;
	}
	if (ret == 0 && hdr.credits > ss->credit_limit - ss->credits) {
		snprintf(why, sizeof(why), "%u credits returned, more than the client granted",
		         (unsigned)hdr.credits);
		ret = -EPROTO;
	}
	if (ret) {
		fprintf(stderr, "server: bad message from %s: %s\n", ss->conn->peer_name, why);
		return ret;
	}
	ss->credits += hdr.credits;
	/* [check-message] */
	if (hdr.type == SR_BYE) {
		ss->bye = true;
		return 0;
	}
	/* A DATA: echo it when a credit allows, in the order they came. */
	i = (ss->pending_first + ss->npending) % SR_SERVER_RECVS;
	ss->pending[i].slot = slot;
	ss->pending[i].length = hdr.length;
	ss->npending++;
	ss->received++;
	return 0;
}
/* [handle-message] */

/* [wait-completions] */
static int wait_for_completions(struct session *ss)
{
	struct ibv_wc wc[WC_BATCH];
	int n, i, ret;

	/* Sleep on the completion channel until something completes (see
	 * common/rex_cq.c), for at most CQ_WAIT_TIMEOUT_MS, watching the CM's
	 * channel too: a client that dies sends no more messages, and its
	 * kernel's disconnect arrives there. */
	n = rex_cq_wait_watch(ss->conn->comp_channel, ss->conn->cq, wc, WC_BATCH,
	                      CQ_WAIT_TIMEOUT_MS, ss->conn->channel->fd);
	if (n == -ECONNRESET && !ss->bye) /* after BYE, serve_messages() decides */
		fprintf(stderr, "server: client %s left before it said bye\n", ss->conn->peer_name);
	if (n == -ETIMEDOUT)
		fprintf(stderr,
		        "server: nothing from %s within %d s: %" PRIu64 " received, "
		        "%" PRIu64 " echoed, %u credits\n",
		        ss->conn->peer_name, CQ_WAIT_TIMEOUT_MS / 1000, ss->received, ss->echoed,
		        ss->credits);
	if (n < 0)
		return n;
	ss->outstanding -= (uint32_t)n;
	for (i = 0; i < n; i++) {
		uint32_t slot = rex_wr_id_slot(wc[i].wr_id);
		bool is_send = rex_wr_id_kind(wc[i].wr_id) == SR_WR_SEND;

		/* After BYE, a flushed receive is the client leaving: on iWARP its
		 * close flushes our receives before DISCONNECTED arrives. */
		if (!is_send && ss->bye && wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		    ss->conn->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP)
			continue;
		/* After BYE, an echo whose acknowledgements were all lost fails
		 * when our device's retries run out, if the client's disconnect
		 * has not come first (it too can be lost, and is sent again only
		 * seconds later): BYE says the echo arrived. Our QP is in the
		 * error state from then on: what it still holds comes back
		 * flushed, and only the disconnect is left to wait for. */
		if (ss->bye && ((is_send && wc[i].status == IBV_WC_RETRY_EXC_ERR) ||
		                (ss->gave_up && wc[i].status == IBV_WC_WR_FLUSH_ERR))) {
			if (is_send) {
				ss->free_send[ss->nfree_send++] = slot;
				ss->gave_up++;
			}
			continue;
		}
		/* Check every completion's status: a failed work request says why
		 * here, and only here. */
		if (wc[i].status != IBV_WC_SUCCESS) {
			if (is_send)
				rex_report_wc("send", &wc[i]);
			else /* the client's doing: we were the responder */
				rex_report_peer_wc("receive", &wc[i], ss->granted);
			return -EIO;
		}
		if (is_send) {
			ss->free_send[ss->nfree_send++] = slot; /* the buffer is ours again */
			ss->echoed++;
			continue;
		}
		ret = handle_message(ss, &wc[i], slot);
		if (ret)
			return ret;
	}
	return 0;
}
/* [wait-completions] */

/* [serve-messages] */
static int serve_messages(struct session *ss)
{
	uint32_t sends = ss->send.count; /* echo buffers, all ours again at the end */
	uint32_t unacked;
	int ret;

	/* Until BYE: echo what we can, then sleep until something completes. */
	for (;;) {
		ret = echo_pending(ss);
		if (ret)
			return ret;
		if (ss->bye && ss->npending == 0)
			break;
		ret = wait_for_completions(ss);
		if (ret)
			return ret;
	}
	/* Let the last echoes complete: their buffers are the device's until
	 * then. The client may leave first, and rightly: it says BYE only once
	 * every echo arrived, but its acknowledgement of the last one can be
	 * lost on the wire, and our device would send that echo again after
	 * ack_timeout, to a QP that is gone. The disconnect flushes it, and
	 * serve_client() takes the flush before the buffers go. */
	while (ss->nfree_send < sends) {
		ret = wait_for_completions(ss);
		if (ret == -ECONNRESET && ss->bye)
			break;
		if (ret)
			return ret;
	}
	unacked = sends - ss->nfree_send;
	printf("server: echoed %" PRIu64 " messages\n", ss->echoed + ss->gave_up + unacked);
	if (ss->gave_up > 0)
		printf("server: %u echo%s not acknowledged before our retries ran out: "
		       "its BYE says every echo arrived\n",
		       ss->gave_up, ss->gave_up == 1 ? " was" : "es were");
	if (unacked > 0)
		printf("server: %u echo%s not acknowledged when the client left: its BYE "
		       "says every echo arrived\n",
		       unacked, unacked == 1 ? " was" : "es were");
	printf("server: client said bye\n");
	return 0;
}
/* [serve-messages] */

/* [wait-disconnect] */
static int wait_for_disconnect(struct session *ss)
{
	int ret;

	/* The client disconnects after BYE, and the CM reports DISCONNECTED.
	 * The helper answers with rdma_disconnect(): that sends the client the
	 * reply its own disconnect waits for, and moves our QP to the error
	 * state, which flushes the receives we still have posted. (If the
	 * client never disconnects, the helper ends the connection itself.) */
	ret = rex_conn_wait_disconnect(ss->conn);
	ss->established = false; /* either way, the QP is stopped */
	if (ret)
		return ret;
	printf("server: client disconnected\n");
	return 0;
}
/* [wait-disconnect] */

/* [serve-client] */
/* Everything that happens to one client after its connect request, in
 * order; then its resources are released, whatever happened. */
static void serve_client(struct server *s, struct session *ss)
{
	struct ibv_wc late;
	char what[96];
	int ret, late_n;

	ret = check_hello(s, ss);
	if (ret)
		goto out_destroy_connection;
	ret = register_memory(ss);
	if (ret)
		goto out_destroy_connection;
	ret = post_receives(ss);
	if (ret)
		goto out_deregister_memory;
	ret = accept_client(ss);
	if (ret)
		goto out_disconnect; /* the helper stopped the QP: drain what was posted */
	ret = serve_messages(ss);
	if (ret)
		goto out_disconnect;
	ret = wait_for_disconnect(ss);

out_disconnect:
	/* After a failure, we end the connection ourselves. */
	if (ss->established && rex_conn_disconnect(ss->conn) == 0)
		printf("server: disconnected %s\n", ss->conn->peer_name);
	/* The QP is in the error state now, and the receives still posted
	 * complete as flushed: their buffers are the device's until then.
	 * The session ends here, not at BYE: a receive that took a message
	 * instead arrived after the client's last word, and fails it. */
	late_n = rex_cq_drain_late(ss->conn->cq, ss->outstanding, CM_TIMEOUT_MS, &late);
	if (late_n < 0) {
		ret = ret ? ret : late_n;
		goto out_destroy_connection; /* leak the memory rather than free it under the device
		                              */
	}
	if (late_n > 0 && ret == 0) {
		rex_format_wc_brief(what, sizeof(what), &late);
		fprintf(stderr, "server: %s sent after its BYE: %s\n", ss->conn->peer_name, what);
		ret = -EPROTO;
	}
out_deregister_memory:
	if (rex_buffers_destroy(&ss->send) && !ret)
		ret = -EBUSY;
	if (rex_buffers_destroy(&ss->recv) && !ret)
		ret = -EBUSY;
out_destroy_connection:
	if (ret || s->opts.verbose)
		fprintf(stderr, "server: client %s %s\n", ss->conn->peer_name,
		        ret ? "failed" : "served");
	if (rex_conn_destroy(ss->conn) && !ret)
		ret = -EBUSY; /* a teardown failure is a failure too (printed) */
	ss->conn = NULL;
	s->served++;
	if (ret)
		s->failed++;
}
/* [serve-client] */

/* [main] */
int main(int argc, char **argv)
{
	struct server s = {0};
	struct session ss;
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&s, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	if (listen_for_clients(&s))
		goto out;
	while (s.opts.clients == 0 || s.served < s.opts.clients) {
		memset(&ss, 0, sizeof(ss));
		ret = wait_for_request(&s, &ss);
		if (ret == -ECONNABORTED) {
			s.served++; /* a failed client: wait for the next one */
			s.failed++;
			continue;
		}
		if (ret)
			goto out_destroy_listener; /* the listener failed: stop */
		serve_client(&s, &ss);
	}
	printf("server: done: %lu client%s served, %lu failed\n", s.served,
	       s.served == 1 ? "" : "s", s.failed);
	status = s.failed ? REX_EXIT_FAILURE : REX_EXIT_OK;

out_destroy_listener:
	if (rex_listener_destroy(s.listener))
		status = REX_EXIT_FAILURE;
out:
	return status;
}
/* [main] */
