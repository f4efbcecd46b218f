/* SPDX-License-Identifier: MIT */
/*
 * fake_cm.c: the fake librdmacm of fuzz_aconn (see fake_verbs.h): CM ids
 * and their exchange with the peer, the CM event channel and its queued
 * events, the rdma_* calls the helper makes (rdma_create_qp and
 * rdma_destroy_qp among them, on fake_verbs.c's QPs), the device lists of
 * rdma_get_devices(), and the peer, the network and the kernel's CM, which
 * say only what their state allows, as the fuzzer picks. What it shares
 * with fake_verbs.c is in fake_priv.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fake_priv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NCMQ 64 /* CM events queued */

struct fev {
	struct fid *id, *listen;
	enum rdma_cm_event_type type;
	int status;
	uint16_t pdata;
};

struct echan {
	struct rdma_event_channel ch;
	struct fev q[NCMQ];
	unsigned head, n;
	bool broken;
};

/* What rdma_get_cm_event() hands out, freed by rdma_ack_cm_event(). */
struct fevent {
	struct rdma_cm_event ev;
	struct fid *id;
	uint8_t pdata[2];
	uint32_t magic;
};
#define EVENT_MAGIC 0x5eed5eedu

/* --- the device lists ----------------------------------------------------- */

struct ibv_context **rdma_get_devices(int *num)
{
	return (struct ibv_context **)fake_listed(num, true);
}

void rdma_free_devices(struct ibv_context **list)
{
	F.lists--;
	free(list);
}

/* --- the CM --------------------------------------------------------------- */

const char *rdma_event_str(enum rdma_cm_event_type event)
{
	return event == RDMA_CM_EVENT_ESTABLISHED ? "RDMA_CM_EVENT_ESTABLISHED"
	                                          : "an RDMA_CM event";
}

struct rdma_event_channel *rdma_create_event_channel(void)
{
	if (F.echan)
		fake_die("a second CM event channel");
	F.echan = calloc(1, sizeof(*F.echan));
	if (!F.echan)
		return NULL;
	F.echan->ch.fd = fake_new_fd();
	return &F.echan->ch;
}

void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	unsigned i;

	if (!F.echan || channel != &F.echan->ch)
		fake_die("CM channel %p destroyed but not alive", (void *)channel);
	for (i = 0; i < NIDS; i++)
		if (F.ids[i] && F.ids[i]->visible)
			fake_die("CM channel destroyed while a CM id uses it");
	close(channel->fd);
	free(F.echan);
	F.echan = NULL;
}

/* Room for one more CM event: the kernel's queue has it; ours is bounded,
 * and when it is full the peer says nothing (no state changes for an event
 * never queued). */
static bool cm_room(void)
{
	return F.echan && F.echan->n < NCMQ;
}

static void push_event(struct fid *id, struct fid *listen, enum rdma_cm_event_type type, int status,
                       uint16_t pdata)
{
	struct echan *e = F.echan;

	e->q[(e->head + e->n++) % NCMQ] = (struct fev){id, listen, type, status, pdata};
	fake_level(e->ch.fd, true);
}

static struct fid *new_id(void)
{
	int i = fake_slot_of((void **)F.ids, NIDS, NULL);

	if (i < 0 || !(F.ids[i] = calloc(1, sizeof(*F.ids[i]))))
		return NULL;
	F.ids[i]->id.channel = &F.echan->ch;
	F.ids[i]->id.ps = RDMA_PS_TCP;
	F.ids[i]->id.qp_type = IBV_QPT_RC;
	return F.ids[i];
}

static void free_id(struct fid *id)
{
	F.ids[fake_slot_of((void **)F.ids, NIDS, id)] = NULL;
	free(id);
}

int rdma_create_id(struct rdma_event_channel *channel, struct rdma_cm_id **id, void *context,
                   enum rdma_port_space ps)
{
	struct fid *f;

	if (!F.echan || channel != &F.echan->ch)
		fake_die("rdma_create_id on a CM channel not alive");
	f = new_id();
	if (!f) {
		errno = ENOMEM;
		return -1;
	}
	f->visible = true;
	f->id.context = context;
	f->id.ps = ps;
	*id = &f->id;
	return 0;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	struct fid *f = (struct fid *)id;
	struct echan *e = F.echan;
	unsigned i, k;
	struct fev ev;

