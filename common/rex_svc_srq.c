/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_srq.c: a service's connections on one shared receive queue per
 * device (rex_svc.h says the rules; rex_srq.h is the queue): the queue and
 * its pool made with the device's first connection, each connection's
 * share promised from it before the accept and given back at the end, and
 * the receives posted again as soon as the program has read them.
 */
#include <errno.h>
#include <stdlib.h>

#include "rex_error.h"
#include "rex_svc_priv.h"

/* One per device, its dev->helper. */
struct rex_svc_srq {
	struct rex_pool *pool;
	struct rex_srq *srq;
	uint32_t promised; /* the shares of the connections on it */
	/* Receives the queue may have lost: those of connections whose CQ
	 * failed (an overrun drops completions, and their receives with
	 * them). Never promised again. */
	uint32_t written_off;
};

/* What the queue can promise: its receives, less those written off. */
static uint32_t capacity(const struct rex_svc *s, const struct rex_svc_srq *d)
{
	return s->cfg.srq_recvs - d->written_off;
}

static struct rex_svc_srq *srq_of_dev(const struct rex_aconn_dev *dev)
{
	return dev ? dev->helper : NULL;
}

struct rex_srq *rex_svc_srq_queue(const struct rex_svc_conn *c)
{
	struct rex_svc_srq *d = srq_of_dev(c->dev);

	return d ? d->srq : NULL;
}

int rex_svc_srq_check(const struct rex_svc_config *cfg)
{
	if (cfg->srq_recvs && !cfg->msg_size && !cfg->srq_buf_size) {
		rex_errorf(
		    "rex_svc_create: a shared receive queue needs srq_buf_size without messages");
		return -1;
	}
	if (cfg->srq_recvs && cfg->msg_size && cfg->msg_recvs > cfg->srq_recvs) {
		rex_errorf("rex_svc_create: the shared receive queue (%u) holds less than one "
		           "connection's credits (%u)",
		           cfg->srq_recvs, cfg->msg_recvs);
		return -1;
	}
	return 0;
}

struct ibv_srq *rex_svc_srq_for_queues(const struct rex_svc_conn *c, uint32_t *cq_recvs)
{
	struct rex_srq *srq = rex_svc_srq_queue(c);
	struct rex_srq_stats st;

	if (!srq)
		return NULL;
	if (!c->svc->cfg.msg_size) {
		/* The program's own receives on the queue: no credits of ours
		 * bound how many of its receives the peer takes before the
		 * program reads them (a window counts what the transport
		 * acknowledged, not what was read), so the CQ holds them all.
		 * With the window alone, 06's server overran a session's CQ of
		 * 72 when it fell behind in a loaded VM (06-mr-pool.bench_srq). */
		rex_srq_stats(srq, &st);
		*cq_recvs = st.depth > *cq_recvs ? st.depth : *cq_recvs;
	}
	return rex_srq_ibv(srq);
}

/* A server's connection with messages starts small and grows (its accept
 * says how far); a client's request can say one number only. */
static bool grows(const struct rex_svc_conn *c)
{
	return c->svc->cfg.msg_size && !c->dest.ss_family;
}

uint32_t rex_svc_srq_share(const struct rex_svc_conn *c)
{
	if (!c->svc->cfg.msg_size)
		return c->recv_depth;
	return grows(c) && c->svc->cfg.msg_recvs > REX_SVC_SRQ_FIRST ? REX_SVC_SRQ_FIRST
	                                                             : c->svc->cfg.msg_recvs;
}

/* [share-rule] */
uint32_t rex_svc_srq_next_share(uint32_t share, uint32_t cap, uint32_t free_now, bool peer_low)
{
	/* Kept unpromised for connections to come: two of them. */
	uint32_t reserve = 2 * REX_SVC_SRQ_FIRST, extra;

	/* The queue is short: a share above the least gives one back. */
	if (free_now < reserve && share > REX_SVC_SRQ_FIRST)
		return share - 1;
	/* The peer is on its last credits, and the queue has receives to
	 * spare: the share doubles, up to the cap. */
	if (peer_low && share < cap && free_now > reserve) {
		extra = cap - share;
		if (extra > free_now - reserve)
			extra = free_now - reserve;
		if (extra > share)
			extra = share;
		return share + extra;
	}
	return share;
}
/* [share-rule] */

