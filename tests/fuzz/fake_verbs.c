/* SPDX-License-Identifier: MIT */
/*
 * fake_verbs.c: the fake libibverbs of fuzz_aconn (see fake_verbs.h), an
 * InfiniBand or RoCE device as the helper sees it: its PDs, completion
 * channels, CQs and asynchronous events, the QPs' work requests and their
 * completions, the device lost, and an input's beginning and end. Its
 * librdmacm half (CM ids and events, rdma_create_qp, the peer) is
 * fake_cm.c; the state and the checks both use, fake_core.c.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fake_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rex_buffers.h" /* the wr_id layout: the sends' numbers are checked */

/* --- completions ---------------------------------------------------------- */

static void cq_event(struct fcq *c)
{
	struct fchan *ch = c->chan;

	if (!c->armed || c->dead || c->dev->dead || !ch)
		return;
	c->armed = false; /* one event per arming */
	if (!c->queued) {
		c->queued = true;
		ch->q[ch->n++] = c;
		fake_level(ch->ch.fd, true);
	}
}

/* The asynchronous events whose element is a QP (the rest: a CQ, a port, none). */
static bool qp_event(enum ibv_event_type type)
{
	return type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
	       type == IBV_EVENT_QP_ACCESS_ERR || type == IBV_EVENT_COMM_EST;
}

static void async_event(struct fdev *d, enum ibv_event_type type, struct fqp *q, struct fcq *c)
{
	struct ibv_async_event *e;

	if (d->nasync == NASYNC)
		return; /* the kernel's queue has room; ours is the input's length */
	e = &d->async[d->nasync++];
	memset(e, 0, sizeof(*e));
	e->event_type = type;
	if (q)
		e->element.qp = &q->qp;
	else if (c)
		e->element.cq = &c->cq;
	else
		e->element.port_num = 1;
	fake_level(d->ctx.async_fd, true);
}

static void add_cqe_of(struct fqp *q, bool recv, unsigned idx, const uint64_t *srq_id,
                       enum ibv_wc_status st)
{
	struct fcq *c = q->cq;
	struct fcqe *e;

	if (c->dead)
		return;
	/* Every work request the queues hold may complete: a CQ sized to
	 * their depths never overruns (a real one would die: CQ_ERR). */
	if (c->n == NCQES || c->n >= (unsigned)c->cq.cqe)
		fake_die("CQ of %d entries overrun: it is smaller than its QP's queues", c->cq.cqe);
	e = &c->q[(c->head + c->n++) % NCQES];
	memset(e, 0, sizeof(*e));
	e->qp = q;
	e->recv = recv;
	e->srq = srq_id != NULL;
	e->idx = idx;
	e->wc.wr_id = srq_id ? *srq_id : recv ? q->rq[idx].wr_id : q->sq[idx].wr_id;
	e->wc.status = st;
	e->wc.opcode = recv ? IBV_WC_RECV : IBV_WC_SEND;
	e->wc.qp_num = q->qp.qp_num;
	e->wc.byte_len = recv && st == IBV_WC_SUCCESS ? 64 : 0;
	e->wc.vendor_err = st == IBV_WC_SUCCESS || st == IBV_WC_WR_FLUSH_ERR ? 0 : 0x81;
	if (srq_id)
		q->srq_unpolled++;
	cq_event(c);
}

static void add_cqe(struct fqp *q, bool recv, unsigned idx, enum ibv_wc_status st)
{
	add_cqe_of(q, recv, idx, NULL, st);
}

void fake_flush_begun(struct fqp *q)
{
	if (q->inprog && !q->cq->dead) {
		q->inprog = false;
		add_cqe_of(q, true, 0, &q->inprog_id, IBV_WC_WR_FLUSH_ERR);
	}
}

void fake_qp_error(struct fqp *q)
{
	q->st = IBV_QPS_ERR;
	if (!(F.options & FAKE_CQ_KEEPS))
		fake_flush_begun(q);
}

/* A QP on a shared receive queue: the peer's next message takes the
 * queue's head (or completes the one begun); a stopped QP hands back only
 * the one it had begun, the rest stay for the other QPs. */