	LIVE(F.ids, NIDS, f, "CM id");
	if (!f->visible)
		fake_die("CM id destroyed before the program had it");
	if (id->qp)
		fake_die("CM id destroyed before its QP");
	if (f->unacked)
		fake_die("rdma_destroy_id would wait for ever: %u events unacknowledged",
		         f->unacked);
	/* Its events still queued go with it, and a listener's requests with
	 * the new ids they would have made. */
	for (i = 0, k = e->n, e->n = 0; i < k; i++) {
		ev = e->q[(e->head + i) % NCMQ];
		if (ev.listen == f && ev.id != f)
			free_id(ev.id);
		if (ev.id != f && ev.listen != f)
			e->q[(e->head + e->n++) % NCMQ] = ev;
	}
	fake_level(e->ch.fd, e->n > 0 || e->broken);
	free_id(f);
	return 0;
}

int rdma_get_cm_event(struct rdma_event_channel *channel, struct rdma_cm_event **event)
{
	struct echan *e = F.echan;
	struct fevent *fe;
	struct fqp *q;
	struct fev ev;

	if (!e || channel != &e->ch)
		fake_die("rdma_get_cm_event on a CM channel not alive");
	if (fake_failing(FAKE_GET_CM_EVENT) || e->broken) {
		e->broken = false;
		fake_level(e->ch.fd, e->n > 0);
		errno = EIO;
		return -1;
	}
	if (!e->n) {
		errno = EAGAIN;
		return -1;
	}
	ev = e->q[e->head];
	e->head = (e->head + 1) % NCMQ;
	e->n--;
	fake_level(e->ch.fd, e->n > 0);
	fe = calloc(1, sizeof(*fe));
	if (!fe)
		fake_die("calloc");
	q = (struct fqp *)ev.id->id.qp;
	switch (ev.type) {
	case RDMA_CM_EVENT_CONNECT_REQUEST: /* librdmacm makes the new id now */
		ev.id->visible = true;
		ev.id->id.verbs = &ev.id->dev->ctx;
		ev.id->id.context = ev.listen->id.context;
		break;
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		ev.id->id.verbs = &ev.id->dev->ctx;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		/* librdmacm moves a client's QP to RTR and RTS here; a QP in the
		 * error state refuses, and the event becomes CONNECT_ERROR. */
		if (!ev.id->active || !q)
			break;
		if (q->st == IBV_QPS_ERR) {
			ev.type = RDMA_CM_EVENT_CONNECT_ERROR;
			ev.status = -EINVAL;
			ev.id->cm = CM_FAILED;
			ev.id->peer_gone = true;
		} else {
			q->st = IBV_QPS_RTS;
		}
		break;
	default:
		break;
	}
	fe->magic = EVENT_MAGIC;
	fe->id = ev.id;
	fe->pdata[0] = (uint8_t)ev.pdata;
	fe->pdata[1] = (uint8_t)(ev.pdata >> 8);
	fe->ev.id = &ev.id->id;
	fe->ev.listen_id = ev.listen ? &ev.listen->id : NULL;
	fe->ev.event = ev.type;
	fe->ev.status = ev.status;
	if (ev.type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		fe->ev.param.conn.private_data = fe->pdata;
		fe->ev.param.conn.private_data_len = sizeof(fe->pdata);
	}
	ev.id->removal_taken |= ev.type == RDMA_CM_EVENT_DEVICE_REMOVAL;
	ev.id->unacked++;
	F.events++;
	*event = &fe->ev;
	return 0;
}

int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	struct fevent *fe = (struct fevent *)event;

	if (fe->magic != EVENT_MAGIC)
		fake_die("rdma_ack_cm_event on something not an event");
	fe->magic = 0;
	LIVE(F.ids, NIDS, fe->id, "CM id (event acknowledged)");
	fe->id->unacked--;
	F.events--;
	free(fe);
	return 0;
}

