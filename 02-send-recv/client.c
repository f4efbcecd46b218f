/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 02, the client: two-sided messages, a ping-pong with credits.
 *
 * What it teaches: work requests, scatter/gather entries and work
 * completions; registering memory with only the access it needs; posting
 * receives before the peer can send (a SEND that finds no receive gets a
 * "receiver not ready" NAK); sleeping on the completion channel instead of
 * spinning; credit-based flow control, so that we never send a message the
 * server has no receive for; and round-trip times.
 *
 * The connection itself is chapter 01's, now the helper common/rex_conn.c.
 *
 * Run it against 02-send-recv-server on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/02-send-recv-server -a 10.77.0.1 &
 *     build/bin/02-send-recv-client -a 10.77.0.1 [-s SIZE] [-n COUNT] [-w WINDOW]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/02-send-recv-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/02-send-recv-client -a $RDMA_LAB_ADDR'
 *
 * It sends COUNT messages of SIZE bytes, at most WINDOW at once, checks that
 * every echo is byte for byte what it sent, prints the round-trip times, says
 * bye and disconnects. Exit status: 0 every echo intact; 1 something failed
 * (stderr says what); 2 bad command line; 77 no RDMA device.
 * The walkthrough is docs/02-send-recv.md.
 */
#include <errno.h>
#include <inttypes.h>
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
#define PROGRAM "02-send-recv-client"

#define DEFAULT_SIZE  64      /* payload bytes per message (-s) */
#define DEFAULT_COUNT 1000    /* messages (-n) */
#define MAX_COUNT     1000000 /* we keep one round-trip time per message: 8 MB at most */
#define MAX_WINDOW    64      /* messages in flight (-w); the QP holds WINDOW + 1 */

/* How long we sleep on the completion channel for the next completion, in
 * ms. A live server echoes within microseconds; one that died without a
 * disconnect would otherwise keep us waiting forever. */
#define CQ_WAIT_TIMEOUT_MS 10000
/* Address and route resolution and each CM step, in ms (see chapter 01). */
#define CM_TIMEOUT_MS 5000
/* Completions taken from the CQ at once. */
#define WC_BATCH 16
/* [constants] */

struct client {
	struct rex_options opts;
	struct rex_conn *conn;
	struct rex_buffers recv; /* WINDOW + 1 receives, each for header + SIZE bytes */
	struct rex_buffers send; /* WINDOW + 1 sends: the messages in flight and BYE */
	uint32_t *free_send;    /* stack of send slots not in use */
	uint32_t nfree_send;

	/* Credits: how many more messages the server has receives for. */
	uint32_t credits;
	uint32_t credit_limit; /* the server's receives: credits never exceed them */
	uint16_t credits_owed; /* receives we re-posted and have not told the server of */

	uint64_t sent;            /* DATA messages posted */
	uint64_t echoed;          /* their echoes, checked */
	struct timespec *sent_at; /* when message seq was posted, at [seq % WINDOW] */
	double *rtt_us;           /* round-trip time of each message */
	double elapsed_s;         /* first send to last echo */
	uint32_t bye_slot;        /* the send buffer BYE went out in */
	bool bye_posted;
	bool bye_done; /* BYE's send completed: the server has it */
	bool connected;
	uint32_t outstanding; /* work requests posted whose completion we have not seen */
};

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static int parse_command_line(struct client *c, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "send COUNT messages of SIZE bytes to 02-send-recv-server, check "
	               "every echo, print round-trip times",
	    .is_server = false,
	    .flags = REX_OPT_SIZE | REX_OPT_COUNT | REX_OPT_WINDOW,
	    .defaults = {.size = DEFAULT_SIZE, .count = DEFAULT_COUNT, .window = 1},
	    .min_size = 1,
	    .max_size = SR_MAX_PAYLOAD, /* larger: exit 2 before anything is created */
	    .min_count = 1,
	    .max_count = MAX_COUNT,
	    .max_window = MAX_WINDOW,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &c->opts, stdout, stderr);
}

