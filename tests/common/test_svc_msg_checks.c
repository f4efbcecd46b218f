/* SPDX-License-Identifier: MIT */
/*
 * rex_svc's message layer, without a device: what a peer sends is checked
 * against the bytes the device wrote before any of it is used (a message
 * too short or too long, unknown flags, a credit-only message with a
 * payload, more credits returned than the peer holds), each refused with a
 * line that says why and the connection closed as failed; a good message
 * is delivered, returns its credits and has its receive posted again; and
 * the last credit goes only with credits returned; a message the program
 * holds keeps its receive and its credit, and comes again first; a
 * message beyond the credits the peer was given is refused.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "rex_svc_priv.h"

#define SIZE 16 /* msg_size */

static struct ibv_context ctx;
static struct ibv_qp qp = {.context = &ctx};
static struct ibv_mr mr;
static int recvs_posted, sends_posted;
static uint8_t last_sent[REX_SVC_MSG_HEADER + SIZE];
static uint32_t delivered_len;
static char delivered[8]; /* first payload byte of each message delivered */
static unsigned ndelivered;
static bool hold_next; /* message() holds what it gets */

static int fake_post_recv(struct ibv_qp *q, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)q;
	(void)bad;
	for (; wr; wr = wr->next)
		recvs_posted++;
	return 0;
}

static int fake_post_send(struct ibv_qp *q, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	(void)q;
	(void)bad;
	for (; wr; wr = wr->next) {
		memcpy(last_sent, (void *)(uintptr_t)wr->sg_list[0].addr, wr->sg_list[0].length);
		sends_posted++;
	}
	return 0;
}

static void message(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	delivered_len = len;
	if (ndelivered < sizeof(delivered))
		delivered[ndelivered++] = *(const char *)msg;
	if (hold_next)
		CHECK_INT_EQ(rex_svc_hold(c), 0);
}

static void closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	(void)c;
	(void)why;
}

static const struct rex_svc_ops ops = {.message = message, .closed = closed};

static void engine_released(struct rex_aconn *c)
{
	(void)c;
}

static const struct rex_aconn_ops engine_ops = {.released = engine_released};

struct fixture {
	struct rex_svc svc;
	struct rex_svc_conn c;
	struct rdma_cm_id id;
	uint64_t number[4];
	uint32_t len[4];
	struct rex_svc_held held[4];
};

static void buffers(struct rex_buffers *b, uint32_t count)
{
	b->slot_size = REX_SVC_MSG_HEADER + SIZE;
	b->count = count;
	b->mem = calloc(count, b->slot_size);
	b->mr = &mr;
	CHECK_TRUE(b->mem != NULL);
}

/* A server's connection, accepted (its QP usable), 4 receive slots, the
 * peer with 4 receives of which \p credits are ours to use. */
static void setup(struct fixture *f, uint32_t credits)
{
	memset(f, 0, sizeof(*f));
	ctx.ops.post_recv = fake_post_recv;
	ctx.ops.post_send = fake_post_send;
	rex_svc_config_default(&f->svc.cfg);
	f->svc.cfg.who = "test";
	f->svc.cfg.msg_size = SIZE;
	f->svc.cfg.msg_recvs = 4;
	f->svc.cfg.msg_sends = 4;
	f->svc.cfg.send_depth = 4;
	f->svc.ops = &ops;
	f->svc.loop = rex_loop_create();
	CHECK_TRUE(f->svc.loop != NULL);
	rex_aconn_devs_init(&f->svc.devs, f->svc.loop, "test", NULL, NULL, NULL, NULL);
	f->c.svc = &f->svc;
	rex_aconn_init(&f->c.ac, &f->svc.devs, &f->id, REX_STATE_CONNECTING, &engine_ops);
	strcpy(f->c.ac.name, "connection 1");
	f->c.ac.qp = &qp;
	f->c.send_ids = calloc(4, sizeof(*f->c.send_ids));
	f->c.send_kind = calloc(4, sizeof(*f->c.send_kind));
	f->c.send_depth = 4;
	f->c.msgs.number = f->number;
	f->c.msgs.len = f->len;
	f->c.msgs.held = f->held;
	buffers(&f->c.msgs.recv, 4);
	buffers(&f->c.msgs.send, 4);
	f->c.msgs.peer_recvs = 4;
	f->c.msgs.credits = credits;
	f->c.msgs.peer_may_send = 4; /* the credits we told the peer */
	recvs_posted = sends_posted = 0;
	delivered_len = 0;
	ndelivered = 0;
	hold_next = false;
}

