/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 04, the server: a ring of slots that a client fills with
 *        RDMA WRITE WITH IMMEDIATE, and credits sent back with SEND WITH
 *        IMMEDIATE.
 *
 * What it teaches: the immediate, 32 bits that ride on a one-sided WRITE and
 * wake the target with a completion, saying which slot is ready and how many
 * bytes it holds; why a WRITE WITH IMM consumes a posted receive although its
 * data goes where the writer chose, and why those receives need no memory at
 * all (zero scatter/gather entries); checking every immediate against the
 * ring before reading a byte of the slot it names; consuming a slot in place,
 * with no copy; and giving slots back to the writer as credits, in batches,
 * with SEND WITH IMM, which arrives as IBV_WC_RECV with IBV_WC_WITH_IMM.
 *
 * Run it, then 04-imm-client, on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/04-imm-server -a 10.77.0.1 [-p PORT] [-s SIZE] [-k SLOTS] [-c CLIENTS]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/04-imm-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/04-imm-client -a $RDMA_LAB_ADDR'
 *
 * -s is the size of a slot, -k the number of slots. It serves one client,
 * or -c CLIENTS one after another (0: until killed). Exit status: 0 every
 * client's messages arrived intact; 1 a client failed (a bad immediate,
 * damaged data, it vanished) or something else did (stderr says what); 2 bad
 * command line; 77 no usable RDMA device (none, or an iWARP one: iWARP
 * carries no immediate data). The walkthrough is docs/04-imm.md.
 */
#include <arpa/inet.h>
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
#define PROGRAM "04-imm-server"

/* The ring: -k slots of -s bytes, 16 x 64 KiB unless told otherwise. A slot
 * holds at most 8 MiB and a ring at most 256 slots: what the immediate can
 * say (wire.h). The whole ring is pinned in RAM, so it is capped too. */
#define DEFAULT_SLOT_SIZE (64u << 10)
#define DEFAULT_SLOTS     16
#define MAX_RING_BYTES    (64ull << 20)

/* Credits go back when this fraction of the ring is waiting for them: a
 * quarter (at least one slot). See return_credits(). */
#define CREDIT_BATCH_DIVISOR 4

/* The client's messages come back to back; this is how long we wait for the
 * next one, in ms, before giving up on a client that stays connected and
 * silent. A client that dies is noticed at once through the CM. */
#define IDLE_TIMEOUT_MS 10000
/* Each CM step (accept, the client's disconnect), in ms. */
#define CM_TIMEOUT_MS 5000
/* After the disconnect, how long work requests still posted may take to
 * complete as flushed, in ms: the device flushes at once; this is a backstop. */
#define FLUSH_TIMEOUT_MS 5000
/* Completions taken from the CQ at once. */
#define WC_BATCH 16
/* The most clients -c accepts (0 means no limit). */
#define MAX_CLIENTS 1000000

/* The ring's access: the client writes it; nobody reads it remotely.
 * LOCAL_WRITE is required with REMOTE_WRITE (chapter 03). */
#define RING_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)
/* [constants] */

/* One client, from its connect request to its teardown. */
struct session {
	struct rex_conn *conn;
	struct rex_buffers ring; /* the slots: remote write, no remote read */
	struct im_ring track;    /* our copy of the client's bookkeeping */
	uint32_t batch;          /* slots returned at once */
	uint64_t messages;       /* arrived and checked */
	uint64_t bytes;          /* in those messages */
	uint64_t credits;        /* credit messages sent */
	uint64_t returned;       /* slots they gave back */
	bool done;               /* the client said it is done */
	char granted[160];       /* what we gave it, for error messages */
	bool established;        /* connected, and not yet disconnected */
	uint32_t outstanding;    /* work requests posted, completion not yet seen */
};

struct server {
	struct rex_options opts;
	struct rex_listener *listener;
	unsigned long served; /* clients handled, well or not */
	unsigned long failed; /* of those, the ones that failed */
};

