/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 04, the client: streaming messages into the server's ring
 *        with RDMA WRITE WITH IMMEDIATE, and writing only into slots the
 *        server has given back.
 *
 * What it teaches: RDMA WRITE WITH IMM, a one-sided WRITE that also carries
 * 32 bits of immediate data and produces a completion at the target; putting
 * the slot and the length of a message in that immediate, in network byte
 * order; the zero-length WRITE WITH IMM, a doorbell with no data at all;
 * credits that come back as SEND WITH IMM into receives with no memory; and
 * never writing a slot the server has not returned, so that no unread
 * message is overwritten and no receiver-not-ready ever happens.
 *
 * Run it against 04-imm-server on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/04-imm-server -a 10.77.0.1 &
 *     build/bin/04-imm-client -a 10.77.0.1 [-s SIZE] [-n COUNT]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/04-imm-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/04-imm-client -a $RDMA_LAB_ADDR'
 *
 * It writes COUNT messages of SIZE bytes (-s 0: doorbells, the immediate
 * alone), prints messages/s and MiB/s, tells the server it is done and
 * disconnects. Exit status: 0 all written and the server told; 1 something
 * failed (stderr says what), including a descriptor we refused; 2 bad
 * command line; 77 no usable RDMA device (none, or an iWARP one: iWARP
 * carries no immediate data). The walkthrough is docs/04-imm.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
#define PROGRAM "04-imm-client"

/* Bytes per message (-s): 4 KiB unless told otherwise; 0 sends doorbells.
 * At most a slot's largest size, 8 MiB (wire.h). */
#define DEFAULT_SIZE  4096
#define DEFAULT_COUNT 10000
/* "done" carries the count in 32 bits; we stay well below. */
#define MAX_COUNT 100000000

/* Our queues are made before we know the server's ring, so they are sized
 * for the largest ring the immediate can address: a WRITE per slot and
 * "done" in flight, a receive per slot for credits. */
#define SEND_DEPTH (IM_MAX_SLOTS + 1)
#define RECV_DEPTH IM_MAX_SLOTS
#define CQ_ENTRIES (SEND_DEPTH + RECV_DEPTH)

/* How long we wait for the next completion, in ms: a WRITE's, or a credit
 * when we hold no slot. A live server returns credits within microseconds;
 * one that never does must not keep us waiting for ever. */
#define COMPLETION_TIMEOUT_MS 10000
/* After a failed completion, how long to look for the CM's disconnect, in
 * ms: a server that dies takes its memory with it, so a WRITE in flight can
 * fail (remote access error) a moment before its disconnect arrives. */
#define GONE_GRACE_MS 2000
/* Address and route resolution and each CM step, in ms. */
#define CM_TIMEOUT_MS 5000
/* After the disconnect, how long work requests still posted may take to
 * complete as flushed, in ms: the device flushes at once; a backstop. */
#define FLUSH_TIMEOUT_MS 5000
/* Completions taken from the CQ at once. */
#define WC_BATCH 16

#define MIB (1024.0 * 1024.0)
/* [constants] */

struct client {
	struct rex_options opts;
	struct rex_conn *conn;
	struct im_descriptor remote; /* the server's ring, checked */
	struct im_ring ring;         /* which of its slots we hold */
	struct rex_buffers source;   /* our copy of each slot: what a WRITE sends */
	uint64_t written;            /* WRITE WITH IMMs posted */
	uint64_t completed;          /* ... and completed */
	uint64_t credits;            /* credit messages taken */
	uint64_t returned;           /* slots they gave back */
	double elapsed_s;            /* first WRITE to last completion */
	bool done_posted;
	bool done_completed; /* the server has "done" */
	bool connected;
	uint32_t outstanding; /* work requests posted, completion not yet seen */
};