uint32_t rex_svc_srq_regrant(struct rex_svc_conn *c, bool peer_low)
{
	struct rex_svc_srq *d = srq_of_dev(c->dev);
	uint32_t next, owe;

	if (!d || !grows(c))
		return 1;
	next = rex_svc_srq_next_share(c->srq_share, c->svc->cfg.msg_recvs,
	                              capacity(c->svc, d) - d->promised, peer_low);
	d->promised = d->promised - c->srq_share + next;
	/* This message's credit, less one given back or plus those added. */
	owe = next + 1 - c->srq_share;
	c->srq_share = next;
	return owe;
}

/* The device's queue, over a pool of as many receive buffers: registered
 * once, for the device to write. */
static struct rex_svc_srq *srq_make(const struct rex_svc *s, struct rex_aconn_dev *dev)
{
	const struct rex_svc_config *cfg = &s->cfg;
	struct rex_pool_attr pattr = {
	    .buf_size =
	        cfg->msg_size ? REX_SVC_MSG_HEADER + (size_t)cfg->msg_size : cfg->srq_buf_size,
	    .count = cfg->srq_recvs,
	    .access = IBV_ACCESS_LOCAL_WRITE,
	};
	/* Posted again one by one as messages are read, the queue stays
	 * full; it runs low only while the program holds messages, and the
	 * event then takes what the pool has. */
	struct rex_srq_attr qattr = {
	    .depth = cfg->srq_recvs,
	    .low_water = cfg->srq_recvs / 8,
	    .wr_id_tag = rex_wr_id(REX_WR_RECV, 0),
	};
	struct rex_svc_srq *d = calloc(1, sizeof(*d));

	if (!d) {
		rex_report_errno("calloc", errno);
		return NULL;
	}
	d->pool = rex_pool_create(dev->pd, &pattr);
	if (d->pool)
		d->srq = rex_srq_create(dev->pd, d->pool, &qattr);
	if (!d->srq) {
		rex_pool_destroy(d->pool);
		free(d);
		return NULL;
	}
	return d;
}

int rex_svc_srq_prepare(struct rex_svc *s, struct rex_aconn_dev *dev)
{
	struct rex_svc_srq *d;

	if (!s->cfg.srq_recvs || srq_of_dev(dev))
		return 0;
	d = srq_make(s, dev);
	if (!d)
		return -ENOMEM;
	dev->helper = d;
	return 0;
}

int rex_svc_srq_promise(struct rex_svc_conn *c, uint32_t share)
{
	struct rex_svc *s = c->svc;
	struct rex_svc_srq *d;
	uint32_t left;

	if (!s->cfg.srq_recvs || (c->srq_share && c->srq_share == share))
		return 0;
	if (rex_svc_srq_prepare(s, c->dev))
		return -ENOMEM;
	d = srq_of_dev(c->dev);
	/* [promise] */
	/* Every credit a peer holds is a receive posted: a share is promised
	 * only while the queue has it unpromised. */
	left = capacity(s, d) - d->promised + c->srq_share;
	if (share > left) {
		rex_errorf("%s: %s: refused: the shared receive queue has %u of %u receives "
		           "unpromised, and this connection needs %u",
		           s->cfg.who, c->ac.name, left, capacity(s, d), share);
		s->stats.srq_full++;
		return -ENOBUFS;
	}
	d->promised += share - c->srq_share;
	c->srq_share = share;
	return 0;
	/* [promise] */
}

int rex_svc_srq_admit(struct rex_svc_conn *c)
{
	return c->srq_share ? 0 : rex_svc_srq_promise(c, rex_svc_srq_share(c));
}