static const char *bytes_word(uint64_t n)
{
	return n == 1 ? "byte" : "bytes";
}

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "offer a ring of -k slots of -s bytes to 04-imm-client, which fills them "
	               "with RDMA WRITE WITH IMM; check each message, return slots as credits",
	    .is_server = true,
	    .flags = REX_OPT_SIZE | REX_OPT_SLOTS | REX_OPT_CLIENTS,
	    .defaults = {.size = DEFAULT_SLOT_SIZE, .slots = DEFAULT_SLOTS, .clients = 1},
	    .min_size = 1,
	    .max_size = IM_MAX_SLOT_SIZE,
	    .min_slots = 1,
	    .max_slots = IM_MAX_SLOTS,
	    .max_clients = MAX_CLIENTS,
	};
	int ret;

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	ret = rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
	if (ret != REX_OPTIONS_OK)
		return ret;
	/* Each flag is within its range; together they must fit too. */
	if (s->opts.size * s->opts.slots > MAX_RING_BYTES) {
		fprintf(stderr,
		        "%s: -k %u x -s %" PRIu64 ": a ring of %" PRIu64
		        " bytes, more than %llu (it is pinned in RAM)\n",
		        PROGRAM, s->opts.slots, s->opts.size, s->opts.size * s->opts.slots,
		        MAX_RING_BYTES);
		rex_options_usage(&spec, stderr);
		return REX_OPTIONS_BAD;
	}
	return REX_OPTIONS_OK;
}

/* [listen] */
static int listen_for_clients(struct server *s)
{
	/* Chapter 01's event channel, id, bind and listen, as one helper call. */
	s->listener = rex_listener_create(s->opts.addr, s->opts.port);
	if (!s->listener)
		return -errno;
	/* Bound to an address, the listener knows its device: iWARP is refused
	 * now. (Bound to all, each request is checked in get_request().) */
	if (rex_device_refuse_iwarp(s->listener->id->verbs, IM_IWARP_LACKS)) {
		rex_listener_destroy(s->listener);
		s->listener = NULL;
		return -EPROTONOSUPPORT;
	}
	printf("server: listening on %s, a ring of %u slots of %" PRIu64 " %s\n", s->listener->name,
	       s->opts.slots, s->opts.size, bytes_word(s->opts.size));
	return 0;
}
/* [listen] */

/* [get-request] */
static int get_request(struct server *s, struct session *c)
{
	struct rex_conn_attr attr;

	/*
	 * Queues for one client: a receive per slot (every WRITE WITH IMM
	 * takes one), and room for a credit per slot on the send queue (each
	 * credit gives back at least one slot, so no more can be in flight).
	 */
	rex_conn_attr_default(&attr);
	attr.recv_depth = (int)s->opts.slots;
	attr.send_depth = (int)s->opts.slots;
	attr.cq_depth = 2 * (int)s->opts.slots;
	attr.timeout_ms = CM_TIMEOUT_MS;
	c->conn = rex_listener_get_request(s->listener, &attr);
	if (!c->conn)
		return -errno; /* ECONNABORTED: this client failed, not the listener */
	printf("server: connect request from %s\n", c->conn->peer_name);
	if (rex_device_refuse_iwarp(c->conn->id->verbs, IM_IWARP_LACKS)) {
		rex_conn_reject(c->conn, NULL, 0);
		rex_conn_destroy(c->conn);
		c->conn = NULL;
		return -ECONNABORTED;
	}
	/* The client sends no private data; we use none of what came. */
	rex_debug(s->opts.verbose, "server", "the connect request carried %u bytes of private data",
	          (unsigned)c->conn->peer_data_len);
	return 0;
}
/* [get-request] */

