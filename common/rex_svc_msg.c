/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_msg.c: chapter 02's messages with credits, as rex_svc's optional
 * layer (rex_svc.h says the rules). A message is a 4-byte header (credits
 * returned, big-endian 16 bits; flags; a zero byte) and its payload.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* htobe16() and be16toh() of rex_wire.h under -std=c11 */
#endif
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rex_error.h"
#include "rex_svc_priv.h"
#include "rex_wire.h"

static bool closing(const struct rex_svc_conn *c)
{
	return c->ac.state == REX_STATE_DRAINING || c->ac.state == REX_STATE_CLOSED;
}

/* Post receive slot \p slot (again): one more credit owed to the peer. On
 * a shared receive queue the slot is the queue's buffer, posted there. */
static int repost(struct rex_svc_conn *c, uint32_t slot)
{
	struct rex_svc_msgs *m = &c->msgs;
	struct ibv_sge sge;
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	int ret;

	if (c->ac.srq) {
		ret = rex_svc_srq_repost(c, slot);
		if (ret == 0) /* its share may shrink or grow here */
			m->owed += rex_svc_srq_regrant(c, m->peer_low);
		return ret;
	}
	sge = rex_buffers_sge(&m->recv, slot, (uint32_t)m->recv.slot_size);
	ret = rex_aconn_post_recv(&c->ac, &wr);
	if (ret == 0)
		m->owed++;
	return ret;
}

/* The bytes of receive slot \p slot (or of the shared queue's buffer). */
static const uint8_t *slot_bytes(const struct rex_svc_conn *c, uint32_t slot)
{
	return c->ac.srq ? rex_svc_srq_bytes(c, slot) : rex_buffers_slot(&c->msgs.recv, slot);
}

int rex_svc_msgs_create(struct rex_svc_conn *c)
{
	const struct rex_svc_config *cfg = &c->svc->cfg;
	struct rex_svc_msgs *m = &c->msgs;
	size_t slot = REX_SVC_MSG_HEADER + (size_t)cfg->msg_size;
	uint32_t i;
	int ret;

	if (!cfg->msg_size)
		return 0;
	m->number = calloc(cfg->msg_sends, sizeof(*m->number));
	m->len = calloc(cfg->msg_sends, sizeof(*m->len));
	m->held = calloc(cfg->msg_recvs, sizeof(*m->held));
	if (!m->number || !m->len || !m->held) {
		rex_report_errno("calloc", errno);
		return -ENOMEM;
	}
	/* The peer's credits, told with our private data: as many receives
	 * as are posted for it, here or in the shared queue (its share). */
	m->peer_may_send = c->ac.srq ? c->srq_share : cfg->msg_recvs;
	/* The device writes the receive slots; it only reads the send slots. */
	ret = rex_buffers_create(&m->send, c->ac.dev->pd, cfg->msg_sends, slot, 0);
	if (ret || c->ac.srq)
		return ret;
	ret = rex_buffers_create(&m->recv, c->ac.dev->pd, cfg->msg_recvs, slot,
	                         IBV_ACCESS_LOCAL_WRITE);
	/* Every receive before the peer can send: each one a credit it gets
	 * with our private data, not with a message. */
	for (i = 0; ret == 0 && i < cfg->msg_recvs; i++)
		ret = repost(c, i);
	m->owed = 0;
	return ret;
}

int rex_svc_msgs_destroy(struct rex_svc_conn *c)
{
	struct rex_svc_msgs *m = &c->msgs;
	/* Both, even when the first fails (a failed deregistration keeps its
	 * memory: rex_buffers.h). */
	int a = rex_buffers_destroy(&m->send);
	int b = rex_buffers_destroy(&m->recv);
	uint32_t recvs = c->svc->cfg.msg_recvs;

	/* Messages the program never took: their buffers are the shared
	 * queue's, for the other connections (the QP is gone: no credit). */
	for (; c->ac.srq && m->held && m->held_count > 0; m->held_count--) {
		if (rex_svc_srq_repost(c, m->held[m->held_first].slot))
			b = -1;
		m->held_first = (m->held_first + 1) % recvs;
	}

	free(m->number);
	free(m->len);
	free(m->held);
	m->number = NULL;
	m->len = NULL;
	m->held = NULL;
	return a || b ? -1 : 0;
}

/* [hold] */
/* Hand the waiting messages to the program, oldest first, each receive
 * posted again (its credit owed) once the program took it; stop at one it
 * holds (rex_svc_hold()): that one comes again first. */