/* A CM call on \p id valid in state \p from only: then \p to. */
static int cm_step(struct rdma_cm_id *id, enum fake_call call, enum cm from, enum cm to)
{
	struct fid *f = (struct fid *)id;

	LIVE(F.ids, NIDS, f, "CM id");
	if ((call < FAKE_CALLS && fake_failing(call)) || f->cm != from) {
		errno = EINVAL;
		return -1;
	}
	f->cm = to;
	return 0;
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	(void)addr; /* every address: no device */
	return cm_step(id, FAKE_CALLS, CM_IDLE, CM_IDLE);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	(void)backlog;
	return cm_step(id, FAKE_CALLS, CM_IDLE, CM_LISTEN);
}

int rdma_resolve_addr(struct rdma_cm_id *id, struct sockaddr *src, struct sockaddr *dst, int ms)
{
	(void)src;
	(void)dst;
	(void)ms;
	return cm_step(id, FAKE_RESOLVE_ADDR, CM_IDLE, CM_ADDR_Q);
}

int rdma_resolve_route(struct rdma_cm_id *id, int ms)
{
	(void)ms;
	return cm_step(id, FAKE_RESOLVE_ROUTE, CM_ADDR_OK, CM_ROUTE_Q);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	(void)param;
	((struct fid *)id)->active = true;
	return cm_step(id, FAKE_CONNECT, CM_ROUTE_OK, CM_CONN_SENT);
}

int rdma_accept(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	(void)param;
	if (cm_step(id, FAKE_ACCEPT, CM_REQ_RCVD, CM_ACCEPTED))
		return -1;
	if (id->qp && ((struct fqp *)id->qp)->st != IBV_QPS_ERR)
		((struct fqp *)id->qp)->st = IBV_QPS_RTS; /* librdmacm: RTR, RTS */
	return 0;
}

int rdma_reject(struct rdma_cm_id *id, const void *pdata, uint8_t len)
{
	(void)pdata;
	(void)len;
	return cm_step(id, FAKE_CALLS, CM_REQ_RCVD, CM_FAILED);
}

int rdma_disconnect(struct rdma_cm_id *id)
{
	struct fid *f = (struct fid *)id;

	LIVE(F.ids, NIDS, f, "CM id");
	if (fake_failing(FAKE_DISCONNECT) || f->cm < CM_ACCEPTED || f->cm > CM_TIMEWAIT) {
		errno = EINVAL;
		return -1;
	}
	/* InfiniBand and RoCE: librdmacm moves the QP to the error state. */
	if (id->qp)
		fake_qp_error((struct fqp *)id->qp);
	if (f->cm == CM_CONNECTED || f->cm == CM_ACCEPTED)
		f->cm = CM_DISC_SENT; /* DISCONNECTED will answer */
	else if (f->cm == CM_DREQ_RCVD)
		f->cm = CM_TIMEWAIT; /* our DREP answers the peer */
	return 0;
}

int rdma_set_option(struct rdma_cm_id *id, int level, int optname, void *optval, size_t optlen)
{
	(void)level;
	(void)optname;
	(void)optval;
	(void)optlen;
	LIVE(F.ids, NIDS, id, "CM id");
	if (fake_failing(FAKE_SET_OPTION)) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	int i = fake_slot_of((void **)F.qps, NCQS, NULL);
	struct fqp *q;

	LIVE(F.ids, NIDS, id, "CM id");
	LIVE(F.cqs, NCQS, attr->send_cq, "CQ");
	if (!id->verbs || pd->context != id->verbs || attr->send_cq->context != id->verbs)
		fake_die("QP made on a PD or CQ of another device than its CM id's");
	if (fake_failing(FAKE_CREATE_QP) || id->qp || i < 0 || attr->cap.max_send_wr > MAX_WR ||
	    attr->cap.max_recv_wr > MAX_WR || !(q = calloc(1, sizeof(*q)))) {
		errno = ENOMEM;
		return -1;
	}
	q->qp.context = id->verbs;
	q->qp.qp_context = attr->qp_context;
	q->qp.pd = pd;
	q->qp.send_cq = attr->send_cq;
	q->qp.recv_cq = attr->recv_cq;
	q->qp.qp_num = ++F.qp_nums;
	q->qp.qp_type = IBV_QPT_RC;
	q->id = (struct fid *)id;
	q->cq = (struct fcq *)attr->send_cq;
	q->pd = pd;
	q->dev = (struct fdev *)id->verbs;
	q->st = q->dev->dead ? IBV_QPS_ERR : IBV_QPS_INIT;
	q->cap_s = attr->cap.max_send_wr;
	q->cap_r = attr->cap.max_recv_wr;
	if (attr->srq) {
		LIVE(F.srqs, NSRQS, attr->srq, "SRQ");
		if (attr->cap.max_recv_wr || attr->srq->context != id->verbs)
			fake_die(
			    "QP on a shared receive queue with receives of its own, or another "
			    "device's queue");
		q->srq = (struct fsrq *)attr->srq;
		q->srq->qps++;
		/* What its CQ has room for beyond its sends: the peer's credits. */
		q->srq_room = (unsigned)q->cq->cq.cqe > q->cap_s ? q->cq->cq.cqe - q->cap_s : 0;
	}
	q->cq->qps++;
	((struct fpd *)pd)->users++;
	F.qps[i] = q;
	id->qp = &q->qp;
	return 0;
}

