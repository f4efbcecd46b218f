/* SPDX-License-Identifier: MIT */
/*
 * rex_svc.c: serve, dial, and deliver completions, over the engine of
 * rex_aconn.h. Completions and the program's work requests are
 * rex_svc_wr.c's, the messages with credits rex_svc_msg.c's, the shared
 * receive queue rex_svc_srq.c's. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getaddrinfo() under -std=c11 */
#endif
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_error.h"
#include "rex_svc_priv.h"
#include "rex_wire.h"

static const struct rex_aconn_ops engine_ops;

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
	                               .rd_atomic = 16,
	                               .backlog = 64};
	rex_aconn_attr_default(&cfg->attr);
}

/* --- the service ------------------------------------------------------------ */

static void cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg);

/* Before a device's PD goes: what the program registered in it. */
static int device_closing(struct rex_aconn_dev *dev)
{
	struct rex_svc *s = dev->devs->cm_arg;
	/* The shared receive queue and its pool, and the program's memory:
	 * no QP is left. Both, even when the first fails. */
	int ret = rex_svc_srq_release(dev), prog = 0;

	if (dev->user && s->ops->device_closing)
		prog = s->ops->device_closing(s, dev->pd, dev->user);
	return ret ? ret : prog;
}

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
	if (cfg->msg_size && cfg->raw_pdata) {
		rex_errorf("rex_svc_create: raw private data cannot tell the credits of messages");
		return NULL;
	}
	if (rex_svc_srq_check(cfg))
		return NULL;
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
	s->devs.dev_release = device_closing;
	s->devs.srq_event = rex_svc_srq_event;
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

int rex_svc_release_all(struct rex_svc *s, struct rex_loop *loop)
{
	const char *who = s ? s->cfg.who : NULL;
	int ret = s && rex_svc_destroy(s) == 0 ? 0 : -1;

	if (rex_loop_destroy(loop))
		ret = -1;
	if (ret == 0)
		printf("%s: released everything: no QP, CQ, memory region or CM id left\n", who);
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
	out->cm = s->devs.cm_stats;
}

int rex_svc_serve(struct rex_svc *s, const char *addr, uint16_t port)
{
	struct rex_aconn_dev *dev;
	int ret = rex_aconn_listen(&s->devs, addr, port, s->cfg.backlog, &s->listener);

	/* Bound to a device's address, the listener knows its device: its
	 * shared queue is made now, not in the first client's setup. */
	if (ret || !s->cfg.srq_recvs || !s->listener->verbs)
		return ret;
	dev = rex_aconn_dev_get(&s->devs, s->listener->verbs);
	return dev ? rex_svc_srq_prepare(s, dev) : -ENODEV;
}