static void srq_progress(struct fqp *q, unsigned outcome)
{
	struct fsrq *s = q->srq;
	uint64_t id;

	if (q->st == IBV_QPS_ERR) {
		fake_flush_begun(q);
		return;
	}
	if (q->st != IBV_QPS_RTS || q->id->peer_gone)
		return;  /* nothing can arrive yet, or any more */
	if (q->inprog) { /* its last packet */
		q->inprog = false;
		add_cqe_of(q, true, 0, &q->inprog_id, IBV_WC_SUCCESS);
		return;
	}
	/* Within its credits: no more than its CQ has room for; and an
	 * empty queue makes the peer wait (RNR), not fail. */
	if (s->n == 0 || q->srq_unpolled + 1 > q->srq_room)
		return;
	id = s->q[s->head];
	s->head = (s->head + 1) % NWRS;
	s->n--;
	if (outcome % 4 == 3) { /* its first packet of several */
		q->inprog = true;
		q->inprog_id = id;
	} else if (outcome % 4 == 2) {
		add_cqe_of(q, true, 0, &id, IBV_WC_LOC_LEN_ERR);
		fake_qp_error(q);
	} else {
		add_cqe_of(q, true, 0, &id, IBV_WC_SUCCESS);
	}
}
void fake_progress(struct ibv_qp *ibqp, bool recv, unsigned outcome)
{
	static const enum ibv_wc_status errs[] = {IBV_WC_RETRY_EXC_ERR, IBV_WC_REM_ACCESS_ERR,
	                                          IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_LOC_PROT_ERR};
	struct fqp *q = (struct fqp *)ibqp;
	enum ibv_wc_status st;
	struct fwr *w;

	LIVE(F.qps, NCQS, q, "QP");
	if (q->dev->dead || q->cq->dead)
		return; /* nothing moves on a dead device */
	if (recv && q->srq) {
		srq_progress(q, outcome);
		return;
	}
	if (recv) {
		if (q->rq_exec == q->rq_n)
			return;
		if (q->st == IBV_QPS_ERR)
			st = IBV_WC_WR_FLUSH_ERR;
		else if (outcome % 4 == 2)
			st = IBV_WC_LOC_LEN_ERR;
		else if (q->st == IBV_QPS_RTS && !q->id->peer_gone)
			st = IBV_WC_SUCCESS; /* the peer sent a message */
		else
			return; /* nothing can arrive yet, or any more */
		add_cqe(q, true, q->rq_exec++, st);
	} else {
		if (q->sq_exec == q->sq_n)
			return;
		if (q->st == IBV_QPS_ERR)
			st = IBV_WC_WR_FLUSH_ERR;
		else if (q->st != IBV_QPS_RTS)
			return; /* not connected yet: it waits */
		else if (q->id->peer_gone)
			st = IBV_WC_RETRY_EXC_ERR; /* nobody acknowledges it */
		else if (outcome % 4 == 2)
			st = errs[(outcome >> 2) % 4];
		else
			st = IBV_WC_SUCCESS;
		w = &q->sq[q->sq_exec];
		/* An unsignalled send completes silently; flushed, it may too. */
		if ((st == IBV_WC_SUCCESS && !w->signaled) ||
		    (st == IBV_WC_WR_FLUSH_ERR && !w->signaled && (F.options & FAKE_FLUSH_QUIET)))
			q->sq_exec++;
		else
			add_cqe(q, false, q->sq_exec++, st);
	}
	/* A failed work request moves the QP to the error state. */
	if (st != IBV_WC_SUCCESS)
		fake_qp_error(q);
}

