/* SPDX-License-Identifier: MIT */
/*
 * conn.c: chapter 02's messages with credits over a connection of the
 * event loop, shared by chapter 05's server and client (see conn.h). The
 * connection's life is common/rex_aconn.c.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>

#include "rex_error.h"

void as_conn_attr(struct rex_aconn_attr *attr)
{
	rex_aconn_attr_default(attr);
	attr->setup_timeout_ms = AS_SETUP_TIMEOUT_MS;
	attr->idle_timeout_ms = AS_IDLE_TIMEOUT_MS;
	attr->drain_timeout_ms = AS_DRAIN_TIMEOUT_MS;
}

/* [create-queues] */
int as_conn_create_queues(struct as_conn *c, struct rex_aconn_dev *dev, uint32_t sends,
                          uint32_t recvs, uint32_t max_payload, rex_loop_cq_fn poll, void *arg)
{
	uint32_t i;
	int ret;

	c->ac.lcq.arg = arg;
	ret = rex_aconn_create_queues(&c->ac, dev, sends, recvs, 0, poll);
	if (ret)
		return ret;
	/* Chapter 02's buffers: the device writes receives, only reads sends. */
	c->max_payload = max_payload;
	ret = rex_buffers_create(&c->recv, dev->pd, recvs, SR_HEADER_SIZE + max_payload,
	                         IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	ret = rex_buffers_create(&c->send, dev->pd, sends, SR_HEADER_SIZE + max_payload, 0);
	if (ret)
		return ret;
	/* Receives before the peer can send: each one a credit in our hello. */
	for (i = 0; i < recvs; i++) {
		ret = as_conn_repost(c, i);
		if (ret)
			return ret;
	}
	c->credits_owed = 0; /* the hello tells them, not a header */
	return 0;
}
/* [create-queues] */

int as_conn_release_buffers(struct as_conn *c)
{
	/* Both, even when the first fails. A failed deregistration keeps
	 * (leaks) its memory: see rex_buffers.h. */
	int a = rex_buffers_destroy(&c->send);
	int b = rex_buffers_destroy(&c->recv);

	return a || b ? -1 : 0;
}

int as_conn_take_message(struct as_conn *c, const struct ibv_wc *wc, uint32_t slot,
                         struct sr_header *hdr)
{
	const uint8_t *buf = rex_buffers_slot(&c->recv, slot);
	char why[SR_WHY_SIZE];
	int ret;

	/* byte_len is what the device really wrote: the header must agree. */
	ret = sr_header_decode(buf, wc->byte_len, c->max_payload, hdr, why, sizeof(why));
	if (ret == 0 && hdr->credits > c->credit_limit - c->credits) {
		snprintf(why, sizeof(why), "%u credits returned, more than it holds",
		         (unsigned)hdr->credits);
		ret = -EPROTO;
	}
	if (ret) {
		fprintf(stderr, "%s: bad message on %s: %s\n", c->ac.who, c->ac.name, why);
		return -EPROTO;
	}
	c->credits += hdr->credits;
	return 0;
}

/* [send] */
uint8_t *as_conn_send_buffer(struct as_conn *c, uint32_t *slot)
{
	/* Every send is signalled, and RC completes them in order: the slots
	 * are a ring, and send n is free again once sends up to n are done. */
	if (c->ac.sq_posted - c->ac.sq_done >= c->send.count)
		return NULL;
	*slot = (uint32_t)(c->ac.sq_posted % c->send.count);
	return rex_buffers_slot(&c->send, *slot);
}

int as_conn_send(struct as_conn *c, uint32_t slot, uint8_t type, uint32_t length)
{
	struct sr_header hdr = {.type = type, .credits = c->credits_owed, .length = length};
	struct ibv_sge sge = rex_buffers_sge(&c->send, slot, SR_HEADER_SIZE + length);
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND,
	    /* Signalled: its completion tells us the buffer is ours again. */
	    .send_flags = IBV_SEND_SIGNALED,
	};
	int ret;

	sr_header_encode(&hdr, rex_buffers_slot(&c->send, slot));
	ret = rex_aconn_post_send(&c->ac, &wr); /* numbered and counted */
	if (ret)
		return ret;
	c->credits--;
	c->credits_owed = 0;
	return 0;
}
/* [send] */

int as_conn_repost(struct as_conn *c, uint32_t slot)
{
	struct ibv_sge sge = rex_buffers_sge(&c->recv, slot, (uint32_t)c->recv.slot_size);
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};
	int ret = rex_aconn_post_recv(&c->ac, &wr); /* counted */

	if (ret)
		return ret;
	c->credits_owed++;
	return 0;
}