/* [register-ring] */
static int register_ring(struct server *s, struct session *c)
{
	int ret;

	/*
	 * The ring, with chapter 02's helper: page-aligned, zeroed, one
	 * registration. REMOTE_WRITE lets the client's WRITEs in; there is no
	 * REMOTE_READ, because nobody needs to read it: a client that tried
	 * would get a remote access error, and learn nothing. (The helper
	 * registers whole pages: a few bytes past the last slot are writable
	 * too, and never read.)
	 */
	ret = rex_buffers_create(&c->ring, c->conn->pd, s->opts.slots, s->opts.size, RING_ACCESS);
	if (ret) {
		rex_conn_reject(c->conn, NULL, 0);
		return ret;
	}
	im_ring_init(&c->track, c->ring.count);
	/* See return_credits(). */
	c->batch = c->ring.count / CREDIT_BATCH_DIVISOR ? c->ring.count / CREDIT_BATCH_DIVISOR : 1;
	printf("server: registered %u slots of %zu %s for remote write only: rkey 0x%08x\n",
	       c->ring.count, c->ring.slot_size, bytes_word(c->ring.slot_size), c->ring.mr->rkey);
	snprintf(c->granted, sizeof(c->granted),
	         "%u x %zu bytes at 0x%" PRIxPTR ", rkey 0x%08x, remote write only, "
	         "no READ (no responder resources)",
	         c->ring.count, c->ring.slot_size, (uintptr_t)c->ring.mem, c->ring.mr->rkey);
	return 0;
}
/* [register-ring] */

/* [post-receives] */
/* [recv-no-memory] */
static int post_receive(struct session *c)
{
	/*
	 * A receive with no memory: sg_list NULL, num_sge 0. Every WRITE WITH
	 * IMM and every SEND WITH IMM that arrives takes the next receive in
	 * the queue, to produce its completion and to carry the immediate;
	 * the WRITE's data goes where the client aimed it, into the ring, and
	 * the SENDs we expect carry no data at all. So nothing needs a buffer
	 * here, and a SEND with data would fail rather than land anywhere.
	 * Which slot was written comes from the immediate, never from the
	 * receive: the device takes receives in the order they were posted,
	 * whatever slot the WRITE went to, so all of them are alike.
	 */
	struct ibv_recv_wr wr = {
	    .wr_id = rex_wr_id(IM_WR_RECV, 0),
	    .sg_list = NULL,
	    .num_sge = 0,
	};
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(c->conn->qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_recv", ret);
		return -ret;
	}
	c->outstanding++;
	return 0;
}
/* [recv-no-memory] */

static int post_receives(struct session *c)
{
	uint32_t i;
	int ret;

	/* One per slot, before we accept: the client may write the moment it
	 * is connected, and a WRITE WITH IMM that finds no receive is refused
	 * with "receiver not ready", like a SEND. */
	for (i = 0; i < c->ring.count; i++) {
		ret = post_receive(c);
		if (ret) {
			rex_conn_reject(c->conn, NULL, 0);
			return ret;
		}
	}
	printf("server: %u receives posted, with no memory: one per slot\n", c->ring.count);
	return 0;
}
/* [post-receives] */

/* [accept] */
static int accept_client(struct session *c)
{
	uint8_t data[IM_DESCRIPTOR_SIZE];
	struct im_descriptor desc = {
	    .addr = (uintptr_t)c->ring.mem,
	    .rkey = c->ring.mr->rkey, /* the rkey, never the lkey (chapter 03) */
	    .slot_size = (uint32_t)c->ring.slot_size,
	    .slots = c->ring.count,
	};
	int ret;

	/* 28 bytes in the accept's private data: the client knows the ring
	 * before its connection is established. */
	im_descriptor_encode(&desc, data);
	printf("server: accepting with descriptor: addr 0x%" PRIx64 ", rkey 0x%08x, "
	       "%u slots of %u %s\n",
	       desc.addr, desc.rkey, desc.slots, desc.slot_size, bytes_word(desc.slot_size));
	ret = rex_conn_accept(c->conn, data, sizeof(data));
	if (ret)
		return ret; /* the helper stopped the QP: the receives flush */
	c->established = true;
	printf("server: connection established\n");
	return 0;
}
/* [accept] */