static int f_poll_cq(struct ibv_cq *ibcq, int max, struct ibv_wc *wc)
{
	struct fcq *c = (struct fcq *)ibcq;
	struct fcqe *e;
	int i;

	LIVE(F.cqs, NCQS, c, "CQ");
	F.successes = 0;
	if (fake_failing(FAKE_POLL_CQ))
		return -1;
	if (c->dead)
		return 0;
	for (i = 0; i < max && c->n; i++) {
		e = &c->q[c->head];
		c->head = (c->head + 1) % NCQES;
		c->n--;
		wc[i] = e->wc;
		if (!e->qp)
			; /* its QP is gone (FAKE_CQ_KEEPS) */
		else if (e->srq)
			e->qp->srq_unpolled--;
		else if (e->recv)
			e->qp->rq_polled++;
		else if (e->idx + 1 > e->qp->sq_done)
			e->qp->sq_done = e->idx + 1;
		if (e->wc.status == IBV_WC_SUCCESS && rex_wr_id_kind(e->wc.wr_id) != REX_WR_MARKER)
			F.successes++;
	}
	return i;
}

static int f_req_notify_cq(struct ibv_cq *ibcq, int solicited)
{
	struct fcq *c = (struct fcq *)ibcq;

	(void)solicited;
	LIVE(F.cqs, NCQS, c, "CQ");
	if (fake_failing(FAKE_NOTIFY_CQ))
		return EIO;
	c->armed = true;
	if ((F.options & FAKE_EAGER_ARM) && c->n)
		cq_event(c);
	return 0;
}

static int f_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct fqp *q = (struct fqp *)ibqp;
	uint32_t kind;
	bool full;
	int err;

	LIVE(F.qps, NCQS, q, "QP");
	for (; wr; wr = wr->next) {
		kind = rex_wr_id_kind(wr->wr_id);
		err = fake_failing(FAKE_POST_SEND) ? EINVAL : 0;
		full = q->sq_n - q->sq_done >= q->cap_s; /* the send queue is full */
		if (!err && (full || q->sq_n == NWRS))
			err = ENOMEM;
		if (err) {
			/* Refused for the fuzzer's failure or the fake's bound, or
			 * for a full queue only: the helper's to avoid. */
			if (kind == REX_WR_MARKER && err == ENOMEM && full)
				q->marker_full = true;
			else if (kind == REX_WR_MARKER)
				q->marker_refused = true;
			*bad = wr;
			return err;
		}
		if ((kind != REX_WR_SEND && kind != REX_WR_MARKER) ||
		    rex_wr_id_slot(wr->wr_id) != (uint32_t)(q->sq_n + 1))
			fake_die("send posted with wr_id %#llx, the QP's send number %u is next",
			         (unsigned long long)wr->wr_id, q->sq_n + 1);
		q->sq[q->sq_n].wr_id = wr->wr_id;
		q->sq[q->sq_n++].signaled = (wr->send_flags & IBV_SEND_SIGNALED) != 0;
	}
	return 0;
}

static int f_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fqp *q = (struct fqp *)ibqp;

	LIVE(F.qps, NCQS, q, "QP");
	for (; wr; wr = wr->next) {
		if (fake_failing(FAKE_POST_RECV) || q->rq_n - q->rq_polled >= q->cap_r ||
		    q->rq_n == NWRS) {
			*bad = wr;
			return ENOMEM;
		}
		if (rex_wr_id_kind(wr->wr_id) != REX_WR_RECV)
			fake_die("receive posted with wr_id %#llx", (unsigned long long)wr->wr_id);
		q->rq[q->rq_n++].wr_id = wr->wr_id;
	}
	return 0;
}

/* --- the device ----------------------------------------------------------- */

/* The devices still there: a device gone is not listed. */
void **fake_listed(int *num, bool contexts)
{
	void **list = calloc(NDEVS + 1, sizeof(*list));
	unsigned i, n = 0;

	for (i = 0; list && i < NDEVS; i++)
		if (!F.devs[i]->dead)
			list[n++] = contexts ? (void *)&F.devs[i]->ctx : (void *)&F.devs[i]->device;
	if (num)
		*num = (int)n;
	F.lists += list != NULL;
	return list;
}

struct ibv_device **ibv_get_device_list(int *num)
{
	return (struct ibv_device **)fake_listed(num, false);
}

void ibv_free_device_list(struct ibv_device **list)
{
	F.lists--;
	free(list);
}

