/* SPDX-License-Identifier: MIT */
/*
 * rex_svc.c: serve, dial, and deliver completions, over the engine of
 * rex_aconn.h. The messages with credits are rex_svc_msg.c's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getaddrinfo() under -std=c11 */
#endif
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_error.h"
#include "rex_svc_priv.h"
#include "rex_wire.h"

/* The connection around the engine's record (the engine's callbacks get it). */
#define CONN_OF(p) ((struct rex_svc_conn *)((char *)(p)-offsetof(struct rex_svc_conn, ac)))

static const struct rex_aconn_ops engine_ops;
static void on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq);

const char *rex_svc_why_name(enum rex_svc_why why)
{
	static const char *const names[] = {"done", "peer left", "rejected", "unreachable",
	                                    "failed"};

	return (unsigned)why < sizeof(names) / sizeof(names[0]) ? names[why] : "?";
}

void rex_svc_config_default(struct rex_svc_config *cfg)
{
	*cfg = (struct rex_svc_config){.who = "server",
	                               .send_depth = 16,
	                               .recv_depth = 16,
	                               .max_sge = 1,
	                               .msg_recvs = 8,
	                               .msg_sends = 8,
	                               .backlog = 64};
	rex_aconn_attr_default(&cfg->attr);
}

/* --- the service ------------------------------------------------------------ */

static void cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg);

static void tell_stopped(struct rex_loop *loop, void *arg)
{
	struct rex_svc *s = arg;

	(void)loop;
	if (s->ops->stopped)
		s->ops->stopped(s);
}

struct rex_svc *rex_svc_create(struct rex_loop *loop, const struct rex_svc_config *cfg,
                               const struct rex_svc_ops *ops, void *user)
{
	struct rex_svc *s;

	if (cfg->msg_size && (cfg->msg_recvs < 4 || cfg->msg_recvs > UINT16_MAX ||
	                      cfg->msg_sends < 1 || cfg->msg_sends > cfg->send_depth)) {
		rex_errorf("rex_svc_create: messages need 4 to 65535 receive slots and 1 to "
		           "send_depth (%u) send slots; got %u and %u",
		           cfg->send_depth, cfg->msg_recvs, cfg->msg_sends);
		return NULL;
	}
	if (!ops->closed || cfg->send_depth < 1 || cfg->max_sge < 1) {
		rex_errorf("rex_svc_create: ops.closed, a send queue and one SGE are needed");
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rex_report_errno("calloc", errno);
		return NULL;
	}
	s->loop = loop;
	s->cfg = *cfg;
	s->ops = ops;
	s->user = user;
	rex_loop_task_init(&s->stopped, tell_stopped, s);
	if (rex_aconn_devs_create(&s->devs, loop, cfg->who, &cfg->attr, cm_event, s)) {
		free(s);
		return NULL;
	}
	return s;
}

int rex_svc_destroy(struct rex_svc *s)
{
	int ret;

	if (!s)
		return 0;
	if (s->listener && rdma_destroy_id(s->listener))
		rex_report_errno("rdma_destroy_id", errno);
	s->listener = NULL;
	ret = rex_aconn_devs_destroy(&s->devs);
	if (ret == -EBUSY)
		return ret; /* connections still use it: the process's end frees it */
	rex_loop_unpost(s->loop, &s->stopped);
	free(s);
	return ret;
}

void *rex_svc_user(const struct rex_svc *s)
{
	return s->user;
}

unsigned rex_svc_conns(const struct rex_svc *s)
{
	return s->open;
}

void rex_svc_stats(const struct rex_svc *s, struct rex_svc_stats *out)
{
	*out = s->stats;
}

int rex_svc_serve(struct rex_svc *s, const char *addr, uint16_t port)
{
	return rex_aconn_listen(&s->devs, addr, port, s->cfg.backlog, &s->listener);
}

void rex_svc_stop(struct rex_svc *s)
{
	struct rex_svc_conn *c;

	s->stopping = true;
	if (s->listener && rdma_destroy_id(s->listener))
		rex_report_errno("rdma_destroy_id", errno);
	s->listener = NULL;
	for (c = s->conns; c; c = c->next)
		rex_aconn_close(&c->ac, false);
	if (s->open == 0)
		rex_loop_post(s->loop, &s->stopped);
}

/* --- a connection's making and end ------------------------------------------ */

static struct rex_svc_conn *conn_new(struct rex_svc *s, void *user)
{
	uint32_t depth = s->cfg.send_depth;
	struct rex_svc_conn *c = calloc(1, sizeof(*c));