void rdma_destroy_qp(struct rdma_cm_id *id)
{
	struct fqp *q = (struct fqp *)id->qp;
	struct fcq *c = q->cq;
	struct fake_grave *g = NULL;
	unsigned i, k;

	LIVE(F.ids, NIDS, id, "CM id");
	LIVE(F.qps, NCQS, q, "QP");
	if (q->async_unacked)
		fake_die("the QP's destruction would wait for ever: async event not acknowledged");
	for (i = 0; i < 4 && !g; i++)
		if (!F.graves[i].ctx)
			g = &F.graves[i];
	if (!g)
		fake_die("QPs destroyed and never reported released");
	g->ctx = q->qp.qp_context;
	g->outstanding = (q->sq_n - q->sq_done) + (q->rq_n - q->rq_polled);
	g->was_err = q->st == IBV_QPS_ERR;
	g->marker_refused = q->marker_refused;
	g->marker_full = q->marker_full;
	if (F.options & FAKE_CQ_KEEPS) {
		/* rxe: the receive it had begun comes back now, and its
		 * completions stay in the CQ, no longer its. */
		if (q->st == IBV_QPS_ERR && !q->dev->dead)
			fake_flush_begun(q);
		for (i = 0; i < c->n; i++)
			if (c->q[(c->head + i) % NCQES].qp == q)
				c->q[(c->head + i) % NCQES].qp = NULL;
	} else {
		/* The driver cleans the QP's completions out of its CQ. */
		for (i = 0, k = c->n, c->n = 0; i < k; i++)
			if (c->q[(c->head + i) % NCQES].qp != q)
				c->q[(c->head + c->n++) % NCQES] = c->q[(c->head + i) % NCQES];
	}
	if (q->srq)
		q->srq->qps--;
	fake_drop_async(q->dev, q, NULL);
	c->qps--;
	((struct fpd *)q->pd)->users--;
	F.qps[fake_slot_of((void **)F.qps, NCQS, q)] = NULL;
	free(q);
	id->qp = NULL;
}

/* --- the peer ------------------------------------------------------------- */

/* The peer, the network or the kernel's CM says something to \p f: one of
 * what its state allows, as \p what picks. */