static void deliver_held(struct rex_svc_conn *c)
{
	struct rex_svc_msgs *m = &c->msgs;
	uint32_t recvs = c->svc->cfg.msg_recvs;

	while (m->held_count > 0 && !closing(c)) {
		struct rex_svc_held h = m->held[m->held_first];

		if (c->svc->ops->message) {
			m->in_message = true;
			c->svc->ops->message(c, slot_bytes(c, h.slot) + REX_SVC_MSG_HEADER, h.len);
			m->in_message = false;
		}
		if (m->hold_asked) {
			m->hold_asked = false;
			m->paused = true;
			return;
		}
		m->held_first = (m->held_first + 1) % recvs;
		m->held_count--;
		if (closing(c)) {      /* closed by the program: no more credits */
			if (c->ac.srq) /* the shared queue's buffer, for the others */
				rex_svc_srq_repost(c, h.slot);
			return;
		}
		if (repost(c, h.slot)) {
			rex_aconn_close(&c->ac, true);
			return;
		}
	}
}

int rex_svc_hold(struct rex_svc_conn *c)
{
	if (!c->msgs.in_message)
		return -EINVAL;
	c->msgs.hold_asked = true;
	return 0;
}
/* [hold] */

void rex_svc_msgs_received(struct rex_svc_conn *c, const struct ibv_wc *wc)
{
	struct rex_svc_msgs *m = &c->msgs;
	uint32_t slot = rex_wr_id_slot(wc->wr_id);
	const uint8_t *buf = slot_bytes(c, slot);
	uint32_t returned, flags;

	/* Each message, a credit-only one too, takes a credit. Without a
	 * shared queue the transport enforces it (no receive: RNR); with
	 * one, a sender past its credits takes other connections' receives. */
	if (m->peer_may_send == 0) {
		rex_aconn_say(&c->ac, "bad message: sent with no credit left");
		goto out_fail;
	}
	m->peer_may_send--;
	/* byte_len is what the device wrote: everything is checked against it. */
	if (wc->byte_len < REX_SVC_MSG_HEADER ||
	    wc->byte_len > REX_SVC_MSG_HEADER + c->svc->cfg.msg_size) {
		rex_aconn_say(&c->ac, "bad message: %u bytes, %u at most", wc->byte_len,
		              REX_SVC_MSG_HEADER + c->svc->cfg.msg_size);
		goto out_fail;
	}
	returned = rex_get_be16(buf);
	flags = buf[2];
	if (buf[3] || (flags & ~(REX_SVC_MSG_CREDIT_ONLY | REX_SVC_MSG_LOW)) ||
	    ((flags & REX_SVC_MSG_CREDIT_ONLY) && wc->byte_len != REX_SVC_MSG_HEADER)) {
		rex_aconn_say(&c->ac, "bad message: flags 0x%02x 0x%02x with %u bytes", flags,
		              buf[3], wc->byte_len);
		goto out_fail;
	}
	if (returned > m->peer_recvs - m->credits) {
		rex_aconn_say(&c->ac,
		              "bad message: %u credits returned, more than the peer holds (%u)",
		              returned, m->peer_recvs - m->credits);
		goto out_fail;
	}
	m->credits += returned;
	m->peer_low |= (flags & REX_SVC_MSG_LOW) != 0;
	if (flags & REX_SVC_MSG_CREDIT_ONLY) {
		if (repost(c, slot)) /* printed; a shared queue's buffer is its pool's now */
			rex_aconn_close(&c->ac, true);
		return;
	}
	/* In line behind any the program holds: messages go to it in order. */
	m->stats.received++;
	m->held[(m->held_first + m->held_count) % c->svc->cfg.msg_recvs] =
	    (struct rex_svc_held){.slot = slot, .len = wc->byte_len - REX_SVC_MSG_HEADER};
	m->held_count++;
	if (!m->paused)
		deliver_held(c);
	return;

out_fail:
	/* A shared queue's buffer goes back to it, for the others. */
	if (c->ac.srq)
		rex_svc_srq_repost(c, slot);
	rex_aconn_close(&c->ac, true);
}