/* [create-connection] */
static int create_connection(struct client *c)
{
	struct rex_conn_attr attr;
	int slots = (int)c->opts.window + 1;

	/*
	 * Chapter 01's steps (event channel, id, address and route, protection
	 * domain, CQ with a completion channel, RC queue pair), now one helper
	 * call. The queues are sized for what we keep in flight: WINDOW + 1
	 * sends and as many receives, and a CQ with room for a completion of
	 * every one of them, so it can never overflow.
	 */
	rex_conn_attr_default(&attr);
	attr.send_depth = slots;
	attr.recv_depth = slots;
	attr.cq_depth = 2 * slots;
	attr.timeout_ms = CM_TIMEOUT_MS;
	c->conn = rex_conn_create_client(c->opts.addr, c->opts.port, &attr);
	if (!c->conn)
		return -errno;
	printf("client: queue pair ready: %d sends, %d receives, %d completions\n", slots, slots,
	       2 * slots);
	return 0;
}
/* [create-connection] */

/* [register-memory] */
static int register_memory(struct client *c)
{
	uint32_t slots = c->opts.window + 1;
	uint32_t i;
	int ret;

	ret = rex_buffers_create(&c->recv, c->conn->pd, slots, SR_HEADER_SIZE + c->opts.size,
	                          IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	ret = rex_buffers_create(&c->send, c->conn->pd, slots, SR_HEADER_SIZE + c->opts.size, 0);
	if (ret)
		goto out_deregister_recv;
	c->free_send = calloc(slots, sizeof(*c->free_send));
	c->sent_at = calloc(c->opts.window, sizeof(*c->sent_at));
	c->rtt_us = calloc(c->opts.count, sizeof(*c->rtt_us));
	if (!c->free_send || !c->sent_at || !c->rtt_us) {
		ret = -ENOMEM;
		rex_report_errno("calloc", ENOMEM);
		goto out_free;
	}
	for (i = 0; i < slots; i++)
		c->free_send[c->nfree_send++] = i;
	printf("client: registered %u receive buffers of %zu bytes (local write) "
	       "and %u send buffers (no access flags)\n",
	       slots, c->recv.slot_size, slots);
	return 0;

out_free:
	free(c->rtt_us);
	free(c->sent_at);
	free(c->free_send);
	rex_buffers_destroy(&c->send);
out_deregister_recv:
	rex_buffers_destroy(&c->recv);
	return ret;
}
/* [register-memory] */

/* [post-receives] */
static int post_receives(struct client *c)
{
	uint32_t i;
	int ret;

	/*
	 * Before we connect: once connected the server may send at any moment,
	 * and a SEND that arrives when no receive is posted is refused with a
	 * "receiver not ready" (RNR) NAK. The QP is in the INIT state already,
	 * which accepts receives. Each receive is one credit for the server.
	 */
	for (i = 0; i < c->recv.count; i++) {
		ret = rex_buffers_post_recv(c->conn->qp, &c->recv, i, rex_wr_id(SR_WR_RECV, i));
		if (ret)
			return ret;
		c->outstanding++;
	}
	printf("client: %u receives posted\n", c->recv.count);
	return 0;
}
/* [post-receives] */

/* [connect] */
static int connect_to_server(struct client *c)
{
	uint8_t data[SR_HELLO_WIRE_SIZE];
	struct sr_hello hello;
	char why[SR_WHY_SIZE];
	struct ibv_qp_attr qp_attr;
	struct ibv_qp_init_attr init_attr;
	int ret;

	/* [hello-credits] */
	/* Our hello: the receives we posted (the server's first credits) and
	 * the largest payload we will send. */
	sr_hello_init(&hello, (uint16_t)c->recv.count, (uint32_t)c->opts.size);
	sr_hello_encode(&hello, data);
	ret = rex_conn_connect(c->conn, data, sizeof(data));
	if (ret)
		return ret;
	c->connected = true;

	/* The server's hello came in the accept's private data: check it. */
	ret = sr_hello_decode(c->conn->peer_data, c->conn->peer_data_len, &hello, why, sizeof(why));
	if (ret == 0 && hello.max_payload < c->opts.size) {
		snprintf(why, sizeof(why), "max payload %u, but we send %" PRIu64,
		         (unsigned)hello.max_payload, c->opts.size);
		ret = -EMSGSIZE;
	}
	if (ret) {
		fprintf(stderr, "client: bad hello from the server: %s\n", why);
		return ret;
	}
	c->credits = hello.credits;
	c->credit_limit = hello.credits;
	printf("client: connected: server grants %u credits, max payload %u byte%s\n",
	       (unsigned)hello.credits, (unsigned)hello.max_payload,
	       hello.max_payload == 1 ? "" : "s");
	/* [hello-credits] */

	/* rnr_retry came from the server's accept (see the walkthrough); the
	 * local ACK timeout is our own (rex_conn_attr.ack_timeout). */
	if (c->opts.verbose &&
	    ibv_query_qp(c->conn->qp, &qp_attr, IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_TIMEOUT,
	                 &init_attr) == 0)
		rex_debug(c->opts.verbose, "client", "queue pair retry_cnt %u, rnr_retry %u, timeout %u",
		          (unsigned)qp_attr.retry_cnt, (unsigned)qp_attr.rnr_retry,
		          (unsigned)qp_attr.timeout);
	return 0;
}
/* [connect] */

/* [post-send] */
static int post_message(struct client *c, uint8_t type, uint64_t seq)
{
	uint32_t slot;
	uint8_t *buf;
	struct sr_header hdr;
	int ret;

	/* Flow control: the caller waited for a credit and a free buffer. */
	if (c->credits == 0 || c->nfree_send == 0) {
		fprintf(stderr, "client: bug: sending with %u credits and %u free buffers\n",
		        c->credits, c->nfree_send);
		return -EPROTO;
	}
	slot = c->free_send[--c->nfree_send];
	buf = rex_buffers_slot(&c->send, slot);

	/* The header returns the credits for the receives we re-posted. */
	hdr.type = type;
	hdr.flags = 0;
	hdr.credits = c->credits_owed;
	hdr.length = type == SR_DATA ? (uint32_t)c->opts.size : 0;
	sr_header_encode(&hdr, buf);
	if (type == SR_DATA)
		sr_pattern_fill(buf + SR_HEADER_SIZE, hdr.length, seq);

	/* [send-wr] */
	struct ibv_sge sge = {
	    .addr = (uintptr_t)buf,
	    .length = SR_HEADER_SIZE + hdr.length,
	    .lkey = c->send.mr->lkey,
	};
	/* IBV_WR_SEND consumes one receive at the server. SIGNALED asks for a
	 * completion, which tells us when the buffer may be reused: the device
	 * reads it until the server's acknowledgement arrives. */
	struct ibv_send_wr wr = {
	    .wr_id = rex_wr_id(SR_WR_SEND, slot),
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND,
	    .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (type == SR_DATA)
		clock_gettime(CLOCK_MONOTONIC, &c->sent_at[seq % c->opts.window]);
	ret = ibv_post_send(c->conn->qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		c->free_send[c->nfree_send++] = slot;
		return -ret;
	}
	c->outstanding++;
	c->credits--;
	c->credits_owed = 0;
	/* [send-wr] */
	if (type == SR_BYE) {
		c->bye_slot = slot;
		c->bye_posted = true;
	}
	return 0;
}
/* [post-send] */

/* [handle-echo] */
static int handle_echo(struct client *c, const struct ibv_wc *wc, uint32_t slot)
{
	const uint8_t *buf = rex_buffers_slot(&c->recv, slot);
	uint64_t seq = c->echoed;
	struct sr_header hdr;
	struct timespec now;
	char why[SR_WHY_SIZE];
	size_t offset;
	int ret;

	/* byte_len is what the device really wrote: the header must agree. */
	ret = sr_header_decode(buf, wc->byte_len, (uint32_t)c->opts.size, &hdr, why, sizeof(why));
	if (ret == 0 && hdr.type != SR_ECHO) {
		snprintf(why, sizeof(why), "unexpected %s", sr_type_name(hdr.type));
		ret = -EPROTO;
	}
	if (ret == 0 && (hdr.length != c->opts.size || seq >= c->sent)) {
		snprintf(why, sizeof(why), "echo of %u bytes, %" PRIu64 " of %" PRIu64 " echoed",
		         (unsigned)hdr.length, seq, c->sent);
		ret = -EPROTO;
	}
	if (ret == 0 && hdr.credits > c->credit_limit - c->credits) {
		snprintf(why, sizeof(why), "%u credits returned, more than the server granted",
		         (unsigned)hdr.credits);
		ret = -EPROTO;
	}
	if (ret) {
		fprintf(stderr, "client: bad message from the server: %s\n", why);
		return ret;
	}
	c->credits += hdr.credits;

	/* Echoes come back in order: RC delivers in order and the server
	 * answers in order. So this one is the echo of message `seq`. */
	if (!sr_pattern_check(buf + SR_HEADER_SIZE, hdr.length, seq, &offset)) {
		fprintf(stderr,
		        "client: echo of message %" PRIu64 " differs at offset %zu: "
		        "got 0x%02x, want 0x%02x\n",
		        seq, offset, buf[SR_HEADER_SIZE + offset], sr_pattern_byte(seq, offset));
		return -EBADMSG;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	c->rtt_us[seq] = seconds_between(&c->sent_at[seq % c->opts.window], &now) * 1e6;
	c->echoed++;

	/* The buffer is free again: re-post it, and owe the server a credit. */
	ret = rex_buffers_post_recv(c->conn->qp, &c->recv, slot, rex_wr_id(SR_WR_RECV, slot));
	if (ret)
		return ret;
	c->outstanding++;
	c->credits_owed++;
	return 0;
}
/* [handle-echo] */

/* [wait-completions] */
static int wait_for_completions(struct client *c)
{
	struct ibv_wc wc[WC_BATCH];
	int n, i, ret;

	/* Sleep on the completion channel until something completes (see
	 * common/rex_cq.c), for at most CQ_WAIT_TIMEOUT_MS, watching the CM's
	 * channel too: a server that dies sends no more echoes, and its
	 * kernel's disconnect arrives there. */
	n = rex_cq_wait_watch(c->conn->comp_channel, c->conn->cq, wc, WC_BATCH, CQ_WAIT_TIMEOUT_MS,
	                      c->conn->channel->fd);
	if (n == -ECONNRESET)
		fprintf(stderr,
		        "client: the server went away (disconnected): %" PRIu64 " sent, %" PRIu64
		        " echoed\n",
		        c->sent, c->echoed);
	if (n == -ETIMEDOUT)
		fprintf(stderr,
		        "client: nothing completed within %d s: %" PRIu64 " sent, "
		        "%" PRIu64 " echoed, %u credits\n"
		        "  hint: is the server still running? Look at its output\n",
		        CQ_WAIT_TIMEOUT_MS / 1000, c->sent, c->echoed, c->credits);
	if (n < 0)
		return n;
	/* [completion-dispatch] */
	c->outstanding -= (uint32_t)n;
	for (i = 0; i < n; i++) {
		uint32_t slot = rex_wr_id_slot(wc[i].wr_id);
		bool is_send = rex_wr_id_kind(wc[i].wr_id) == SR_WR_SEND;

		/* Check every completion's status: a failed work request says why
		 * here, and only here. */
		if (wc[i].status != IBV_WC_SUCCESS) {
			rex_report_wc(is_send ? "send" : "receive", &wc[i]);
			return -EIO;
		}
		if (is_send) {
			c->free_send[c->nfree_send++] = slot; /* the buffer is ours again */
			if (c->bye_posted && slot == c->bye_slot)
				c->bye_done = true;
			continue;
		}
		ret = handle_echo(c, &wc[i], slot);
		if (ret)
			return ret;
	}
	/* [completion-dispatch] */
	return 0;
}
/* [wait-completions] */

/* [ping-pong] */
static int ping_pong(struct client *c)
{
	struct timespec start, end;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (c->echoed < c->opts.count) {
		/* Send while the window, the credits and the buffers allow. */
		while (c->sent < c->opts.count && c->sent - c->echoed < c->opts.window &&
		       c->credits > 0 && c->nfree_send > 0) {
			ret = post_message(c, SR_DATA, c->sent);
			if (ret)
				return ret;
			c->sent++;
		}
		/* Then sleep until an echo (or a send completion) comes. */
		ret = wait_for_completions(c);
		if (ret)
			return ret;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	c->elapsed_s = seconds_between(&start, &end);
	printf("client: %" PRIu64 " echoes of %" PRIu64 " byte%s intact in %.3f s\n", c->echoed,
	       c->opts.size, c->opts.size == 1 ? "" : "s", c->elapsed_s);
	return 0;
}
/* [ping-pong] */

/* [report-rtt] */
static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The nearest-rank percentile of n sorted values: the smallest value with
 * at least p percent of all values at or below it. */
static double percentile(const double *sorted, uint64_t n, unsigned p)
{
	uint64_t rank = (n * p + 99) / 100; /* ceil(n * p / 100), 1-based */

	return sorted[rank ? rank - 1 : 0];
}

static void report_rtt(struct client *c)
{
	uint64_t n = c->echoed;

	/* Each time runs from ibv_post_send() to the echo's completion in our
	 * hands, so it includes the sleep and wake-up on the completion channel. */
	qsort(c->rtt_us, n, sizeof(*c->rtt_us), compare_double);
	printf("client: rtt us: count %" PRIu64 " min %.1f median %.1f p99 %.1f max %.1f\n", n,
	       c->rtt_us[0], percentile(c->rtt_us, n, 50), percentile(c->rtt_us, n, 99),
	       c->rtt_us[n - 1]);
}
/* [report-rtt] */

/* [bye] */
static int say_bye(struct client *c)
{
	int ret;

	/* BYE needs a credit like any message; it also returns the credits we
	 * still owe. Its completion means the server has it: only then may we
	 * disconnect, or the disconnect could flush it. */
	while (c->credits == 0 || c->nfree_send == 0) {
		ret = wait_for_completions(c);
		if (ret)
			return ret;
	}
	ret = post_message(c, SR_BYE, 0);
	if (ret)
		return ret;
	while (!c->bye_done) {
		ret = wait_for_completions(c);
		if (ret)
			return ret;
	}
	printf("client: bye sent\n");
	return 0;
}
/* [bye] */

/* [disconnect] */
static int disconnect(struct client *c)
{
	int ret;

	if (!c->connected)
		return 0;
	/* Moves our QP to the error state, which starts a flush: receives
	 * still posted complete with IBV_WC_WR_FLUSH_ERR. Their buffers are
	 * ours again only once those completions are taken (see teardown). */
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
	int drain_err = 0, send_err, recv_err;

	/*
	 * After the disconnect our QP is in the error state, which starts a
	 * flush: every receive still posted (and any send not yet done)
	 * completes with IBV_WC_WR_FLUSH_ERR. Until its completion is out, a
	 * work request's buffer is still the device's; take them all, then
	 * deregister. Had the connection never been made, nothing was posted.
	 */
	if (c->outstanding > 0)
		drain_err = rex_cq_drain(c->conn->cq, c->outstanding, CM_TIMEOUT_MS);
	if (drain_err)
		return drain_err; /* leak the memory rather than free it under the device */
	send_err = rex_buffers_destroy(&c->send);
	recv_err = rex_buffers_destroy(&c->recv);

	free(c->rtt_us);
	free(c->sent_at);
	free(c->free_send);
	return send_err ? send_err : recv_err;
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

	if (create_connection(&c))
		goto out;
	if (register_memory(&c))
		goto out_destroy_connection;
	if (post_receives(&c))
		goto out_deregister_memory;
	if (connect_to_server(&c))
		goto out_disconnect;
	if (ping_pong(&c))
		goto out_disconnect;
	report_rtt(&c);
	rex_debug(c.opts.verbose, "client", "slept on the completion channel %lu times",
	          rex_cq_sleeps());
	if (say_bye(&c))
		goto out_disconnect;
	status = REX_EXIT_OK;

out_disconnect:
	if (disconnect(&c))
		status = REX_EXIT_FAILURE;
out_deregister_memory:
	if (deregister_memory(&c))
		status = REX_EXIT_FAILURE;
out_destroy_connection:
	if (rex_conn_destroy(c.conn))
		status = REX_EXIT_FAILURE;
out:
	return status;
}
/* [main] */