	if (!c) {
		rex_report_errno("calloc", errno);
		return NULL;
	}
	c->svc = s;
	c->user = user;
	c->ac.who = s->cfg.who; /* for its lines before the engine takes it */
	c->send_ids = calloc(depth, sizeof(*c->send_ids));
	c->send_kind = calloc(depth, sizeof(*c->send_kind));
	c->recv_ids = calloc(s->cfg.recv_depth ? s->cfg.recv_depth : 1, sizeof(*c->recv_ids));
	if (!c->send_ids || !c->send_kind || !c->recv_ids) {
		rex_report_errno("calloc", errno);
		free(c->send_ids);
		free(c->send_kind);
		free(c->recv_ids);
		free(c);
		return NULL;
	}
	snprintf(c->ac.name, sizeof(c->ac.name), "connection %lu", ++s->numbered);
	return c;
}

static void conn_free(struct rex_svc_conn *c)
{
	free(c->send_ids);
	free(c->send_kind);
	free(c->recv_ids);
	free(c);
}

/* The engine took the id: the connection counts, and the helper closes it. */
static void conn_start(struct rex_svc_conn *c, struct rdma_cm_id *id, enum rex_state state)
{
	struct rex_svc *s = c->svc;

	rex_aconn_init(&c->ac, &s->devs, id, state, &engine_ops);
	c->ac.lcq.arg = c; /* for on_cq() */
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->open++;
	s->stats.accepted++;
}

static void set_why(struct rex_svc_conn *c, enum rex_svc_why why)
{
	if (!c->why_set)
		c->why = why;
	c->why_set = true;
}

/* The engine released the QP, the CQ and the id: the slots, then the program. */
static void released(struct rex_aconn *ac)
{
	struct rex_svc_conn *c = CONN_OF(ac);
	struct rex_svc *s = c->svc;

	if (rex_svc_msgs_destroy(c))
		ac->failed = true;
	/* Cut at the drain deadline: a failure, unless the protocol was done
	 * and nothing was missing but the peer's answer to our disconnect (a
	 * busy peer answers late; everything of ours had completed). */
	if (!c->why_set &&
	    (ac->failed || (ac->drain_cut && !(c->peer_done && ac->recvs_posted == 0 &&
	                                       ac->sq_posted == ac->sq_done))))
		set_why(c, REX_SVC_FAILED);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	s->open--;
	s->stats.closed++;
	s->stats.failed += c->why_set && c->why != REX_SVC_DONE;
	s->ops->closed(c, c->why_set ? c->why : REX_SVC_DONE);
	conn_free(c);
	if (s->stopping && s->open == 0 && s->ops->stopped)
		s->ops->stopped(s);
}

/* The queues, the slots and the receives: before the accept or the connect. */
static int make_queues(struct rex_svc_conn *c)
{
	const struct rex_svc_config *cfg = &c->svc->cfg;
	struct rex_aconn_dev *dev = rex_aconn_dev_get(&c->svc->devs, c->ac.id->verbs);
	struct rex_aconn_queues q = {
	    .sends = cfg->send_depth,
	    .recvs = cfg->msg_size ? cfg->msg_recvs : cfg->recv_depth,
	    .max_sge = cfg->max_sge,
	    .max_inline = cfg->max_inline,
	};
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int ret;

	if (!dev)
		return -ENODEV;
	ret = rex_aconn_create_queues_with(&c->ac, dev, &q, on_cq);
	if (ret)
		return ret;
	/* What the QP got, which may be more than asked: the program's limit. */
	ret = ibv_query_qp(c->ac.qp, &attr, IBV_QP_CAP, &init);
	if (ret) {
		rex_report_errno("ibv_query_qp", ret);
		return -ret;
	}
	c->max_sge = init.cap.max_send_sge < init.cap.max_recv_sge ? init.cap.max_send_sge
	                                                           : init.cap.max_recv_sge;
	ret = rex_svc_msgs_create(c);
	if (ret == 0 && c->svc->ops->ready)
		ret = c->svc->ops->ready(c) ? -ECANCELED : 0;
	return ret;
}

/* Our header in front of the program's private data: version, its length, credits. */
static size_t pdata_encode(const struct rex_svc *s, uint8_t *out, const void *pdata, size_t len)
{
	uint16_t credits = s->cfg.msg_size ? (uint16_t)s->cfg.msg_recvs : 0;

	out[0] = REX_SVC_PDATA_VERSION;
	out[1] = (uint8_t)len;
	rex_put_be16(out + 2, credits);
	if (len)
		memcpy(out + REX_SVC_PDATA_HEADER, pdata, len);
	return REX_SVC_PDATA_HEADER + len;
}