const char *ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

int ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *attr)
{
	(void)ctx;
	if (fake_failing(FAKE_QUERY_DEVICE))
		return EIO;
	memset(attr, 0, sizeof(*attr));
	attr->max_qp_wr = MAX_WR;
	attr->max_cqe = MAX_CQE;
	attr->max_sge = 4;
	attr->max_qp_rd_atom = 16;
	attr->max_qp_init_rd_atom = 16;
	return 0;
}

struct ibv_pd *ibv_alloc_pd(struct ibv_context *ctx)
{
	struct fpd *p;

	if (fake_failing(FAKE_ALLOC_PD) || !(p = calloc(1, sizeof(*p)))) {
		errno = ENOMEM;
		return NULL;
	}
	p->pd.context = ctx;
	F.pds++;
	return &p->pd;
}

int ibv_dealloc_pd(struct ibv_pd *pd)
{
	struct fpd *p = (struct fpd *)pd;

	if (p->users)
		fake_die("PD deallocated while %u QPs use it", p->users);
	F.pds--;
	free(p);
	return 0;
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *ctx)
{
	int i = fake_slot_of((void **)F.chans, NCHANS, NULL);
	struct fchan *ch;

	if (fake_failing(FAKE_COMP_CHANNEL) || i < 0 || !(ch = calloc(1, sizeof(*ch)))) {
		errno = EMFILE;
		return NULL;
	}
	ch->ch.context = ctx;
	ch->ch.fd = fake_new_fd();
	F.chans[i] = ch;
	return &ch->ch;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct fchan *ch = (struct fchan *)channel;

	LIVE(F.chans, NCHANS, ch, "completion channel");
	if (ch->cqs)
		fake_die("completion channel destroyed while %u CQs use it", ch->cqs);
	close(ch->ch.fd);
	F.chans[fake_slot_of((void **)F.chans, NCHANS, ch)] = NULL;
	free(ch);
	return 0;
}

struct ibv_cq *ibv_create_cq(struct ibv_context *ctx, int cqe, void *cq_context,
                             struct ibv_comp_channel *channel, int vector)
{
	int i = fake_slot_of((void **)F.cqs, NCQS, NULL);
	struct fcq *c;

	(void)vector;
	if (channel)
		LIVE(F.chans, NCHANS, channel, "completion channel");
	if (fake_failing(FAKE_CREATE_CQ) || cqe > MAX_CQE || i < 0 ||
	    !(c = calloc(1, sizeof(*c)))) {
		errno = ENOMEM;
		return NULL;
	}
	c->cq.context = ctx;
	c->cq.channel = channel;
	c->cq.cq_context = cq_context;
	c->cq.cqe = cqe;
	c->chan = (struct fchan *)channel;
	c->dev = (struct fdev *)ctx;
	if (c->chan)
		c->chan->cqs++;
	F.cqs[i] = c;
	return &c->cq;
}

/* The kernel drops a destroyed object's asynchronous events not yet read. */
void fake_drop_async(struct fdev *d, const void *qp, const void *cq)
{
	unsigned i, k = 0;

	for (i = 0; i < d->nasync; i++)
		if (!((qp && d->async[i].element.qp == qp) || (cq && d->async[i].element.cq == cq)))
			d->async[k++] = d->async[i];
	d->nasync = k;
	fake_level(d->ctx.async_fd, d->nasync > 0 || d->async_broken);
}

int ibv_destroy_cq(struct ibv_cq *cq)
{
	struct fcq *c = (struct fcq *)cq;
	struct fchan *ch = c->chan;
	unsigned i, k = 0;

	LIVE(F.cqs, NCQS, c, "CQ");
	if (c->qps)
		fake_die("CQ destroyed while %u QPs use it", c->qps);
	if (c->acked != c->events || c->async_unacked)
		fake_die(
		    "ibv_destroy_cq would wait for ever: %u of %u events acknowledged, %u async",
		    c->acked, c->events, c->async_unacked);
	if (ch) {
		for (i = 0; i < ch->n; i++)
			if (ch->q[i] != c)
				ch->q[k++] = ch->q[i];
		ch->n = k;
		fake_level(ch->ch.fd, ch->n > 0 || ch->broken);
		ch->cqs--;
	}
	fake_drop_async(c->dev, NULL, c);
	F.cqs[fake_slot_of((void **)F.cqs, NCQS, c)] = NULL;
	free(c);
	return 0;
}