void rex_svc_srq_leave(struct rex_svc_conn *c)
{
	struct rex_svc_srq *d = srq_of_dev(c->dev);

	if (d && c->srq_share)
		d->promised -= c->srq_share;
	/* Its CQ failed: completions may have been dropped, and with them
	 * receives the queue will not see again; at most its share, as its
	 * QP stops at the first completion that does not fit. */
	if (d && c->ac.srq && c->ac.cq_dead && c->srq_share) {
		d->written_off += c->srq_share;
		rex_errorf("%s: %s: its CQ failed: %u receives of the shared queue written off, "
		           "%u left to promise",
		           c->svc->cfg.who, c->ac.name, c->srq_share, capacity(c->svc, d));
	}
	c->srq_share = 0;
}

struct rex_pool_buf *rex_svc_srq_take(struct rex_svc_conn *c, const struct ibv_wc *wc)
{
	struct rex_svc_srq *d = srq_of_dev(c->dev);
	struct rex_pool_buf *buf = d ? rex_srq_take(d->srq, wc) : NULL;

	if (!buf)
		rex_aconn_close(&c->ac, true); /* printed */
	return buf;
}

int rex_svc_srq_repost(struct rex_svc_conn *c, uint32_t index)
{
	struct rex_svc_srq *d = srq_of_dev(c->dev);

	return rex_srq_repost(d->srq, rex_pool_buf_at(d->pool, index));
}

const void *rex_svc_srq_bytes(const struct rex_svc_conn *c, uint32_t index)
{
	return rex_pool_buf_at(srq_of_dev(c->dev)->pool, index)->addr;
}

/* The engine's: a receive the program will not see (flushed, failed,
 * late). Back into the queue for the other connections. */
void rex_svc_srq_recv(struct rex_aconn *ac, const struct ibv_wc *wc)
{
	struct rex_svc_conn *c = CONN_OF(ac);
	struct rex_svc_srq *d = srq_of_dev(c->dev);
	struct rex_pool_buf *buf = d ? rex_srq_take(d->srq, wc) : NULL;

	if (buf && rex_srq_repost(d->srq, buf))
		ac->failed = true; /* printed; the buffer is back in the pool */
}

void rex_svc_srq_event(struct rex_aconn_dev *dev, const struct ibv_async_event *event)
{
	struct rex_svc *s = dev->devs->cm_arg;

	if (rex_srq_async_event(event) >= 0 || !dev->helper)
		return;
	/* The queue failed (printed): its connections cannot receive. */
	rex_errorf("%s: closing the connections of %s", s->cfg.who,
	           ibv_get_device_name(dev->verbs->device));
	for (struct rex_aconn *ac = dev->conns; ac; ac = ac->dev_next)
		rex_aconn_close(ac, true);
}

int rex_svc_srq_release(struct rex_aconn_dev *dev)
{
	struct rex_svc_srq *d = srq_of_dev(dev);
	int ret;

	if (!d)
		return 0;
	/* No QP is left on the device: the queue goes, its buffers back to
	 * the pool, then the pool's registration. A failure is printed, and
	 * what failed kept, as the memory may still be the device's. */
	if (d->srq) {
		ret = rex_srq_destroy(d->srq);
		if (ret)
			return ret;
		d->srq = NULL;
	}
	ret = rex_pool_destroy(d->pool);
	if (ret)
		return ret;
	free(d);
	dev->helper = NULL;
	return 0;
}

int rex_svc_srq_stats(const struct rex_svc *s, struct rex_srq_stats *out)
{
	const struct rex_aconn_dev *dev;
	struct rex_srq_stats st;
	int n = 0;

	*out = (struct rex_srq_stats){0};
	for (dev = s->devs.first; dev; dev = dev->next) {
		if (!srq_of_dev(dev))
			continue;
		rex_srq_stats(srq_of_dev(dev)->srq, &st);
		out->depth += st.depth;
		out->posted += st.posted;
		out->min_posted =
		    n++ ? (st.min_posted < out->min_posted ? st.min_posted : out->min_posted)
		        : st.min_posted;
		out->taken += st.taken;
		out->reposted += st.reposted;
		out->refills += st.refills;
		out->limit_events += st.limit_events;
		out->dry += st.dry;
	}
	return n;
}