static const char *bytes_word(uint64_t n)
{
	return n == 1 ? "byte" : "bytes";
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_command_line(struct client *c, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "write COUNT messages of SIZE bytes (0: doorbells) into the ring of "
	               "04-imm-server with RDMA WRITE WITH IMM, within its credits",
	    .is_server = false,
	    .flags = REX_OPT_SIZE | REX_OPT_COUNT,
	    .defaults = {.size = DEFAULT_SIZE, .count = DEFAULT_COUNT},
	    .min_size = 0, /* a doorbell */
	    .max_size = IM_MAX_SLOT_SIZE,
	    .min_count = 1,
	    .max_count = MAX_COUNT,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &c->opts, stdout, stderr);
}

/* [create-connection] */
static int create_connection(struct client *c)
{
	struct rex_conn_attr attr;
	struct ibv_port_attr port;
	int ret;

	/* Chapter 01's steps, as one helper call: event channel, id, address
	 * and route, PD, CQ with a completion channel, RC queue pair. */
	rex_conn_attr_default(&attr);
	attr.send_depth = SEND_DEPTH;
	attr.recv_depth = RECV_DEPTH;
	attr.cq_depth = CQ_ENTRIES;
	attr.timeout_ms = CM_TIMEOUT_MS;
	c->conn = rex_conn_create_client(c->opts.addr, c->opts.port, &attr);
	if (!c->conn)
		return -errno;
	/* The device is known now: on iWARP, say why not before posting. */
	ret = rex_device_refuse_iwarp(c->conn->id->verbs, IM_IWARP_LACKS);
	if (ret)
		goto out_destroy_conn;

	/* The immediate comes with the last packet of one work request, so a
	 * message must be one WRITE: no bigger than the port allows. */
	ret = ibv_query_port(c->conn->id->verbs, c->conn->id->port_num, &port);
	if (ret) {
		rex_report_errno("ibv_query_port", ret);
		ret = -ret;
		goto out_destroy_conn;
	}
	if (c->opts.size > port.max_msg_sz) {
		fprintf(stderr,
		        "client: -s %" PRIu64 " is more than one work request carries on "
		        "%s (%u bytes)\n",
		        c->opts.size, ibv_get_device_name(c->conn->id->verbs->device),
		        port.max_msg_sz);
		ret = -EMSGSIZE;
		goto out_destroy_conn;
	}
	printf("client: queue pair %u ready on %s, towards %s\n", c->conn->qp->qp_num,
	       ibv_get_device_name(c->conn->id->verbs->device), c->conn->peer_name);
	return 0;

out_destroy_conn:
	rex_conn_destroy(c->conn);
	c->conn = NULL;
	return ret;
}
/* [create-connection] */

/* [connect] */
static int connect_to_server(struct client *c)
{
	int ret;

	/* We ask for nothing: the server decides the ring, and says what it is
	 * in the accept. No receive is posted yet, and none is needed: the
	 * server sends us credits only for slots we have written. */
	ret = rex_conn_connect(c->conn, NULL, 0);
	if (ret)
		return ret;
	c->connected = true;
	printf("client: connected\n");
	return 0;
}
/* [connect] */

/* [check-descriptor] */
static int check_descriptor(struct client *c)
{
	char why[IM_WHY_SIZE];
	int ret;

	/* The descriptor says where our device will write in the server's
	 * memory: checked in full before anything is posted (chapter 03),
	 * including that a slot holds one of our messages. */
	ret = im_descriptor_decode(c->conn->peer_data, c->conn->peer_data_len, c->opts.size,
	                           &c->remote, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "client: refusing the server's descriptor: %s; nothing posted\n",
		        why);
		return ret;
	}
	/* At first every slot is ours: the server has posted a receive for each. */
	im_ring_init(&c->ring, c->remote.slots);
	printf("client: server offers %u slots of %u %s at 0x%" PRIx64 ", rkey 0x%08x\n",
	       c->remote.slots, c->remote.slot_size, bytes_word(c->remote.slot_size),
	       c->remote.addr, c->remote.rkey);
	return 0;
}
/* [check-descriptor] */