int ibv_get_cq_event(struct ibv_comp_channel *channel, struct ibv_cq **cq, void **cq_context)
{
	struct fchan *ch = (struct fchan *)channel;
	struct fcq *c;

	LIVE(F.chans, NCHANS, ch, "completion channel");
	if (fake_failing(FAKE_GET_CQ_EVENT) || ch->broken) {
		errno = EIO;
		return -1;
	}
	if (!ch->n) {
		errno = EAGAIN;
		return -1;
	}
	c = ch->q[0];
	memmove(ch->q, ch->q + 1, --ch->n * sizeof(ch->q[0]));
	fake_level(ch->ch.fd, ch->n > 0);
	c->queued = false;
	c->events++;
	*cq = &c->cq;
	*cq_context = c->cq.cq_context;
	return 0;
}

void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	struct fcq *c = (struct fcq *)cq;

	LIVE(F.cqs, NCQS, c, "CQ");
	c->acked += nevents;
	if (c->acked > c->events)
		fake_die("%u CQ events acknowledged, %u taken", c->acked, c->events);
}

int ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	struct fdev *d = (struct fdev *)ctx;

	if (fake_failing(FAKE_GET_ASYNC_EVENT) || d->async_broken) {
		errno = EIO;
		return -1;
	}
	if (!d->nasync) {
		errno = EAGAIN;
		return -1;
	}
	*event = d->async[0];
	memmove(d->async, d->async + 1, --d->nasync * sizeof(d->async[0]));
	fake_level(ctx->async_fd, d->nasync > 0);
	if (event->event_type == IBV_EVENT_CQ_ERR)
		((struct fcq *)event->element.cq)->async_unacked++;
	else if (qp_event(event->event_type))
		((struct fqp *)event->element.qp)->async_unacked++;
	else if (event->event_type == IBV_EVENT_SRQ_LIMIT_REACHED)
		((struct fsrq *)event->element.srq)->async_unacked++;
	return 0;
}

void ibv_ack_async_event(struct ibv_async_event *event)
{
	if (event->event_type == IBV_EVENT_CQ_ERR) {
		LIVE(F.cqs, NCQS, event->element.cq, "CQ (async event acknowledged)");
		((struct fcq *)event->element.cq)->async_unacked--;
	} else if (qp_event(event->event_type)) {
		LIVE(F.qps, NCQS, event->element.qp, "QP (async event acknowledged)");
		((struct fqp *)event->element.qp)->async_unacked--;
	} else if (event->event_type == IBV_EVENT_SRQ_LIMIT_REACHED) {
		LIVE(F.srqs, NSRQS, event->element.srq, "SRQ (async event acknowledged)");
		((struct fsrq *)event->element.srq)->async_unacked--;
	}
}

void fake_async(struct ibv_qp *ibqp, unsigned what)
{
	struct fqp *q = (struct fqp *)ibqp;

	LIVE(F.qps, NCQS, q, "QP");
	if (q->dev->dead)
		return;
	switch (what % 6) {
	case 0:
		fake_qp_error(q);
		async_event(q->dev, IBV_EVENT_QP_FATAL, q, NULL);
		break;
	case 5:
		if (q->srq && q->dev->nasync < NASYNC) {
			struct ibv_async_event *e = &q->dev->async[q->dev->nasync++];

			memset(e, 0, sizeof(*e));
			e->event_type = IBV_EVENT_SRQ_LIMIT_REACHED;
			e->element.srq = &q->srq->srq;
			fake_level(q->dev->ctx.async_fd, true);
		}
		break;
	case 1:
		/* A device reports every CQ it kills: with the fake's queue of
		 * events full, this one does not happen (fuzz_aconn counted a
		 * dead CQ's receives as lost without the helper being told). */
		if (q->dev->nasync == NASYNC)
			break;
		q->cq->dead = true;
		async_event(q->dev, IBV_EVENT_CQ_ERR, NULL, q->cq);
		break;
	case 2:
		async_event(q->dev, IBV_EVENT_PORT_ERR, NULL, NULL);
		break;
	case 3:
		async_event(q->dev, IBV_EVENT_COMM_EST, q, NULL);
		break;
	default:
		async_event(q->dev, IBV_EVENT_LID_CHANGE, NULL, NULL);
		break;
	}
}