/* The peer's header: checked before anything of it is used. */
static int pdata_decode(struct rex_svc_conn *c, const struct rex_cm_event *ev,
                        const uint8_t **pdata, size_t *len)
{
	const uint8_t *p = ev->private_data;
	uint32_t credits;

	if (ev->private_data_len < REX_SVC_PDATA_HEADER || p[0] != REX_SVC_PDATA_VERSION ||
	    p[1] > REX_SVC_PDATA_MAX || p[1] > ev->private_data_len - REX_SVC_PDATA_HEADER) {
		rex_aconn_say(
		    &c->ac, "the peer's private data is not this helper's (%zu bytes, version %u)",
		    ev->private_data_len, ev->private_data_len ? p[0] : 0);
		return -EPROTO;
	}
	credits = rex_get_be16(p + 2);
	if (c->svc->cfg.msg_size && credits < 4) {
		rex_aconn_say(
		    &c->ac, "the peer offers %u receive slots for messages; 4 at least are needed",
		    credits);
		return -EPROTO;
	}
	c->msgs.credits = credits;
	c->msgs.peer_recvs = credits;
	*pdata = p + REX_SVC_PDATA_HEADER;
	*len = p[1];
	return 0;
}

/* --- server ------------------------------------------------------------------ */

static void reject(struct rex_svc *s, struct rdma_cm_id *id, const void *pdata, size_t len)
{
	s->stats.rejected++;
	if (rdma_reject(id, pdata, (uint8_t)len))
		rex_report_errno("rdma_reject", errno);
	if (rdma_destroy_id(id))
		rex_report_errno("rdma_destroy_id", errno);
}

static void on_request(struct rex_svc *s, const struct rex_cm_event *ev)
{
	uint8_t answer[REX_SVC_PDATA_HEADER + REX_SVC_PDATA_MAX];
	uint8_t reply[REX_SVC_PDATA_MAX];
	size_t reply_len = 0, plen, alen; /* no answer unless the program writes one */
	const uint8_t *pdata;
	char peer[REX_CM_ADDRESS_LEN];
	struct rex_svc_conn *c;
	struct rdma_conn_param param = {0};

	if (s->stopping || !(c = conn_new(s, NULL))) {
		reject(s, ev->id, NULL, 0);
		return;
	}
	snprintf(c->ac.name, sizeof(c->ac.name), "connection %lu from %s", s->numbered,
	         rex_cm_format_address(rdma_get_peer_addr(ev->id), peer, sizeof(peer)));
	c->ac.id = ev->id; /* for its name in messages; the engine takes it below */
	if (pdata_decode(c, ev, &pdata, &plen)) {
		reject(s, ev->id, NULL, 0);
		conn_free(c);
		return;
	}
	/* [accept] */
	/* The program decides, with the client's private data; then the
	 * queues, and from here every way out goes through DRAINING. */
	if (s->ops->request && s->ops->request(c, pdata, plen, reply, &reply_len)) {
		alen = pdata_encode(s, answer, reply, reply_len > sizeof(reply) ? 0 : reply_len);
		reject(s, ev->id, answer, alen);
		conn_free(c);
		return;
	}
	conn_start(c, ev->id, REX_STATE_CONNECTING);
	if (make_queues(c))
		goto out_close;
	param.private_data = answer;
	param.private_data_len =
	    (uint8_t)pdata_encode(s, answer, reply, reply_len > sizeof(reply) ? 0 : reply_len);
	/* READs: no more than the client asked for, nor than our device serves. */
	param.responder_resources = ev->initiator_depth;
	if (param.responder_resources > c->ac.dev->attr.max_qp_rd_atom)
		param.responder_resources = (uint8_t)c->ac.dev->attr.max_qp_rd_atom;
	param.initiator_depth = ev->responder_resources;
	if (param.initiator_depth > c->ac.dev->attr.max_qp_init_rd_atom)
		param.initiator_depth = (uint8_t)c->ac.dev->attr.max_qp_init_rd_atom;
	/* Returns at once: ESTABLISHED, or an error, comes later as an event. */
	if (rex_aconn_accept(&c->ac, &param) == 0)
		return;
	/* [accept] */
out_close:
	rex_aconn_close(&c->ac, true);
}