/* [check-immediate] */
static int consume_slot(struct server *s, struct session *c, __be32 imm)
{
	struct im_imm msg;
	char why[IM_WHY_SIZE];
	const uint8_t *slot;
	uint32_t bad;
	int ret;

	/*
	 * The immediate is all the client told us: the WRITE itself could
	 * have gone anywhere in the ring (its rkey opens all of it). So the
	 * immediate is checked before a byte of the slot is read: a slot in
	 * the ring, a length that fits it, and the slot the client holds
	 * next. A client that breaks any of these is cut off.
	 */
	/* [imm-then-slot] */
	ret =
	    im_imm_decode(imm, c->track.slots, (uint32_t)c->ring.slot_size, &msg, why, sizeof(why));
	if (ret == 0)
		ret = im_ring_accept(&c->track, msg.slot, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "server: refusing immediate 0x%08x from %s: %s\n",
		        (unsigned)ntohl(imm), c->conn->peer_name, why);
		return ret;
	}

	/* Consumed in place: the message is checked where the client's
	 * device put it, without a copy. A slot of length 0 is a doorbell. */
	slot = rex_buffers_slot(&c->ring, msg.slot);
	if (!im_pattern_check(slot, msg.length, c->messages, &bad)) {
		fprintf(stderr,
		        "server: message %" PRIu64 " in slot %u damaged: byte %u is 0x%02x, "
		        "expected 0x%02x\n",
		        c->messages, (unsigned)msg.slot, (unsigned)bad, slot[bad],
		        im_pattern_byte(c->messages, bad));
		return -EBADMSG;
	}
	rex_debug(s->opts.verbose, "server", "message %" PRIu64 ": slot %u, %u %s, intact",
	          c->messages, (unsigned)msg.slot, (unsigned)msg.length, bytes_word(msg.length));
	c->messages++;
	c->bytes += msg.length;

	/* Done with the slot. Its receive is posted again first, and only
	 * then may the slot go back: a credit promises both. */
	return post_receive(c);
	/* [imm-then-slot] */
}
/* [check-immediate] */