/* Post send slot \p slot with our header: every credit owed goes with it. */
static int post_slot(struct rex_svc_conn *c, uint32_t slot, uint8_t flags)
{
	struct rex_svc_msgs *m = &c->msgs;
	uint8_t *buf = rex_buffers_slot(&m->send, slot);
	struct ibv_sge sge = rex_buffers_sge(&m->send, slot, REX_SVC_MSG_HEADER + m->len[slot]);
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND,
	    /* Signalled: its completion gives the slot back. */
	    .send_flags = IBV_SEND_SIGNALED,
	};
	int ret;

	/* Our last credits: ask the peer to return what it owes at once. */
	if (!(flags & REX_SVC_MSG_CREDIT_ONLY) && m->credits <= 2)
		flags |= REX_SVC_MSG_LOW;
	rex_put_be16(buf, (uint16_t)m->owed);
	buf[2] = flags;
	buf[3] = 0;
	ret = rex_svc_post_kind(c, &wr, REX_SVC_SEND_MSG);
	if (ret)
		return ret;
	m->peer_may_send += m->owed;
	m->number[slot] = c->ac.sq_posted;
	if (flags & REX_SVC_MSG_CREDIT_ONLY)
		m->stats.credit_only++;
	else
		m->stats.sent++;
	m->credits--;
	m->owed = 0;
	m->peer_low = false;
	return 0;
}

/* Slots whose sends completed (RC completes them in order) are free again. */
static void reclaim(struct rex_svc_conn *c)
{
	struct rex_svc_msgs *m = &c->msgs;

	while (m->freed != m->posted &&
	       m->number[m->freed % c->svc->cfg.msg_sends] <= c->ac.sq_done)
		m->freed++;
}

/* [pump] */
void rex_svc_msgs_pump(struct rex_svc_conn *c)
{
	struct rex_svc_msgs *m = &c->msgs;
	uint32_t sends = c->svc->cfg.msg_sends, recvs = c->svc->cfg.msg_recvs;
	uint32_t threshold = recvs / 2 > 2 ? recvs / 2 : 2;
	int ret = 0;

	if (!c->svc->cfg.msg_size)
		return;
	reclaim(c);
	/* Messages in order, while credits last; the last credit only with a
	 * credit returned, so the peer can always answer. */
	while (ret == 0 && m->posted != m->filled && m->credits > 0 &&
	       (m->credits > 1 || m->owed > 0)) {
		ret = post_slot(c, m->posted % sends, 0);
		m->posted += ret == 0;
	}
	m->stats.waits += ret == 0 && m->posted != m->filled;
	/* Nothing to carry them: the credits alone, once half are owed or the
	 * peer is on its last ones. */
	if (ret == 0 && m->posted == m->filled && m->owed > 0 && m->credits > 0 &&
	    (m->owed >= threshold || m->peer_low) && m->filled - m->freed < sends) {
		m->len[m->filled % sends] = 0;
		ret = post_slot(c, m->filled % sends, REX_SVC_MSG_CREDIT_ONLY);
		m->filled += ret == 0;
		m->posted += ret == 0;
	}
	/* A send queue full of the program's sends, or lent to the program:
	 * again at the next completion, or when it is given back. */
	if (ret && ret != -ENOBUFS && ret != -EBUSY) {
		rex_aconn_close(&c->ac, true);
		return;
	}
}
/* [pump] */

void rex_svc_msgs_resume(struct rex_svc_conn *c)
{
	struct rex_svc_msgs *m = &c->msgs;
	uint32_t sends = c->svc->cfg.msg_sends;

	if (!c->svc->cfg.msg_size)
		return;
	reclaim(c);
	if (m->paused && m->filled - m->freed < sends) {
		m->paused = false;
		deliver_held(c);
		if (rex_svc_conn_open(c))
			rex_svc_msgs_pump(c); /* the credits of the receives posted again */
		reclaim(c);
	}
	if (m->blocked && m->filled - m->freed < sends && rex_svc_conn_open(c)) {
		m->blocked = false;
		if (c->svc->ops->send_ready)
			c->svc->ops->send_ready(c);
	}
}

int rex_svc_send(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	struct rex_svc_msgs *m = &c->msgs;
	uint32_t sends = c->svc->cfg.msg_sends, slot;

	if (!c->svc->cfg.msg_size)
		return -EINVAL;
	if (len > c->svc->cfg.msg_size)
		return -EMSGSIZE;
	if (closing(c) || !m->send.mr)
		return -ENOTCONN;
	reclaim(c);
	if (m->filled - m->freed >= sends) {
		m->blocked = true;
		return -ENOBUFS;
	}
	slot = m->filled % sends;
	memcpy(rex_buffers_slot(&m->send, slot) + REX_SVC_MSG_HEADER, msg, len);
	m->len[slot] = len;
	m->filled++;
	m->blocked = false; /* it found a slot itself: no send_ready() owed */
	if (rex_svc_conn_open(c))
		rex_svc_msgs_pump(c);
	return 0;
}

void rex_svc_conn_msg_stats(const struct rex_svc_conn *c, struct rex_svc_msg_stats *out)
{
	*out = c->msgs.stats;
}