void fake_device_lost(unsigned how)
{
	struct fdev *d = fake_current_dev();
	unsigned i;

	if (!d)
		return;
	how %= 4;
	if (how == 0)
		async_event(d, IBV_EVENT_DEVICE_FATAL, NULL, NULL);
	d->dead = true; /* unlisted; nothing on it moves any more */
	for (i = 0; i < NCQS; i++)
		if (F.qps[i] && F.qps[i]->dev == d)
			F.qps[i]->st = IBV_QPS_ERR; /* nothing flushes on a lost device */
	if (how == 1) {
		d->async_broken = true;
		fake_level(d->ctx.async_fd, true);
	}
	for (i = 0; how == 2 && i < NCHANS; i++)
		if (F.chans[i] && F.chans[i]->ch.context == &d->ctx) {
			F.chans[i]->broken = true;
			fake_level(F.chans[i]->ch.fd, true);
		}
}

int ibv_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct fqp *q = (struct fqp *)ibqp;

	LIVE(F.qps, NCQS, q, "QP");
	if (fake_failing(FAKE_MODIFY_QP))
		return EINVAL;
	if ((mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_ERR)
		fake_qp_error(q);
	return 0;
}

const char *ibv_event_type_str(enum ibv_event_type type)
{
	return type == IBV_EVENT_DEVICE_FATAL ? "local catastrophic error" : "an async event";
}

const char *ibv_wc_status_str(enum ibv_wc_status status)
{
	return status == IBV_WC_SUCCESS ? "success" : "a work completion error";
}

/* --- shared receive queues --------------------------------------------------- */

static int f_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct fsrq *s = (struct fsrq *)ibsrq;

	LIVE(F.srqs, NSRQS, s, "SRQ");
	for (; wr; wr = wr->next) {
		if (fake_failing(FAKE_POST_RECV) || s->n == NWRS) {
			*bad = wr;
			return ENOMEM;
		}
		if (rex_wr_id_kind(wr->wr_id) != REX_WR_RECV)
			fake_die("shared receive posted with wr_id %#llx",
			         (unsigned long long)wr->wr_id);
		s->q[(s->head + s->n++) % NWRS] = wr->wr_id;
	}
	return 0;
}

struct ibv_srq *ibv_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	int i = fake_slot_of((void **)F.srqs, NSRQS, NULL);
	struct fsrq *s;

	(void)attr;
	if (i < 0 || !(s = calloc(1, sizeof(*s)))) {
		errno = ENOMEM;
		return NULL;
	}
	s->srq.context = pd->context;
	s->srq.pd = pd;
	s->dev = (struct fdev *)pd->context;
	((struct fpd *)pd)->users++;
	F.srqs[i] = s;
	return &s->srq;
}

int ibv_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	(void)attr;
	(void)mask;
	LIVE(F.srqs, NSRQS, srq, "SRQ");
	return 0;
}

int ibv_destroy_srq(struct ibv_srq *srq)
{
	struct fsrq *s = (struct fsrq *)srq;

	LIVE(F.srqs, NSRQS, s, "SRQ");
	if (s->qps)
		return EBUSY; /* as the kernel says while a QP uses it */
	if (s->async_unacked)
		fake_die("ibv_destroy_srq would wait for ever: async event not acknowledged");
	fake_drop_async(s->dev, srq, NULL); /* the element's union: compared as a pointer */
	((struct fpd *)srq->pd)->users--;
	F.srqs[fake_slot_of((void **)F.srqs, NSRQS, s)] = NULL;
	free(s);
	return 0;
}