/* [return-credits] */
static int return_credits(struct server *s, struct session *c)
{
	uint32_t n = im_ring_out(&c->track);
	int ret;

	/*
	 * Slots go back in batches of a quarter of the ring. One credit per
	 * message would double the messages on the wire and the completions
	 * on both sides; a whole ring at once would leave the client idle
	 * while the credit travels. With a quarter, a credit leaves while the
	 * client may still hold three quarters of the ring, and writes on.
	 * Nothing is held back for ever: when the client has run dry, all
	 * slots are ours, and that is more than a batch.
	 */
	/* [send-credit] */
	if (c->done || n < c->batch)
		return 0;
	/*
	 * SEND WITH IMM with no data: the immediate is the whole message,
	 * "n more slots are yours", and it takes one of the client's
	 * receives (which have no memory either). Signalled, so that we know
	 * when it is gone and can count what is posted.
	 */
	struct ibv_send_wr wr = {
	    .wr_id = rex_wr_id(IM_WR_CREDIT, 0),
	    .sg_list = NULL,
	    .num_sge = 0,
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = im_credit_encode(n), /* network byte order: a __be32 */
	};
	struct ibv_send_wr *bad;

	ret = ibv_post_send(c->conn->qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	c->outstanding++;
	im_ring_give(&c->track, n);
	c->credits++;
	c->returned += n;
	/* [send-credit] */
	rex_debug(s->opts.verbose, "server", "credit: %u %s back to the client", (unsigned)n,
	          n == 1 ? "slot" : "slots");
	return 0;
}
/* [return-credits] */

/* [handle-completion] */
static void refuse_late(const struct session *c, const struct ibv_wc *wc)
{
	char what[96];

	rex_format_wc_brief(what, sizeof(what), wc);
	fprintf(stderr, "server: %s sent after its done: %s\n", c->conn->peer_name, what);
}

static int handle_completion(struct server *s, struct session *c, const struct ibv_wc *wc)
{
	bool is_credit = rex_wr_id_kind(wc->wr_id) == IM_WR_CREDIT;
	char what[128], why[IM_WHY_SIZE];

	if (wc->status != IBV_WC_SUCCESS) {
		/* The message starts with our program's name. A receive fails
		 * because of what the client did: the hint speaks as the
		 * responder, and the message says what we granted. */
		if (is_credit)
			rex_report_wc("credit SEND WITH IMM", wc);
		else
			rex_report_peer_wc("receive", wc, c->granted);
		return -EIO;
	}
	/* What the device really reported, with -v: see the walkthrough.
	 * (Described only when shown: this runs for every message.) */
	if (s->opts.verbose) {
		im_wc_describe(wc, what, sizeof(what));
		rex_debug(true, "server", "completion: %s", what);
	}
	if (is_credit)
		return 0; /* a credit is gone */
	/* "done" was the client's last word: whatever came after it, in the
	 * same batch or later (see serve_client()), fails the client. */
	if (c->done) {
		refuse_late(c, wc);
		return -EPROTO;
	}

	/* [dispatch] */
	/*
	 * Two kinds of message take our receives, and only the opcode tells
	 * them apart: a WRITE WITH IMM completes as IBV_WC_RECV_RDMA_WITH_IMM;
	 * a SEND WITH IMM as IBV_WC_RECV, with IBV_WC_WITH_IMM in wc_flags.
	 * The immediate is valid only with that flag.
	 */
	if (!(wc->wc_flags & IBV_WC_WITH_IMM)) {
		im_wc_describe(wc, what, sizeof(what));
		fprintf(stderr, "server: a message from %s without an immediate: %s\n",
		        c->conn->peer_name, what);
		return -EPROTO;
	}
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		return consume_slot(s, c, wc->imm_data);
	if (wc->opcode == IBV_WC_RECV) {
		/* "done": how many messages the client wrote. RC delivers in
		 * order, so every one of them completed before this. */
		if (im_done_decode(wc->imm_data, (uint32_t)c->messages, why, sizeof(why))) {
			fprintf(stderr, "server: bad done from %s: %s\n", c->conn->peer_name, why);
			return -EPROTO;
		}
		c->done = true;
		return 0;
	}
	im_wc_describe(wc, what, sizeof(what));
	fprintf(stderr, "server: unexpected completion from %s: %s\n", c->conn->peer_name, what);
	return -EPROTO;
	/* [dispatch] */
}
/* [handle-completion] */

/* [consume] */
static int consume_messages(struct server *s, struct session *c)
{
	struct ibv_wc wc[WC_BATCH];
	int n, i, ret;

	while (!c->done) {
		/* Sleep until a completion comes (chapter 02), watching the CM's
		 * channel too: a client that dies sends nothing more, and its
		 * disconnect arrives there. */
		n = rex_cq_wait_watch(c->conn->comp_channel, c->conn->cq, wc, WC_BATCH,
		                      IDLE_TIMEOUT_MS, c->conn->channel->fd);
		if (n == -ECONNRESET)
			fprintf(stderr,
			        "server: client %s left before it said done: %" PRIu64
			        " messages arrived\n",
			        c->conn->peer_name, c->messages);
		if (n == -ETIMEDOUT)
			fprintf(stderr,
			        "server: nothing from %s within %d s: %" PRIu64
			        " messages arrived\n",
			        c->conn->peer_name, IDLE_TIMEOUT_MS / 1000, c->messages);
		if (n < 0)
			return n;
		c->outstanding -= (uint32_t)n;
		for (i = 0; i < n; i++) {
			ret = handle_completion(s, c, &wc[i]);
			if (ret)
				return ret;
		}
		ret = return_credits(s, c);
		if (ret)
			return ret;
	}
	printf("server: client is done: %" PRIu64 " messages, %" PRIu64 " %s, each checked "
	       "in place\n",
	       c->messages, c->bytes, bytes_word(c->bytes));
	printf("server: %" PRIu64 " credit%s sent, returning %" PRIu64 " slots in batches of %u "
	       "or more\n",
	       c->credits, c->credits == 1 ? "" : "s", c->returned, c->batch);
	return 0;
}
/* [consume] */

/* [wait-disconnect] */
static int wait_for_disconnect(struct session *c)
{
	int ret;

	/* The client disconnects after "done". The helper answers with
	 * rdma_disconnect(), which moves our QP to the error state: the
	 * receives still posted, and any credit still in flight, complete as
	 * flushed. */
	ret = rex_conn_wait_disconnect(c->conn);
	c->established = false; /* either way, the QP is stopped */
	if (ret)
		return ret;
	printf("server: client disconnected\n");
	return 0;
}
/* [wait-disconnect] */

/* [serve-client] */
/* [serve-steps] */
/* Everything that happens to one client, in order; then its resources are
 * released, whatever happened. A failed client does not stop the server. */
static int serve_client(struct server *s)
{
	struct session c = {0};
	struct ibv_wc late;
	int ret, late_n;

	ret = get_request(s, &c);
	if (ret == -ECONNABORTED) {
		fprintf(stderr, "server: a client failed before it was accepted\n");
		s->served++;
		s->failed++;
		return 0; /* wait for the next one */
	}
	if (ret)
		return ret; /* the listener itself failed: stop */
	ret = register_ring(s, &c);
	if (ret)
		goto out_destroy_connection;
	ret = post_receives(&c);
	if (ret)
		goto out_deregister_ring; /* rejected: nothing can flush or write */
	ret = accept_client(&c);
	if (ret)
		goto out_disconnect;
	ret = consume_messages(s, &c);
	if (ret)
		goto out_disconnect;
	ret = wait_for_disconnect(&c);
	/* [serve-steps] */

	/* [late-drain] */
out_disconnect:
	/* After a failure, we end the connection ourselves. */
	if (c.established && rex_conn_disconnect(c.conn) == 0)
		printf("server: disconnected %s\n", c.conn->peer_name);
	/* The QP is stopped: no WRITE of the client's lands in the ring any
	 * more, and what we still have posted completes as flushed. Our
	 * receives name no memory, but the flush is how we know the device
	 * is done with the QP's work; if it never comes, leak the ring rather
	 * than free it under the device. The session ended here, not at the
	 * client's "done": anything but a flush arrived after it. */
	late_n = rex_cq_drain_late(c.conn->cq, c.outstanding, FLUSH_TIMEOUT_MS, &late);
	if (late_n < 0) {
		ret = ret ? ret : late_n;
		goto out_destroy_connection;
	}
	if (late_n > 0 && ret == 0) {
		refuse_late(&c, &late);
		ret = -EPROTO;
	}
	/* [late-drain] */
out_deregister_ring:
	if (rex_buffers_destroy(&c.ring) && !ret)
		ret = -EBUSY;
out_destroy_connection:
	if (ret)
		fprintf(stderr, "server: client %s failed\n", c.conn->peer_name);
	if (rex_conn_destroy(c.conn) && !ret)
		ret = -EBUSY; /* a teardown failure is a failure too (printed) */
	s->served++;
	if (ret)
		s->failed++;
	return 0;
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

	ret = listen_for_clients(&s);
	if (ret) {
		status = ret == -EPROTONOSUPPORT ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;
		goto out;
	}
	while (s.opts.clients == 0 || s.served < s.opts.clients) {
		if (serve_client(&s))
			goto out_destroy_listener;
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
