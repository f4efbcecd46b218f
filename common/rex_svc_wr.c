/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_wr.c: a connection's completions delivered to the program, the
 * program's own work requests numbered beside the helper's, busy-polling,
 * and the accessors of a connection (see rex_svc.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "rex_error.h"
#include "rex_svc_priv.h"

/* --- completions ------------------------------------------------------------- */

bool rex_svc_conn_open(const struct rex_svc_conn *c)
{
	return c->ac.qp && (c->ac.state == REX_STATE_ESTABLISHED ||
	                    (c->ac.state == REX_STATE_CONNECTING && !c->ac.active_side));
}

static void deliver(struct rex_svc_conn *c, const struct ibv_wc *wc)
{
	const struct rex_svc_ops *ops = c->svc->ops;
	uint64_t n;
	uint32_t i;

	if (rex_wr_id_kind(wc->wr_id) == REX_WR_RECV) {
		if (c->ac.srq && !rex_svc_srq_take(c, wc))
			return; /* no receive of the queue: closed */
		if (c->svc->cfg.msg_size) {
			rex_svc_msgs_received(c, wc);
			return;
		}
		i = rex_wr_id_slot(wc->wr_id);
		if (c->ac.srq) {
			/* The queue's buffer: the bytes' address, posted again after. */
			if (ops->recv)
				ops->recv(c, (uintptr_t)rex_svc_srq_bytes(c, i), wc);
			if (rex_svc_srq_repost(c, i))
				rex_aconn_close(&c->ac, true);
			return;
		}
		if (ops->recv)
			ops->recv(c, c->recv_ids[i], wc);
		return;
	}
	n = rex_aconn_send_number(&c->ac, wc->wr_id);
	i = (uint32_t)(n % c->send_depth);
	if (c->send_kind[i] == REX_SVC_SEND_PROGRAM && ops->done)
		ops->done(c, c->send_ids[i], wc);
}

/* What the books left to act on: to the program, then the messages. */
static void act_on(struct rex_svc_conn *c, struct ibv_wc *wc, int good)
{
	int i;

	/* A callback may close it: what follows is flushed news then. */
	for (i = 0; i < good && (rex_svc_conn_open(c) || c->ac.state == REX_STATE_CONNECTING); i++)
		deliver(c, &wc[i]);
	/* Closed by a callback: a shared queue's receives go back to it. */
	for (; i < good; i++)
		if (c->ac.srq && rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV)
			rex_svc_srq_recv(&c->ac, &wc[i]);
}

/* The messages after completions: credits returned, slots freed. Only
 * where the service has messages: a program that busy-polls its own work
 * requests (06's pings) pays for every call made here, and the four calls
 * that return at once cost 50 to 100 ns a poll on the lab's emulated CPU. */
static void messages_on(struct rex_svc_conn *c)
{
	if (!c->svc->cfg.msg_size || c->lent)
		return;
	if (rex_svc_conn_open(c))
		rex_svc_msgs_pump(c);
	if (rex_svc_conn_open(c))
		rex_svc_msgs_resume(c);
}

void rex_svc_conn_poll(struct rex_svc_conn *c)
{
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	int good, taken, budget;

	/* Lent: the program polls it, until the connection closes. */
	if (!c->ac.cq || (c->lent && rex_svc_conn_open(c)))
		return;
	/* A CQ's worth a call, at most: what the callbacks post and complete
	 * meanwhile (a stream refilling its window) waits for the next call,
	 * so one busy connection cannot hold the loop (signals, deadlines, the
	 * other connections) for ever. The CQ holds no more than that, so all
	 * that was there when the call began is taken, and nothing is left
	 * behind the loop's arming without an event to come for it. */
	budget = c->ac.cq->cqe;
	do {
		good = rex_aconn_poll(&c->ac, wc, REX_ACONN_WC_BATCH, &taken);
		budget -= taken;
		act_on(c, wc, good);
	} while (taken == REX_ACONN_WC_BATCH && budget > 0);
	messages_on(c);
}

/* [lend] */
int rex_svc_conn_lend(struct rex_svc_conn *c, struct rex_svc_lent *out)
{
	uint64_t outstanding = c->ac.sq_posted - c->ac.sq_done;

	if (!rex_svc_conn_open(c))
		return -ENOTCONN;
	if (c->lent || !c->ac.lcq.busy_polled)
		return -EINVAL;
	/* One place kept for the drain's marker, should the connection close. */
	if (outstanding + 1 >= c->send_depth)
		return -ENOBUFS;
	out->qp = c->ac.qp;
	out->cq = c->ac.cq;
	out->room = (uint32_t)(c->send_depth - outstanding - 1);
	c->lent = true;
	return 0;
}

void rex_svc_conn_give(struct rex_svc_conn *c, struct ibv_wc *wc, int n)
{
	act_on(c, wc, rex_aconn_take(&c->ac, wc, n));
}

/* One completion from a lent CQ: 1, the program's send; 2, with \p recvs, a
 * receive that succeeded, its books kept and its wr_id the program's; 0,
 * nothing, or the helper's (given: its callbacks ran). Inline: on the lab's
 * emulated CPU a call and its return cost tens of nanoseconds a poll. */
static inline int lent_poll(struct rex_svc_conn *c, struct ibv_wc *wc, bool recvs)
{
	uint32_t kind;
	int n;

	if (!c->lent)
		return -EINVAL;
	if (!rex_svc_conn_open(c))
		return -ENOTCONN; /* the helper's again: rex_svc_conn_poll() drains it */
	n = ibv_poll_cq(c->ac.cq, 1, wc);
	if (n <= 0)
		return n < 0 ? -EIO : 0;
	kind = rex_wr_id_kind(wc->wr_id);
	if (kind == REX_WR_LENT)
		return 1;
	/* A shared queue's or a message's receive is the helper's to post again. */
	if (!recvs || kind != REX_WR_RECV || c->ac.srq || c->svc->cfg.msg_size) {
		rex_svc_conn_give(c, wc, 1);
		return 0;
	}
	/* A failed receive closes the connection: rex_aconn_take() does it. */
	if (wc->status != IBV_WC_SUCCESS) {
		rex_aconn_take(&c->ac, wc, 1);
		return 0;
	}
	/* One that succeeded on an open connection: its books as
	 * rex_aconn_take() keeps them, without its loop (a ping's path). */
	c->ac.recvs_posted--;
	c->ac.cq_taken++;
	c->ac.heard = true;
	wc->wr_id = c->recv_ids[rex_wr_id_slot(wc->wr_id)];
	return 2;
}

int rex_svc_conn_lent_poll(struct rex_svc_conn *c, struct ibv_wc *wc)
{
	return lent_poll(c, wc, false);
}

int rex_svc_conn_lent_poll_recvs(struct rex_svc_conn *c, struct ibv_wc *wc)
{
	return lent_poll(c, wc, true);
}

void rex_svc_conn_unlend(struct rex_svc_conn *c)
{
	if (!c->lent)
		return;
	c->lent = false;
	rex_svc_conn_poll(c); /* what came meanwhile, and the messages that waited */
}
/* [lend] */

void rex_svc_conn_set_busy(struct rex_svc_conn *c, bool busy)
{
	c->ac.lcq.busy_polled = busy;
	/* A closing connection needs its events too: its flushes end the drain. */
	if (!busy && c->ac.cq && c->ac.state != REX_STATE_CLOSED) {
		rex_loop_cq_arm(&c->ac.lcq); /* on failure, the next poll closes it */
		rex_svc_conn_poll(c);
	}
}

void rex_svc_on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	(void)loop;
	rex_svc_conn_poll(lcq->arg);
}