/* Message \p tag (its one payload byte) arrives in receive slot \p slot. */
static void arrive(struct fixture *f, uint32_t slot, char tag)
{
	uint8_t *buf = rex_buffers_slot(&f->c.msgs.recv, slot);
	struct ibv_wc wc = {.wr_id = rex_wr_id(REX_WR_RECV, slot), .byte_len = 5};

	memset(buf, 0, REX_SVC_MSG_HEADER);
	buf[REX_SVC_MSG_HEADER] = (uint8_t)tag;
	rex_svc_msgs_received(&f->c, &wc);
}

static void teardown(struct fixture *f)
{
	rex_loop_timer_cancel(f->svc.loop, &f->c.ac.deadline);
	rex_loop_unpost(f->svc.loop, &f->c.ac.release);
	free(f->c.msgs.recv.mem);
	free(f->c.msgs.send.mem);
	free(f->c.send_ids);
	free(f->c.send_kind);
	CHECK_INT_EQ(rex_loop_destroy(f->svc.loop), 0);
}

/* Receive slot 0 holds \p bytes bytes: header (credits, flags, pad), payload. */
static char *receive(struct fixture *f, uint16_t credits, uint8_t flags, uint8_t pad,
                     uint32_t bytes)
{
	uint8_t *slot = f->c.msgs.recv.mem;
	struct ibv_wc wc = {.wr_id = rex_wr_id(REX_WR_RECV, 0), .byte_len = bytes};
	struct capture cap;

	slot[0] = (uint8_t)(credits >> 8);
	slot[1] = (uint8_t)credits;
	slot[2] = flags;
	slot[3] = pad;
	f->c.ac.qp = NULL; /* a refused message closes it: no QP to move */
	capture_begin(&cap);
	rex_svc_msgs_received(&f->c, &wc);
	return capture_end(&cap);
}

static void refused(uint16_t credits, uint8_t flags, uint8_t pad, uint32_t bytes, const char *why)
{
	struct fixture f;
	char *text;

	setup(&f, 2);
	text = receive(&f, credits, flags, pad, bytes);
	CHECK_STR_CONTAINS(text, "test: connection 1: bad message: ");
	CHECK_STR_CONTAINS(text, why);
	CHECK_INT_EQ(f.c.ac.state, REX_STATE_DRAINING);
	CHECK_TRUE(f.c.ac.failed);
	CHECK_INT_EQ(delivered_len, 0);
	CHECK_INT_EQ(recvs_posted, 0);
	CHECK_INT_EQ(f.c.msgs.credits, 2);
	free(text);
	teardown(&f);
}