unsigned fake_srq_posted(struct ibv_srq *srq)
{
	LIVE(F.srqs, NSRQS, srq, "SRQ");
	return ((struct fsrq *)srq)->n;
}

bool fake_srq_dead(struct ibv_srq *srq)
{
	LIVE(F.srqs, NSRQS, srq, "SRQ");
	return ((struct fsrq *)srq)->dev->dead;
}

/* --- the fuzzer's view ---------------------------------------------------- */

bool fake_qp_books(struct ibv_qp *ibqp, struct fake_books *b)
{
	struct fqp *q = (struct fqp *)ibqp;

	if (!q)
		return false;
	LIVE(F.qps, NCQS, q, "QP");
	b->sends = q->sq_n;
	b->sends_done = q->sq_done;
	b->recvs = q->rq_n - q->rq_polled;
	b->marker_refused = q->marker_refused;
	b->marker_full = q->marker_full;
	b->successes = F.successes;
	b->cap_sends = q->cap_s;
	b->cap_recvs = q->cap_r;
	b->cqe = q->cq->cq.cqe;
	return true;
}

bool fake_grave_take(const void *ctx, struct fake_grave *g)
{
	unsigned i;

	for (i = 0; i < 4; i++)
		if (F.graves[i].ctx && F.graves[i].ctx == ctx) {
			*g = F.graves[i];
			F.graves[i].ctx = NULL;
			return true;
		}
	return false;
}

/* --- an input's beginning and end ------------------------------------------ */

void fake_begin(unsigned options)
{
	static const char *const names[NDEVS] = {"rxe0", "rxe1", "rxe2"};
	bool quiet = F.quiet;
	unsigned i;

	memset(&F, 0, sizeof(F));
	F.quiet = quiet;
	F.options = options;
	F.now = 1000000000u; /* 0 would be a disarmed timerfd */
	F.timerfd = -1;
	for (i = 0; i < NDEVS; i++) {
		struct fdev *d = calloc(1, sizeof(*d));

		if (!d)
			fake_die("calloc");
		snprintf(d->device.name, sizeof(d->device.name), "%s", names[i]);
		d->device.transport_type = IBV_TRANSPORT_IB;
		d->device.node_type = IBV_NODE_CA;
		d->ctx.device = &d->device;
		d->ctx.async_fd = fake_new_fd();
		d->ctx.cmd_fd = -1;
		d->ctx.ops.poll_cq = f_poll_cq;
		d->ctx.ops.req_notify_cq = f_req_notify_cq;
		d->ctx.ops.post_send = f_post_send;
		d->ctx.ops.post_recv = f_post_recv;
		d->ctx.ops.post_srq_recv = f_post_srq_recv;
		F.devs[i] = d;
	}
}

void fake_end(void)
{
	unsigned i;

	for (i = 0; i < NIDS; i++)
		if (F.ids[i])
			fake_die("a CM id left at the end (state %d)", F.ids[i]->cm);
	for (i = 0; i < NCQS; i++)
		if (F.qps[i] || F.cqs[i])
			fake_die("a QP or CQ left at the end");
	for (i = 0; i < NCHANS; i++)
		if (F.chans[i])
			fake_die("a completion channel left at the end");
	for (i = 0; i < NSRQS; i++)
		if (F.srqs[i])
			fake_die("a shared receive queue left at the end");
	if (F.pds || F.echan || F.events || F.lists)
		fake_die("left at the end: %u PDs, %d CM channel, %u CM events, %u device lists",
		         F.pds, F.echan != NULL, F.events, F.lists);
	for (i = 0; i < 4; i++)
		if (F.graves[i].ctx)
			fake_die("a QP destroyed and its connection never released");
	for (i = 0; i < NDEVS; i++) {
		close(F.devs[i]->ctx.async_fd);
		free(F.devs[i]);
		F.devs[i] = NULL;
	}
	F.timerfd = -1; /* the loop closed it */
}