static void cm_event_on(struct fid *f, unsigned what)
{
	enum rdma_cm_event_type c[6];
	unsigned k = 0;
	int status = 0;

	if (!cm_room())
		return;
	switch (f->cm) {
	case CM_ADDR_Q:
		if (fake_current_dev())
			c[k++] = RDMA_CM_EVENT_ADDR_RESOLVED;
		c[k++] = RDMA_CM_EVENT_ADDR_ERROR;
		break;
	case CM_ROUTE_Q:
		c[k++] = RDMA_CM_EVENT_ROUTE_RESOLVED;
		c[k++] = RDMA_CM_EVENT_ROUTE_ERROR;
		break;
	case CM_CONN_SENT:
		c[k++] = RDMA_CM_EVENT_ESTABLISHED;
		c[k++] = RDMA_CM_EVENT_REJECTED;
		c[k++] = RDMA_CM_EVENT_UNREACHABLE;
		c[k++] = RDMA_CM_EVENT_CONNECT_ERROR;
		break;
	case CM_ACCEPTED: /* the RTU, its loss, or the client's DREQ first */
		c[k++] = RDMA_CM_EVENT_ESTABLISHED;
		c[k++] = RDMA_CM_EVENT_CONNECT_ERROR;
		c[k++] = RDMA_CM_EVENT_DISCONNECTED;
		break;
	case CM_CONNECTED:
	case CM_DISC_SENT:
		c[k++] = RDMA_CM_EVENT_DISCONNECTED;
		break;
	case CM_TIMEWAIT:
		c[k++] = RDMA_CM_EVENT_TIMEWAIT_EXIT;
		break;
	default:
		break;
	}
	if (f->dev && f->dev->dead && !f->removal)
		c[k++] = RDMA_CM_EVENT_DEVICE_REMOVAL;
	if (f->dev)
		c[k++] = RDMA_CM_EVENT_ADDR_CHANGE;
	if (!k)
		return;
	switch (c[what % k]) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		f->dev = fake_current_dev();
		f->cm = CM_ADDR_OK;
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		f->cm = CM_ROUTE_OK;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		f->cm = CM_CONNECTED;
		break;
	case RDMA_CM_EVENT_REJECTED: /* nobody listening, the program's no, another */
		status = (const int[]){8, 28, 1}[(what >> 4) % 3];
		f->cm = CM_FAILED;
		f->peer_gone = true;
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		f->cm = f->cm == CM_DISC_SENT ? CM_TIMEWAIT : CM_DREQ_RCVD;
		f->peer_gone = true;
		break;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		f->cm = CM_DONE;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		f->removal = true;
		break;
	case RDMA_CM_EVENT_ADDR_CHANGE:
		break;
	default: /* the errors */
		status = -ETIMEDOUT;
		f->cm = CM_FAILED;
		f->peer_gone = true;
		break;
	}
	push_event(f, NULL, c[what % k], status, 0);
}

void fake_cm_event(unsigned pick, unsigned what)
{
	struct fid *ids[NIDS];
	unsigned i, n = 0;

	for (i = 0; i < NIDS; i++)
		if (F.ids[i] && F.ids[i]->visible)
			ids[n++] = F.ids[i];
	if (n)
		cm_event_on(ids[pick % n], what);
}

void fake_connect_request(uint16_t pdata)
{
	struct fdev *d = fake_current_dev();
	struct fid *listener = NULL, *f;
	unsigned i;

	for (i = 0; i < NIDS; i++)
		if (F.ids[i] && F.ids[i]->visible && F.ids[i]->cm == CM_LISTEN)
			listener = F.ids[i];
	if (!listener || !d || !cm_room() || !(f = new_id()))
		return;
	f->dev = d;
	f->listener = listener;
	f->cm = CM_REQ_RCVD;
	push_event(f, listener, RDMA_CM_EVENT_CONNECT_REQUEST, 0, pdata);
}

void fake_break_cm_channel(void)
{
	if (F.echan) {
		F.echan->broken = true;
		fake_level(F.echan->ch.fd, true);
	}
}

void fake_settle(void)
{
	unsigned i, guard;

	for (i = 0; i < NCQS; i++)
		for (guard = 0; F.qps[i] && F.qps[i]->st == IBV_QPS_ERR && guard < 2 * NWRS;
		     guard++) {
			fake_progress(&F.qps[i]->qp, false, 0);
			fake_progress(&F.qps[i]->qp, true, 0);
		}
	for (i = 0; i < NIDS; i++)
		if (F.ids[i] && F.ids[i]->cm == CM_DISC_SENT)
			cm_event_on(F.ids[i], 0); /* DISCONNECTED comes first */
}

unsigned fake_objects_of(const void *ctx)
{
	unsigned i, n = 0;

	for (i = 0; i < NIDS; i++)
		n += F.ids[i] && F.ids[i]->visible && F.ids[i]->id.context == ctx;
	for (i = 0; i < NCQS; i++)
		n += F.qps[i] && F.qps[i]->qp.qp_context == ctx;
	return n;
}

bool fake_removal_taken(struct rdma_cm_id *id)
{
	LIVE(F.ids, NIDS, id, "CM id");
	return ((struct fid *)id)->removal_taken;
}