/* [post-receives] */
static int post_receive(struct client *c)
{
	/* A credit is a SEND WITH IMM with no data: the receive it takes
	 * needs no memory, only a place in the queue (as at the server). */
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

static int post_receives(struct client *c)
{
	uint32_t i;
	int ret;

	/* A receive per slot: each credit gives back at least one slot, so
	 * no more credits than slots can be on their way at once. They are
	 * posted before our first WRITE, so before any credit can come. */
	for (i = 0; i < c->remote.slots; i++) {
		ret = post_receive(c);
		if (ret)
			return ret;
	}
	printf("client: %u receives posted for credits, with no memory\n", c->remote.slots);
	return 0;
}
/* [post-receives] */

/* [register-memory] */
static int register_memory(struct client *c)
{
	int ret;

	/* Doorbells carry no bytes: nothing to register at all. */
	if (c->opts.size == 0) {
		printf("client: doorbells only: no memory registered\n");
		return 0;
	}
	/* Our own copy of each slot, the source of the WRITEs into it: read
	 * by our device only, so no access flags (chapter 03). A copy stays
	 * busy until its WRITE completes. */
	ret = rex_buffers_create(&c->source, c->conn->pd, c->remote.slots, c->opts.size, 0);
	if (ret)
		return ret;
	printf("client: registered %u source buffers of %" PRIu64 " %s (no access flags)\n",
	       c->source.count, c->opts.size, bytes_word(c->opts.size));
	return 0;
}
/* [register-memory] */

/* [post-write] */
/* [write-imm-wr] */
static int post_write(struct client *c)
{
	uint32_t len = (uint32_t)c->opts.size;
	uint32_t slot = im_ring_take(&c->ring); /* the caller saw we hold one */
	struct ibv_sge sge = {0};
	struct ibv_send_wr wr = {
	    .wr_id = rex_wr_id(IM_WR_WRITE, slot),
	    .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED, /* the source copy is ours again then */
	    /* The slot's address in the server's memory, and its rkey. */
	    .wr.rdma = {.remote_addr = c->remote.addr + (uint64_t)slot * c->remote.slot_size,
	                .rkey = c->remote.rkey},
	    /* Which slot, and how many bytes: in network byte order. The
	     * server cannot see where the data went, only this. */
	    .imm_data = im_imm_encode(slot, len),
	};
	struct ibv_send_wr *bad;
	int ret;

	if (len > 0) {
		uint8_t *buf = rex_buffers_slot(&c->source, slot);

		im_pattern_fill(buf, len, c->written); /* message number `written` */
		sge.addr = (uintptr_t)buf;
		sge.length = len;
		sge.lkey = c->source.mr->lkey;
		wr.sg_list = &sge;
		wr.num_sge = 1;
	}
	/* [write-imm-wr] */
	/* A doorbell has no scatter/gather entry: a WRITE of zero bytes,
	 * which still carries the immediate and still takes a receive. */
	ret = ibv_post_send(c->conn->qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	c->outstanding++;
	c->written++;
	return 0;
}
/* [post-write] */

/* [take-credit] */
static int take_credit(struct client *c, const struct ibv_wc *wc)
{
	char what[128], why[IM_WHY_SIZE];
	uint32_t n;
	int ret;

	/*
	 * A SEND WITH IMM arrives as IBV_WC_RECV with IBV_WC_WITH_IMM in
	 * wc_flags: the opcode says "a receive", the flag says "it carried
	 * an immediate". (IBV_WC_RECV_RDMA_WITH_IMM is only for WRITEs.)
	 */
	im_wc_describe(wc, what, sizeof(what)); /* once per credit, not per message */
	if (wc->opcode != IBV_WC_RECV || !(wc->wc_flags & IBV_WC_WITH_IMM) || wc->byte_len != 0) {
		fprintf(stderr, "client: not a credit: %s\n", what);
		return -EPROTO;
	}
	ret = im_credit_decode(wc->imm_data, &c->ring, &n, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "client: bad credit from the server (%s): %s\n", what, why);
		return ret;
	}
	rex_debug(c->opts.verbose, "client", "completion: %s (credit: %u %s back)", what,
	          (unsigned)n, n == 1 ? "slot" : "slots");
	im_ring_give(&c->ring, n);
	c->credits++;
	c->returned += n;
	/* Its receive is used up: post another for the next credit. */
	return post_receive(c);
}
/* [take-credit] */

/* Whether a CM event (the disconnect of a server that died) arrives within
 * GONE_GRACE_MS. The event stays on the channel for the disconnect path. */
static bool server_went_away(struct client *c)
{
	struct pollfd p = {.fd = c->conn->channel->fd, .events = POLLIN};

	return poll(&p, 1, GONE_GRACE_MS) == 1;
}

/* [wait-completions] */
static int wait_for_completions(struct client *c)
{
	struct ibv_wc wc[WC_BATCH];
	char what[128];
	int n, i, ret;

	/* Sleep until something completes, watching the CM's channel too: a
	 * server that dies sends no more credits, but its disconnect arrives. */
	n = rex_cq_wait_watch(c->conn->comp_channel, c->conn->cq, wc, WC_BATCH,
	                      COMPLETION_TIMEOUT_MS, c->conn->channel->fd);
	if (n == -ECONNRESET)
		fprintf(stderr,
		        "client: the server went away (disconnected): %" PRIu64 " of %" PRIu64
		        " messages written\n",
		        c->written, c->opts.count);
	if (n == -ETIMEDOUT && c->ring.held == 0) {
		fprintf(stderr,
		        "client: no credit from the server within %d s: %" PRIu64 " of %" PRIu64
		        " messages written, all %u slots are the server's\n",
		        COMPLETION_TIMEOUT_MS / 1000, c->written, c->opts.count, c->ring.slots);
		fprintf(stderr, "  hint: the server must return slots (SEND WITH IMM) as it "
		                "consumes them\n");
	} else if (n == -ETIMEDOUT) {
		fprintf(stderr,
		        "client: nothing completed within %d s: %" PRIu64 " of %" PRIu64
		        " messages written\n",
		        COMPLETION_TIMEOUT_MS / 1000, c->written, c->opts.count);
	}
	if (n < 0)
		return n;
	c->outstanding -= (uint32_t)n;
	for (i = 0; i < n; i++) {
		uint32_t kind = rex_wr_id_kind(wc[i].wr_id);

		if (wc[i].status != IBV_WC_SUCCESS && server_went_away(c)) {
			fprintf(stderr,
			        "client: the server went away (disconnected): %" PRIu64
			        " of %" PRIu64 " messages written (the last failed: %s)\n",
			        c->written, c->opts.count, ibv_wc_status_str(wc[i].status));
			return -ECONNRESET;
		}
		if (wc[i].status != IBV_WC_SUCCESS) {
			/* The message starts with our program's name. */
			rex_report_wc(kind == IM_WR_WRITE  ? "RDMA WRITE WITH IMM"
			              : kind == IM_WR_DONE ? "SEND WITH IMM (done)"
			                                   : "receive for a credit",
			              &wc[i]);
			return -EIO;
		}
		if (kind == IM_WR_RECV) {
			ret = take_credit(c, &wc[i]);
			if (ret)
				return ret;
			continue;
		}
		if (c->opts.verbose) { /* described only when shown: once per message */
			im_wc_describe(&wc[i], what, sizeof(what));
			rex_debug(true, "client", "completion: %s", what);
		}
		if (kind == IM_WR_WRITE)
			c->completed++;
		else
			c->done_completed = true;
	}
	return 0;
}
/* [wait-completions] */

/* [stream] */
/* [stream-loop] */
static int stream_messages(struct client *c)
{
	uint64_t count = c->opts.count;
	double start, mib;
	int ret;

	printf("client: streaming %" PRIu64 " messages of %" PRIu64 " %s\n", count, c->opts.size,
	       bytes_word(c->opts.size));
	start = now_seconds();
	while (c->completed < count) {
		/*
		 * Write while we hold a slot, and while its source copy is
		 * free: message m uses slot m % slots, whose copy was last
		 * written from by message m - slots, so that one must have
		 * completed. Holding no slot, we do not write: we wait.
		 */
		while (c->written < count && c->ring.held > 0 &&
		       c->written - c->completed < c->ring.slots) {
			ret = post_write(c);
			if (ret)
				return ret;
		}
		ret = wait_for_completions(c);
		if (ret)
			return ret;
	}
	/* [stream-loop] */
	c->elapsed_s = now_seconds() - start;
	mib = (double)count * (double)c->opts.size / MIB;
	printf("client: %" PRIu64 " messages of %" PRIu64 " %s in %.3f s: %.0f messages/s, "
	       "%.1f MiB/s\n",
	       count, c->opts.size, bytes_word(c->opts.size), c->elapsed_s,
	       (double)count / c->elapsed_s, mib / c->elapsed_s);
	printf("client: %" PRIu64 " credit%s came back, returning %" PRIu64 " slots\n", c->credits,
	       c->credits == 1 ? "" : "s", c->returned);
	return 0;
}
/* [stream] */

/* [done] */
static int say_done(struct client *c)
{
	struct ibv_send_wr wr = {
	    .wr_id = rex_wr_id(IM_WR_DONE, 0),
	    .sg_list = NULL,
	    .num_sge = 0,
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = im_done_encode((uint32_t)c->written),
	};
	struct ibv_send_wr *bad;
	int ret;

	/* "done" takes a receive at the server like every message, so it
	 * needs a slot's credit too (it writes nothing into the slot). */
	while (c->ring.held == 0) {
		ret = wait_for_completions(c);
		if (ret)
			return ret;
	}
	im_ring_take(&c->ring);
	ret = ibv_post_send(c->conn->qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	c->outstanding++;
	c->done_posted = true;
	/* Its completion means the server has it: only then may we
	 * disconnect, which would flush it otherwise. */
	while (!c->done_completed) {
		ret = wait_for_completions(c);
		if (ret)
			return ret;
	}
	printf("client: told the server we are done: %" PRIu64 " messages\n", c->written);
	return 0;
}
/* [done] */

/* [disconnect] */
static int disconnect(struct client *c)
{
	int ret;

	if (!c->connected)
		return 0;
	/* Our QP goes to the error state: the credit receives still posted,
	 * and anything else in flight, complete as flushed (see teardown). */
	ret = rex_conn_disconnect(c->conn);
	if (ret)
		return ret;
	printf("client: disconnected\n");
	return 0;
}
/* [disconnect] */

/* [teardown] */
static int deregister_memory(struct client *c)
{
	/* Every work request still posted completes as flushed now that the
	 * QP is stopped; the source copies are the device's until their
	 * WRITEs have. Leak them rather than free them under the device. */
	if (c->outstanding > 0 && rex_cq_drain(c->conn->cq, c->outstanding, FLUSH_TIMEOUT_MS))
		return -ETIMEDOUT;
	c->outstanding = 0;
	return rex_buffers_destroy(&c->source);
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

	/* [main-steps] */
	ret = create_connection(&c);
	if (ret)
		goto out; /* -EPROTONOSUPPORT: an iWARP device, refused */
	if (connect_to_server(&c))
		goto out_destroy_connection; /* nothing posted, nothing registered */
	if (check_descriptor(&c))
		goto out_disconnect;
	if (post_receives(&c))
		goto out_disconnect;
	if (register_memory(&c))
		goto out_disconnect;
	if (stream_messages(&c))
		goto out_disconnect;
	if (say_done(&c))
		goto out_disconnect;
	status = REX_EXIT_OK;

out_disconnect:
	if (disconnect(&c))
		status = REX_EXIT_FAILURE;
	/* Memory registered after connecting goes after the disconnect all
	 * the same: the QP must be stopped before its memory is released. */
	if (deregister_memory(&c))
		status = REX_EXIT_FAILURE;
out_destroy_connection:
	if (rex_conn_destroy(c.conn))
		status = REX_EXIT_FAILURE;
out:
	return ret == -EPROTONOSUPPORT ? REX_EXIT_NO_DEVICE : status;
	/* [main-steps] */
}
/* [main] */