static void cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct rex_svc *s = arg;

	(void)devs;
	if (ev->type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		on_request(s, ev);
		return;
	}
	/* The listener's own events, or the channel failing (status -EIO). */
	if (ev->type != RDMA_CM_EVENT_DEVICE_REMOVAL && ev->status != -EIO) {
		rex_errorf("%s: listener: %s", s->cfg.who, rdma_event_str(ev->type));
		return;
	}
	rex_errorf("%s: %s: no new connections; closing %u open", s->cfg.who,
	           ev->status == -EIO ? "the CM event channel failed"
	                              : "the listener's device went away",
	           s->open);
	s->stats.listener_lost = true;
	if (!s->stopping)
		rex_svc_stop(s);
}

/* --- client ------------------------------------------------------------------ */

int rex_svc_dial(struct rex_svc *s, const char *addr, uint16_t port, const void *pdata, size_t len,
                 void *user)
{
	struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
	struct rdma_cm_id *id;
	struct rex_svc_conn *c;
	char service[8];
	int ret;

	if (len > REX_SVC_PDATA_MAX) {
		rex_errorf("rex_svc_dial: %zu bytes of private data, %d at most", len,
		           REX_SVC_PDATA_MAX);
		return -EINVAL;
	}
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	ret = getaddrinfo(addr, service, &hints, &res);
	if (ret) {
		rex_errorf("getaddrinfo: %s: %s", addr, gai_strerror(ret));
		return -EINVAL;
	}
	c = conn_new(s, user);
	if (!c) {
		freeaddrinfo(res);
		return -ENOMEM;
	}
	memcpy(&c->dest, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	c->pdata_len = pdata_encode(s, c->pdata, pdata, len);
	if (rdma_create_id(s->devs.channel, &id, NULL, RDMA_PS_TCP)) {
		ret = -errno;
		rex_report_errno("rdma_create_id", errno);
		conn_free(c);
		return ret;
	}
	conn_start(c, id, REX_STATE_RESOLVING);
	ret = rex_aconn_resolve(&c->ac, (struct sockaddr *)&c->dest);
	if (ret)
		rex_aconn_close(&c->ac, true); /* closed() follows */
	return 0;
}

/* [route-resolved] */
/* ROUTE_RESOLVED: the id knows its device now. Queues, slots, receives,
 * then the connect request with the private data. */
static int route_resolved(struct rex_aconn *ac)
{
	struct rex_svc_conn *c = CONN_OF(ac);
	struct rdma_conn_param param = {.private_data = c->pdata,
	                                .private_data_len = (uint8_t)c->pdata_len};
	int ret = make_queues(c);

	if (ret)
		return ret;
	param.initiator_depth =
	    (uint8_t)(ac->dev->attr.max_qp_init_rd_atom < 16 ? ac->dev->attr.max_qp_init_rd_atom
	                                                     : 16);
	param.responder_resources =
	    (uint8_t)(ac->dev->attr.max_qp_rd_atom < 16 ? ac->dev->attr.max_qp_rd_atom : 16);
	return rex_aconn_connect(ac, &param);
}
/* [route-resolved] */

/* --- the engine's steps ------------------------------------------------------ */

static int established(struct rex_aconn *ac, const struct rex_cm_event *ev)
{
	struct rex_svc_conn *c = CONN_OF(ac);
	const uint8_t *pdata = NULL;
	size_t len = 0;

	if (ac->active_side && pdata_decode(c, ev, &pdata, &len))
		return -EPROTO;
	if (c->svc->ops->established)
		c->svc->ops->established(c, pdata, len);
	if (rex_svc_conn_open(c))
		rex_svc_msgs_pump(c);
	return 0;
}

static bool peer_left(struct rex_aconn *ac)
{
	struct rex_svc_conn *c = CONN_OF(ac);

	if (c->peer_done || c->svc->cfg.peer_may_leave)
		return true;
	rex_aconn_say(&c->ac, "the peer disconnected before the protocol was done");
	set_why(c, REX_SVC_PEER_LEFT);
	return false;
}

static void cm_failed(struct rex_aconn *ac, const struct rex_cm_event *ev)
{
	struct rex_svc_conn *c = CONN_OF(ac);

	if (ev->type == RDMA_CM_EVENT_REJECTED)
		set_why(c, REX_SVC_REJECTED);
	else if (ev->type == RDMA_CM_EVENT_ADDR_ERROR || ev->type == RDMA_CM_EVENT_ROUTE_ERROR ||
	         ev->type == RDMA_CM_EVENT_UNREACHABLE || ev->type == RDMA_CM_EVENT_CONNECT_ERROR)
		set_why(c, REX_SVC_UNREACHABLE);
}

static const struct rex_aconn_ops engine_ops = {
    .route_resolved = route_resolved,
    .established = established,
    .peer_left = peer_left,
    .cm_failed = cm_failed,
    .released = released,
};

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
		if (c->svc->cfg.msg_size) {
			rex_svc_msgs_received(c, wc);
			return;
		}
		i = rex_wr_id_slot(wc->wr_id);
		if (ops->recv)
			ops->recv(c, c->recv_ids[i], wc);
		return;
	}
	n = rex_aconn_send_number(&c->ac, wc->wr_id);
	i = (uint32_t)(n % c->svc->cfg.send_depth);
	if (c->send_kind[i] == REX_SVC_SEND_PROGRAM && ops->done)
		ops->done(c, c->send_ids[i], wc);
}