int main(void)
{
	struct fixture f;

	refused(0, 0, 0, 3, "3 bytes, 20 at most");
	refused(0, 0, 0, REX_SVC_MSG_HEADER + SIZE + 1, "21 bytes, 20 at most");
	refused(0, 0x80, 0, 8, "flags 0x80");
	refused(0, 0, 1, 8, "flags 0x00 0x01");
	refused(0, REX_SVC_MSG_CREDIT_ONLY, 0, 5, "flags 0x01 0x00 with 5 bytes");
	refused(3, 0, 0, 8, "3 credits returned, more than the peer holds (2)");

	/* A good message: delivered, its 2 credits counted, its receive posted
	 * again and owed to the peer. */
	setup(&f, 2);
	f.c.ac.qp = &qp;
	{
		uint8_t *slot = f.c.msgs.recv.mem;
		struct ibv_wc wc = {.wr_id = rex_wr_id(REX_WR_RECV, 0), .byte_len = 9};

		slot[1] = 2;
		rex_svc_msgs_received(&f.c, &wc);
	}
	CHECK_INT_EQ(delivered_len, 5);
	CHECK_INT_EQ(f.c.msgs.credits, 4);
	CHECK_INT_EQ(recvs_posted, 1);
	CHECK_INT_EQ(f.c.msgs.owed, 1);
	CHECK_TRUE(!f.c.ac.failed);
	teardown(&f);

	/* The last credit: a message waits while nothing is owed, and goes
	 * with the first credit owed, carrying it, flagged "low". */
	setup(&f, 1);
	CHECK_INT_EQ(rex_svc_send(&f.c, "hello", 5), 0);
	CHECK_INT_EQ(sends_posted, 0);
	f.c.msgs.owed = 1;
	rex_svc_msgs_pump(&f.c);
	CHECK_INT_EQ(sends_posted, 1);
	CHECK_INT_EQ(last_sent[1], 1);
	CHECK_INT_EQ(last_sent[2], REX_SVC_MSG_LOW);
	CHECK_INT_EQ(memcmp(last_sent + REX_SVC_MSG_HEADER, "hello", 5), 0);
	CHECK_INT_EQ(f.c.msgs.credits, 0);
	CHECK_INT_EQ(f.c.msgs.owed, 0);
	/* No credit left: -ENOBUFS only when the 4 slots are taken. */
	for (int i = 1; i < 4; i++)
		CHECK_INT_EQ(rex_svc_send(&f.c, "x", 1), 0);
	CHECK_INT_EQ(rex_svc_send(&f.c, "x", 1), -ENOBUFS);
	CHECK_INT_EQ(rex_svc_send(&f.c, "0123456789abcdefg", 17), -EMSGSIZE);
	CHECK_INT_EQ(sends_posted, 1);
	teardown(&f);

	/* A message held (its answer found no send slot): not posted again,
	 * its credit not owed; one after it waits behind it; a free send slot
	 * delivers both again, in order, and posts their receives. Outside
	 * message() there is nothing to hold. */
	setup(&f, 4);
	f.c.ac.qp = &qp;
	CHECK_INT_EQ(rex_svc_hold(&f.c), -EINVAL);
	for (int i = 0; i < 4; i++)
		CHECK_INT_EQ(rex_svc_send(&f.c, "x", 1), 0); /* every send slot in flight */
	CHECK_INT_EQ(sends_posted, 3);                       /* the last credit kept */
	hold_next = true;
	arrive(&f, 0, 'a');
	CHECK_INT_EQ(ndelivered, 1);
	CHECK_TRUE(f.c.msgs.paused);
	arrive(&f, 1, 'b');
	CHECK_INT_EQ(ndelivered, 1); /* behind the held one */
	CHECK_INT_EQ(f.c.msgs.held_count, 2);
	CHECK_INT_EQ(recvs_posted, 0);
	CHECK_INT_EQ(f.c.msgs.owed, 0);
	rex_svc_msgs_resume(&f.c); /* no slot free yet: nothing */
	CHECK_INT_EQ(ndelivered, 1);
	hold_next = false;
	f.c.ac.sq_done = 1; /* the first send completed: its slot is free */
	rex_svc_msgs_resume(&f.c);
	CHECK_INT_EQ(ndelivered, 3);
	CHECK_INT_EQ(memcmp(delivered, "aab", 3), 0);
	CHECK_INT_EQ(recvs_posted, 2);
	CHECK_INT_EQ(f.c.msgs.held_count, 0);
	CHECK_TRUE(!f.c.msgs.paused && !f.c.ac.failed);
	/* The two credits owed went with the message that waited for them. */
	CHECK_INT_EQ(sends_posted, 4);
	CHECK_INT_EQ(last_sent[1], 2);
	teardown(&f);

	/* Our books of the peer's credits: 4 told, each message takes one, each
	 * credit we return gives one back; a fifth message with none returned
	 * was sent with no credit (on a shared receive queue it would take
	 * another connection's receive): refused. */
	setup(&f, 4);
	f.c.ac.qp = &qp;
	for (int i = 0; i < 4; i++)
		arrive(&f, (uint32_t)i, 'm');
	CHECK_INT_EQ(f.c.msgs.peer_may_send, 0);
	CHECK_INT_EQ(f.c.msgs.owed, 4);
	rex_svc_msgs_pump(&f.c); /* the 4 owed go back alone */
	CHECK_INT_EQ(f.c.msgs.peer_may_send, 4);
	for (int i = 0; i < 4; i++)
		arrive(&f, (uint32_t)i, 'n');
	CHECK_TRUE(!f.c.ac.failed);
	{
		struct capture cap;
		char *text;

		f.c.ac.qp = NULL; /* refused: no QP to move */
		capture_begin(&cap);
		arrive(&f, 0, 'o');
		text = capture_end(&cap);
		CHECK_STR_CONTAINS(text, "test: connection 1: bad message: sent with no credit left");
		free(text);
	}
	CHECK_TRUE(f.c.ac.failed);
	CHECK_INT_EQ(ndelivered, 8);
	teardown(&f);

	/* Half the receives owed and nothing to send: the credits go alone. */
	setup(&f, 3);
	f.c.msgs.owed = 2;
	rex_svc_msgs_pump(&f.c);
	CHECK_INT_EQ(sends_posted, 1);
	CHECK_INT_EQ(last_sent[1], 2);
	CHECK_INT_EQ(last_sent[2], REX_SVC_MSG_CREDIT_ONLY);
	CHECK_INT_EQ(f.c.msgs.stats.credit_only, 1);
	teardown(&f);
	return check_finish();
}