/* --- the program's work requests ---------------------------------------------- */

int rex_svc_post_kind(struct rex_svc_conn *c, struct ibv_send_wr *first, uint8_t kind)
{
	uint32_t depth = c->send_depth, count = 0, i;
	uint64_t n = c->ac.sq_posted;
	struct ibv_send_wr *wr;
	int ret;

	if (!rex_svc_conn_open(c))
		return -ENOTCONN;
	if (c->lent)
		return -EBUSY;
	for (wr = first; wr; wr = wr->next)
		count++;
	if (c->ac.sq_posted - c->ac.sq_done + count > depth)
		return -ENOBUFS;
	/* The books beside the send numbers, which the engine writes into the
	 * wr_ids; then the program's wr_ids back into its chain. */
	for (wr = first, i = 0; wr; wr = wr->next, i++) {
		c->send_ids[(n + 1 + i) % depth] = wr->wr_id;
		c->send_kind[(n + 1 + i) % depth] = kind;
	}
	ret = rex_aconn_post_send(&c->ac, first);
	for (wr = first, i = 0; wr; wr = wr->next, i++)
		wr->wr_id = c->send_ids[(n + 1 + i) % depth];
	return ret;
}

int rex_svc_post_send(struct rex_svc_conn *c, struct ibv_send_wr *first)
{
	return rex_svc_post_kind(c, first, REX_SVC_SEND_PROGRAM);
}