static void on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	struct rex_svc_conn *c = lcq->arg;
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	int good, taken, i;

	(void)loop;
	do {
		good = rex_aconn_poll(&c->ac, wc, REX_ACONN_WC_BATCH, &taken);
		/* A callback may close it: what follows is flushed news then. */
		for (i = 0;
		     i < good && (rex_svc_conn_open(c) || c->ac.state == REX_STATE_CONNECTING); i++)
			deliver(c, &wc[i]);
	} while (taken == REX_ACONN_WC_BATCH);
	if (rex_svc_conn_open(c))
		rex_svc_msgs_pump(c);
	if (rex_svc_conn_open(c))
		rex_svc_msgs_resume(c);
}

/* --- the program's work requests ---------------------------------------------- */

int rex_svc_post_kind(struct rex_svc_conn *c, struct ibv_send_wr *first, uint8_t kind)
{
	uint32_t depth = c->svc->cfg.send_depth, count = 0, i;
	uint64_t n = c->ac.sq_posted;
	uint64_t saved[64];
	struct ibv_send_wr *wr;
	int ret;

	if (!rex_svc_conn_open(c))
		return -ENOTCONN;
	for (wr = first; wr; wr = wr->next)
		count++;
	if (count > 64 || c->ac.sq_posted - c->ac.sq_done + count > depth)
		return -ENOBUFS;
	for (wr = first, i = 0; wr; wr = wr->next, i++) {
		saved[i] = wr->wr_id;
		c->send_ids[(n + 1 + i) % depth] = wr->wr_id;
		c->send_kind[(n + 1 + i) % depth] = kind;
	}
	ret = rex_aconn_post_send(&c->ac, first);
	for (wr = first, i = 0; wr; wr = wr->next, i++)
		wr->wr_id = saved[i]; /* the program's chain, as it was */
	return ret;
}

int rex_svc_post_send(struct rex_svc_conn *c, struct ibv_send_wr *first)
{
	return rex_svc_post_kind(c, first, REX_SVC_SEND_PROGRAM);
}

int rex_svc_post_recv(struct rex_svc_conn *c, struct ibv_recv_wr *first)
{
	uint32_t depth = c->svc->cfg.recv_depth, count = 0;
	uint64_t saved[64];
	struct ibv_recv_wr *wr;
	int ret;

	if (c->svc->cfg.msg_size)
		return -EINVAL;
	if (!c->ac.qp || c->ac.state == REX_STATE_DRAINING || c->ac.state == REX_STATE_CLOSED)
		return -ENOTCONN;
	for (wr = first; wr; wr = wr->next)
		count++;
	if (count > 64 || c->ac.recvs_posted + count > depth)
		return -ENOBUFS;
	/* Receive slots in turn: RC completes a queue's receives in order, so
	 * slot k is free again when the one posted depth receives before it is. */
	for (wr = first, count = 0; wr; wr = wr->next, count++) {
		saved[count] = wr->wr_id;
		c->recv_ids[c->recv_next % depth] = wr->wr_id;
		wr->wr_id = c->recv_next++ % depth;
	}
	ret = rex_aconn_post_recv(&c->ac, first);
	for (wr = first, count = 0; wr; wr = wr->next, count++)
		wr->wr_id = saved[count];
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
	return c->ac.dev ? c->ac.dev->pd : NULL;
}

uint32_t rex_svc_conn_max_sge(const struct rex_svc_conn *c)
{
	return c->max_sge;
}

void rex_svc_conn_peer_done(struct rex_svc_conn *c)
{
	c->peer_done = true;
}

void rex_svc_close(struct rex_svc_conn *c, bool failed)
{
	rex_aconn_close(&c->ac, failed);
}