struct ibv_context *rex_svc_listen_device(const struct rex_svc *s)
{
	return s->listener ? s->listener->verbs : NULL;
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

/* The wr_ids of the program's work requests, kept beside the helper's books. */
static int books_alloc(struct rex_svc_conn *c, uint32_t sends, uint32_t recvs)
{
	uint64_t *send_ids = calloc(sends, sizeof(*send_ids));
	uint8_t *send_kind = calloc(sends, sizeof(*send_kind));
	uint64_t *recv_ids = calloc(recvs ? recvs : 1, sizeof(*recv_ids));

	if (!send_ids || !send_kind || !recv_ids) {
		rex_report_errno("calloc", ENOMEM);
		free(send_ids);
		free(send_kind);
		free(recv_ids);
		return -ENOMEM;
	}
	free(c->send_ids);
	free(c->send_kind);
	free(c->recv_ids);
	c->send_ids = send_ids;
	c->send_kind = send_kind;
	c->recv_ids = recv_ids;
	c->send_depth = sends;
	c->recv_depth = recvs;
	return 0;
}

int rex_svc_conn_set_depths(struct rex_svc_conn *c, uint32_t sends, uint32_t recvs)
{
	int ret;

	if (c->svc->cfg.msg_size || c->ac.qp || sends < 1)
		return -EINVAL;
	/* On a shared receive queue: its share, if the queue has it. */
	if (c->dev && c->svc->cfg.srq_recvs) {
		ret = rex_svc_srq_promise(c, recvs);
		if (ret)
			return ret;
	}
	return books_alloc(c, sends, recvs);
}

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
	if (books_alloc(c, depth, s->cfg.recv_depth)) {
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
	rex_svc_srq_leave(c); /* its QP is gone: its share is free again */
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
	struct rex_aconn_dev *dev =
	    c->dev ? c->dev : rex_aconn_dev_get(&c->svc->devs, c->ac.id->verbs);
	struct rex_aconn_queues q = {
	    .sends = c->send_depth,
	    .recvs = cfg->msg_size ? cfg->msg_recvs : c->recv_depth,
	    .max_sge = cfg->max_sge,
	    .max_inline = cfg->max_inline,
	};
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	int ret;

	if (!dev)
		return -ENODEV;
	c->dev = dev;
	/* A server's was promised with its request; a client's here. */
	ret = rex_svc_srq_admit(c);
	if (ret)
		return ret;
	q.srq = rex_svc_srq_for_queues(c, &q.recvs);
	ret = rex_aconn_create_queues_with(&c->ac, dev, &q, rex_svc_on_cq);
	if (ret)
		return ret;
	/* What the QP got, which may be more than asked: the program's limit. */
	ret = ibv_query_qp(c->ac.qp, &attr, IBV_QP_CAP, &init);
	if (ret) {
		rex_report_errno("ibv_query_qp", ret);
		return -ret;
	}
	/* A QP on a shared queue has no receive queue of its own: its
	 * receives have the queue's one SGE. */
	c->max_sge = init.cap.max_send_sge < init.cap.max_recv_sge || q.srq ? init.cap.max_send_sge
	                                                                    : init.cap.max_recv_sge;
	ret = rex_svc_msgs_create(c);
	if (ret == 0 && c->svc->ops->ready)
		ret = c->svc->ops->ready(c) ? -ECANCELED : 0;
	return ret;
}

/* Our header in front of the program's private data: version, its length,
 * the credits the peer starts with; and, in version 2 (a server on a shared
 * receive queue), the most it may ever hold. */
static size_t pdata_encode_credits(const struct rex_svc *s, uint8_t *out, const void *pdata,
                                   size_t len, uint32_t credits, uint32_t cap)
{
	size_t header = cap > credits ? REX_SVC_PDATA_HEADER_2 : REX_SVC_PDATA_HEADER;

	if (s->cfg.raw_pdata) {
		if (len)
			memcpy(out, pdata, len);
		return len;
	}
	out[0] = cap > credits ? REX_SVC_PDATA_VERSION_2 : REX_SVC_PDATA_VERSION;
	out[1] = (uint8_t)len;
	rex_put_be16(out + 2, (uint16_t)credits);
	if (cap > credits)
		rex_put_be16(out + 4, (uint16_t)cap);
	if (len)
		memcpy(out + header, pdata, len);
	return header + len;
}

static size_t pdata_encode(const struct rex_svc *s, uint8_t *out, const void *pdata, size_t len)
{
	uint32_t credits = s->cfg.msg_size ? s->cfg.msg_recvs : 0;

	return pdata_encode_credits(s, out, pdata, len, credits, credits);
}

/* A server's answer with its accept: the credits the client starts with,
 * on a shared receive queue its share, which may grow up to msg_recvs. */
static size_t accept_pdata(const struct rex_svc_conn *c, uint8_t *out, const void *pdata,
                           size_t len)
{
	const struct rex_svc_config *cfg = &c->svc->cfg;

	if (!cfg->msg_size)
		return pdata_encode_credits(c->svc, out, pdata, len, 0, 0);
	return pdata_encode_credits(c->svc, out, pdata, len,
	                            c->ac.srq ? c->srq_share : cfg->msg_recvs, cfg->msg_recvs);
}

/* The length of a header of ours at \p p (\p len bytes), with its credits
 * and cap; 0 when it is none. */
static size_t pdata_header(const uint8_t *p, size_t len, uint32_t *credits, uint32_t *cap)
{
	size_t header =
	    len && p[0] == REX_SVC_PDATA_VERSION_2 ? REX_SVC_PDATA_HEADER_2 : REX_SVC_PDATA_HEADER;

	if (len < header || (p[0] != REX_SVC_PDATA_VERSION && p[0] != REX_SVC_PDATA_VERSION_2) ||
	    p[1] > REX_SVC_PDATA_MAX || p[1] > len - header)
		return 0;
	*credits = rex_get_be16(p + 2);
	*cap = header == REX_SVC_PDATA_HEADER_2 ? rex_get_be16(p + 4) : *credits;
	return *cap < *credits ? 0 : header;
}

/* The peer's header: checked before anything of it is used. */
static int pdata_decode(struct rex_svc_conn *c, const struct rex_cm_event *ev,
                        const uint8_t **pdata, size_t *len)
{
	const uint8_t *p = ev->private_data;
	uint32_t credits = 0, cap = 0;
	size_t header;

	if (c->svc->cfg.raw_pdata) {
		*pdata = p;
		*len = ev->private_data_len;
		return 0;
	}
	header = pdata_header(p, ev->private_data_len, &credits, &cap);
	/* Version 2 only in a server's accept: a client's request says one number. */
	if (!header || (header == REX_SVC_PDATA_HEADER_2 && !c->ac.active_side)) {
		rex_aconn_say(
		    &c->ac, "the peer's private data is not this helper's (%zu bytes, version %u)",
		    ev->private_data_len, ev->private_data_len ? p[0] : 0);
		return -EPROTO;
	}
	if (c->svc->cfg.msg_size && credits < 4) {
		rex_aconn_say(
		    &c->ac, "the peer offers %u receive slots for messages; 4 at least are needed",
		    credits);
		return -EPROTO;
	}
	c->msgs.credits = credits;
	c->msgs.peer_recvs = cap; /* what it may return credits up to */
	*pdata = p + header;
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
	uint8_t answer[REX_SVC_PDATA_HEADER_2 + REX_SVC_PDATA_MAX];
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
	/* Its device (PD, limits) is the program's to use from its request on. */
	c->dev = rex_aconn_dev_get(&s->devs, ev->id->verbs);
	if (!c->dev || pdata_decode(c, ev, &pdata, &plen)) {
		reject(s, ev->id, NULL, 0);
		conn_free(c);
		return;
	}
	/* Its share of the shared receive queue, before the program promises
	 * it anything (rex_svc_conn_set_depths() may change it). */
	if (rex_svc_srq_admit(c)) {
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
		rex_svc_srq_leave(c);
		conn_free(c);
		return;
	}
	conn_start(c, ev->id, REX_STATE_CONNECTING);
	if (make_queues(c))
		goto out_close;
	param.private_data = answer;
	param.private_data_len =
	    (uint8_t)accept_pdata(c, answer, reply, reply_len > sizeof(reply) ? 0 : reply_len);
	/* READs and atomics: no more than the client asked for, nor than our
	 * device serves. The event gives the request's depths from our side
	 * (its responder_resources is the client's initiator depth). */
	param.responder_resources = ev->responder_resources;
	if (param.responder_resources > c->ac.dev->attr.max_qp_rd_atom)
		param.responder_resources = (uint8_t)c->ac.dev->attr.max_qp_rd_atom;
	param.initiator_depth = ev->initiator_depth;
	if (param.initiator_depth > c->ac.dev->attr.max_qp_init_rd_atom)
		param.initiator_depth = (uint8_t)c->ac.dev->attr.max_qp_init_rd_atom;
	/* Returns at once: ESTABLISHED, or an error, comes later as an event. */
	if (rex_aconn_accept(&c->ac, &param) == 0) {
		if (s->ops->accepted)
			s->ops->accepted(c); /* the QP may send now */
		return;
	}
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
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
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

int rex_svc_conn_set_pdata(struct rex_svc_conn *c, const void *pdata, size_t len)
{
	/* A client's (it has a server), between its queues and its connect. */
	if (!c->dest.ss_family || c->ac.state != REX_STATE_RESOLVING || !c->ac.qp ||
	    len > REX_SVC_PDATA_MAX)
		return -EINVAL;
	c->pdata_len = pdata_encode(c->svc, c->pdata, pdata, len);
	return 0;
}

static uint8_t rd_atomic_cap(uint8_t asked, int device_max)
{
	return device_max < asked ? (uint8_t)device_max : asked;
}

/* [route-resolved] */
/* ROUTE_RESOLVED: the id knows its device now. Queues, slots, receives,
 * then the connect request with the private data. */
static int route_resolved(struct rex_aconn *ac)
{
	struct rex_svc_conn *c = CONN_OF(ac);
	struct rdma_conn_param param = {.private_data = c->pdata};
	int ret = make_queues(c);

	if (ret)
		return ret;
	param.private_data_len = (uint8_t)c->pdata_len; /* ops.ready() may have set it */
	param.initiator_depth =
	    rd_atomic_cap(c->svc->cfg.rd_atomic, ac->dev->attr.max_qp_init_rd_atom);
	param.responder_resources =
	    rd_atomic_cap(c->svc->cfg.rd_atomic, ac->dev->attr.max_qp_rd_atom);
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

/* A rejection's answer: the program's bytes, or none when the helper's
 * header is missing (nobody listening, or refused by the helper). */
static void tell_rejected(struct rex_svc_conn *c, const struct rex_cm_event *ev)
{
	const uint8_t *p = ev->private_data;
	size_t len = ev->private_data_len, header;
	uint32_t credits, cap;

	if (!c->svc->cfg.raw_pdata) {
		header = pdata_header(p, len, &credits, &cap);
		if (!header)
			len = 0;
		else
			len = p[1], p += header;
	}
	c->svc->ops->rejected(c, len ? p : NULL, len);
}

static void cm_failed(struct rex_aconn *ac, const struct rex_cm_event *ev)
{
	struct rex_svc_conn *c = CONN_OF(ac);

	if (ev->type == RDMA_CM_EVENT_REJECTED) {
		set_why(c, REX_SVC_REJECTED);
		if (c->svc->ops->rejected)
			tell_rejected(c, ev);
	} else if (ev->type == RDMA_CM_EVENT_ADDR_ERROR || ev->type == RDMA_CM_EVENT_ROUTE_ERROR ||
	           ev->type == RDMA_CM_EVENT_UNREACHABLE ||
	           ev->type == RDMA_CM_EVENT_CONNECT_ERROR) {
		set_why(c, REX_SVC_UNREACHABLE);
	}
}

static void releasing(struct rex_aconn *ac)
{
	struct rex_svc_conn *c = CONN_OF(ac);

	if (ac->qp && c->svc->ops->releasing)
		c->svc->ops->releasing(c);
}

static const struct rex_aconn_ops engine_ops = {
    .route_resolved = route_resolved,
    .releasing = releasing,
    .established = established,
    .peer_left = peer_left,
    .cm_failed = cm_failed,
    .released = released,
    .srq_recv = rex_svc_srq_recv,
};