int rex_svc_post_recv(struct rex_svc_conn *c, struct ibv_recv_wr *first)
{
	uint32_t depth = c->recv_depth, count = 0, next = c->recv_next;
	struct ibv_recv_wr *wr;
	int ret;

	if (c->svc->cfg.msg_size || c->svc->cfg.srq_recvs)
		return -EINVAL;
	if (!c->ac.qp || c->ac.state == REX_STATE_DRAINING || c->ac.state == REX_STATE_CLOSED)
		return -ENOTCONN;
	if (!first->next) { /* one receive, a ping's: no chain to walk */
		uint64_t id = first->wr_id;

		if (c->ac.recvs_posted >= depth)
			return -ENOBUFS;
		c->recv_ids[next % depth] = id;
		first->wr_id = next % depth;
		c->recv_next++;
		ret = rex_aconn_post_recv(&c->ac, first);
		first->wr_id = id;
		return ret;
	}
	for (wr = first; wr; wr = wr->next)
		count++;
	if (c->ac.recvs_posted + count > depth)
		return -ENOBUFS;
	/* Receive slots in turn: RC completes a queue's receives in order, so
	 * slot k is free again when the one posted depth receives before it is. */
	for (wr = first; wr; wr = wr->next) {
		c->recv_ids[c->recv_next % depth] = wr->wr_id;
		wr->wr_id = c->recv_next++ % depth;
	}
	ret = rex_aconn_post_recv(&c->ac, first);
	for (wr = first; wr; wr = wr->next)
		wr->wr_id = c->recv_ids[next++ % depth];
	return ret;
}

/* --- accessors and the end ----------------------------------------------------- */

void *rex_svc_conn_user(const struct rex_svc_conn *c)
{
	return c->user;
}

void rex_svc_conn_set_user(struct rex_svc_conn *c, void *user)
{
	c->user = user;
}

const char *rex_svc_conn_name(const struct rex_svc_conn *c)
{
	return c->ac.name;
}

struct rex_svc *rex_svc_conn_svc(const struct rex_svc_conn *c)
{
	return c->svc;
}

struct ibv_pd *rex_svc_conn_pd(const struct rex_svc_conn *c)
{
	return c->dev ? c->dev->pd : NULL;
}

const struct ibv_device_attr *rex_svc_conn_device_attr(const struct rex_svc_conn *c)
{
	return c->dev ? &c->dev->attr : NULL;
}

void *rex_svc_conn_dev_user(const struct rex_svc_conn *c)
{
	return c->dev ? c->dev->user : NULL;
}

void rex_svc_conn_set_dev_user(struct rex_svc_conn *c, void *dev_user)
{
	if (c->dev)
		c->dev->user = dev_user;
}

uint32_t rex_svc_conn_max_sge(const struct rex_svc_conn *c)
{
	return c->max_sge;
}

void rex_svc_conn_counts(const struct rex_svc_conn *c, struct rex_svc_conn_counts *out)
{
	out->sends = c->ac.post_wrs;
	out->post_calls = c->ac.post_calls;
	out->completions = c->ac.cq_taken;
}

void rex_svc_conn_peer_done(struct rex_svc_conn *c)
{
	c->peer_done = true;
	c->ac.protocol_done = true; /* an idle deadline now closes it as done */
}

void rex_svc_close(struct rex_svc_conn *c, bool failed)
{
	rex_aconn_close(&c->ac, failed);
}
