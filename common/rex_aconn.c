/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn.c: a connection served by an event loop (see rex_aconn.h).
 * Nothing here blocks: every CM call returns at once and its outcome
 * arrives later as an event, every completion arrives through the loop, and
 * a connection's end waits for its flushed work requests in the loop too.
 * Chapter 05-async's walkthrough shows this file step by step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime and htobe32 under -std=c11 */
#endif
#include "rex_aconn.h"

#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netdb.h>
#include <sys/epoll.h>

#include "rex_error.h"

#define MS 1000000u /* nanoseconds */

static void on_deadline(struct rex_loop *loop, void *arg);
static void release(struct rex_loop *loop, void *arg);

/* A connection's own line, "server: connection 3 from ...: what", to stderr
 * in one write: its program's lines (tests, logs) start with who, too. */
static void say(const struct rex_aconn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct rex_aconn *c, const char *fmt, ...)
{
	char line[512];
	int n;
	va_list ap;

	n = snprintf(line, sizeof(line), "%s: %s: ", c->who, c->name);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail with this clock */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The connection a CQ's record belongs to: the record is inside it. */
static struct rex_aconn *conn_of_lcq(struct rex_loop_cq *lcq)
{
	return (struct rex_aconn *)(void *)((char *)lcq - offsetof(struct rex_aconn, lcq));
}

void rex_aconn_attr_default(struct rex_aconn_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->setup_timeout_ms = 15000;
	attr->idle_timeout_ms = 0;
	attr->drain_timeout_ms = 3000;
	attr->resolve_timeout_ms = 2000;
	attr->ack_timeout = 17;
	attr->retry_count = 6;
	attr->rnr_retry_count = 6;
	attr->min_rnr_timer = 12;
}

/* --- the devices and the CM channel ------------------------------------- */

void rex_aconn_devs_init(struct rex_aconn_devs *devs, struct rex_loop *loop, const char *who,
                         struct rdma_event_channel *channel, const struct rex_aconn_attr *attr,
                         rex_aconn_cm_fn cm_fn, void *cm_arg)
{
	memset(devs, 0, sizeof(*devs));
	devs->loop = loop;
	devs->who = who;
	devs->channel = channel;
	if (attr)
		devs->attr = *attr;
	else
		rex_aconn_attr_default(&devs->attr);
	devs->cm_fn = cm_fn;
	devs->cm_arg = cm_arg;
}

/* [cm-read] */
int rex_aconn_devs_read_cm(struct rex_aconn_devs *devs)
{
	uint64_t until = clock_ns() + (uint64_t)REX_ACONN_CM_BUDGET_MS * MS;
	struct rex_cm_event ev;
	int n, ret;

	/* Until the channel is empty, but within a budget of events and of
	 * time: a connect request creates a CQ, a QP and memory, and the
	 * completions of the connections already up must not wait behind a
	 * burst of them. What is left waits for the next round. */
	for (n = 0; n < REX_ACONN_CM_BUDGET; n++) {
		if (n > 0 && clock_ns() >= until)
			return 1;
		ret = rex_cm_next(devs->channel, &ev); /* copied and acknowledged */
		if (ret <= 0)
			return ret;
		/* Every event of every connection comes through this one channel;
		 * id->context says whose it is. A connect request's id is new. */
		if (ev.type != RDMA_CM_EVENT_CONNECT_REQUEST && ev.id && ev.id->context)
			rex_aconn_cm_event(ev.id->context, &ev);
		else
			devs->cm_fn(devs, &ev, devs->cm_arg);
	}
	return 1;
}
/* [cm-read] */

/* [devs-create] */
int rex_aconn_devs_create(struct rex_aconn_devs *devs, struct rex_loop *loop, const char *who,
                          const struct rex_aconn_attr *attr, rex_aconn_cm_fn cm_fn, void *cm_arg)
{
	struct rdma_event_channel *channel = rdma_create_event_channel();
	int ret;

	memset(devs, 0, sizeof(*devs));
	if (!channel) {
		ret = -errno;
		rex_report_errno("rdma_create_event_channel", errno);
		return ret;
	}
	/* Non-blocking: the loop reads it until EAGAIN, and never sleeps in it. */
	ret = rex_cm_channel_nonblocking(channel);
	if (ret)
		goto out_destroy_channel;
	rex_aconn_devs_init(devs, loop, who, channel, attr, cm_fn, cm_arg);
	ret = rex_aconn_devs_watch(devs);
	if (ret)
		goto out_destroy_channel;
	devs->own_channel = true;
	return 0;

out_destroy_channel:
	rdma_destroy_event_channel(channel);
	devs->channel = NULL;
	return ret;
}
/* [devs-create] */

int rex_aconn_devs_destroy(struct rex_aconn_devs *devs)
{
	int ret = -EBUSY;

	if (devs->watching_cm) {
		rex_loop_remove_fd(devs->loop, devs->channel->fd);
		devs->watching_cm = false;
	}
	/* A device still used by a connection cannot go: its PD is busy. */
	if (devs->conns == 0)
		ret = rex_aconn_devs_release(devs);
	if (devs->own_channel && devs->channel)
		rdma_destroy_event_channel(devs->channel);
	devs->channel = NULL;
	devs->own_channel = false;
	return ret;
}

/* [listen] */
int rex_aconn_listen(struct rex_aconn_devs *devs, const char *addr, uint16_t port, int backlog,
                     struct rdma_cm_id **listener)
{
	struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	                         .ai_family = AF_INET,
	                         .ai_socktype = SOCK_STREAM};
	struct addrinfo *res;
	struct rdma_cm_id *id = NULL;
	char service[8];
	int ret;

	snprintf(service, sizeof(service), "%u", (unsigned)port);
	ret = getaddrinfo(addr, service, &hints, &res);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s", addr ? addr : "(any)", gai_strerror(ret));
		return -EINVAL;
	}
	/* Chapter 01's listener, on the non-blocking channel: its connect
	 * requests are events of the loop. */
	if (rdma_create_id(devs->channel, &id, NULL, RDMA_PS_TCP)) {
		ret = -errno;
		rex_report_errno("rdma_create_id", errno);
		goto out_free;
	}
	if (rdma_bind_addr(id, res->ai_addr)) {
		ret = -errno;
		rex_report_errno("rdma_bind_addr", errno);
		goto out_destroy_id;
	}
	if (rdma_listen(id, backlog)) {
		ret = -errno;
		rex_report_errno("rdma_listen", errno);
		goto out_destroy_id;
	}
	*listener = id;
	goto out_free;

out_destroy_id:
	rdma_destroy_id(id);
out_free:
	freeaddrinfo(res);
	return ret;
}
/* [listen] */

static void cm_ready(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct rex_aconn_devs *devs = arg;

	(void)loop;
	(void)events;
	if (rex_aconn_devs_read_cm(devs) < 0) {
		/* The channel is broken: nothing more will come through it. Tell
		 * the program as an event of no id. */
		struct rex_cm_event ev = {.type = RDMA_CM_EVENT_DEVICE_REMOVAL, .status = -EIO};

		rex_loop_remove_fd(devs->loop, devs->channel->fd);
		devs->watching_cm = false;
		devs->cm_fn(devs, &ev, devs->cm_arg);
	}
}

int rex_aconn_devs_watch(struct rex_aconn_devs *devs)
{
	int ret = rex_loop_add_fd(devs->loop, devs->channel->fd, EPOLLIN, cm_ready, devs);

	if (ret == 0)
		devs->watching_cm = true;
	return ret;
}

/* Stop watching a device and release it; returns 0 or the first negative
 * errno (printed). */
static int device_release(struct rex_aconn_devs *devs, struct rex_aconn_dev *dev)
{
	int first = 0, ret;

	if (dev->watching_async)
		rex_loop_remove_fd(devs->loop, dev->verbs->async_fd);
	if (dev->watching_channel)
		rex_loop_remove_fd(devs->loop, dev->comp_channel->fd);
	/* The program's memory in the PD first (06: its pool). */
	if (devs->dev_release && dev->user)
		first = devs->dev_release(dev);
	/* EBUSY while a CQ still uses the channel. */
	if (dev->comp_channel) {
		ret = ibv_destroy_comp_channel(dev->comp_channel);
		if (ret) {
			rex_report_errno("ibv_destroy_comp_channel", ret);
			first = first ? first : -ret;
		}
	}
	/* EBUSY while a QP or a memory region still uses the PD. */
	if (dev->pd && !first) {
		ret = ibv_dealloc_pd(dev->pd);
		if (ret) {
			rex_report_errno("ibv_dealloc_pd", ret);
			first = -ret;
		}
	}
	free(dev);
	return first;
}

/* [device] */
struct rex_aconn_dev *rex_aconn_dev_get(struct rex_aconn_devs *devs, struct ibv_context *verbs)
{
	struct rex_aconn_dev *dev;
	int ret;

	for (dev = devs->first; dev; dev = dev->next)
		if (dev->verbs == verbs)
			return dev;
	/* First connection on this device: one PD for all its memory, one
	 * completion channel for all its CQs, and its asynchronous events;
	 * the loop watches both fds. */
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		rex_report_errno("calloc", errno);
		return NULL;
	}
	dev->verbs = verbs;
	dev->devs = devs;
	/* Its limits, asked once: every connection's queues are checked
	 * against them, without a system call per connection. */
	ret = ibv_query_device(verbs, &dev->attr); /* an errno value */
	if (ret) {
		rex_report_errno("ibv_query_device", ret);
		goto out_release;
	}
	dev->pd = ibv_alloc_pd(verbs);
	if (!dev->pd) {
		rex_report_errno("ibv_alloc_pd", errno);
		goto out_release;
	}
	dev->comp_channel = ibv_create_comp_channel(verbs);
	if (!dev->comp_channel) {
		rex_report_errno("ibv_create_comp_channel", errno);
		goto out_release;
	}
	if (rex_loop_add_comp_channel(devs->loop, dev->comp_channel))
		goto out_release;
	dev->watching_channel = true;
	if (rex_loop_add_async(devs->loop, verbs, rex_aconn_async_event, dev))
		goto out_release;
	dev->watching_async = true;
	dev->next = devs->first;
	devs->first = dev;
	return dev;

out_release:
	device_release(devs, dev);
	return NULL;
}
/* [device] */

int rex_aconn_devs_release(struct rex_aconn_devs *devs)
{
	struct rex_aconn_dev *dev, *next;
	int first = 0, ret;

	if (devs->watching_cm) {
		rex_loop_remove_fd(devs->loop, devs->channel->fd);
		devs->watching_cm = false;
	}
	for (dev = devs->first; dev; dev = next) {
		next = dev->next;
		ret = device_release(devs, dev);
		first = first ? first : ret;
	}
	devs->first = NULL;
	return first;
}

/* --- a connection's setup -------------------------------------------------- */

void rex_aconn_init(struct rex_aconn *c, struct rex_aconn_devs *devs, struct rdma_cm_id *id,
                    enum rex_state state, const struct rex_aconn_ops *ops)
{
	c->who = devs->who;
	c->devs = devs;
	c->loop = devs->loop;
	c->id = id;
	c->state = state;
	c->ops = ops;
	devs->conns++;
	/* Every CM event of this id will find its connection here. */
	id->context = c;
	rex_loop_timer_init(&c->deadline, on_deadline, c);
	rex_loop_task_init(&c->release, release, c);
	rex_loop_timer_start(c->loop, &c->deadline, devs->attr.setup_timeout_ms);
}

int rex_aconn_resolve(struct rex_aconn *c, struct sockaddr *addr)
{
	if (rdma_resolve_addr(c->id, NULL, addr, (int)c->devs->attr.resolve_timeout_ms)) {
		int err = errno;

		rex_report_errno("rdma_resolve_addr", err);
		return -err;
	}
	return 0;
}

/* [create-queues] */
int rex_aconn_create_queues(struct rex_aconn *c, struct rex_aconn_dev *dev, uint32_t sends,
                            uint32_t recvs, uint32_t max_inline, rex_loop_cq_fn poll)
{
	int cqe = (int)(sends + recvs); /* room for a completion of every work request */
	int ret;

	if (cqe > dev->attr.max_cqe || (int)sends > dev->attr.max_qp_wr ||
	    (int)recvs > dev->attr.max_qp_wr) {
		say(c,
		    "%u sends and %u receives exceed the device's limits (max_qp_wr %d, max_cqe "
		    "%d)",
		    sends, recvs, dev->attr.max_qp_wr, dev->attr.max_cqe);
		return -EINVAL;
	}
	c->dev = dev;
	c->dev_next = dev->conns;
	if (dev->conns)
		dev->conns->dev_prev = c;
	dev->conns = c;

	/* The CQ's context is its record for the loop, which finds the
	 * connection around it when the device's channel says "this CQ". */
	c->lcq.fn = poll;
	c->cq = ibv_create_cq(dev->verbs, cqe, &c->lcq, dev->comp_channel, 0);
	if (!c->cq) {
		ret = -errno;
		rex_report_errno("ibv_create_cq", errno);
		return ret;
	}
	c->lcq.cq = c->cq;
	ret = rex_loop_cq_arm(&c->lcq);
	if (ret)
		return ret;

	struct ibv_qp_init_attr attr = {
	    .qp_context = c, /* for the QP's asynchronous events */
	    .send_cq = c->cq,
	    .recv_cq = c->cq,
	    .qp_type = IBV_QPT_RC,
	    /* Selective signalling: a send completes silently unless flagged. */
	    .sq_sig_all = 0,
	    .cap = {.max_send_wr = sends,
	            .max_recv_wr = recvs,
	            .max_send_sge = 1,
	            .max_recv_sge = 1,
	            .max_inline_data = max_inline},
	};
	if (rdma_create_qp(c->id, dev->pd, &attr)) {
		ret = -errno;
		rex_report_errno("rdma_create_qp", errno);
		return ret;
	}
	c->qp = c->id->qp;
	return 0;
}
/* [create-queues] */

/* [transport] */
/* Our ACK timeout goes on the id before the QP reaches RTS (connect or
 * accept); the retry counts travel in the CM's messages, and each side's QP
 * takes the other side's. */
static int set_transport(struct rex_aconn *c, struct rdma_conn_param *param)
{
	uint8_t timeout = c->devs->attr.ack_timeout;

	param->retry_count = c->devs->attr.retry_count;
	param->rnr_retry_count = c->devs->attr.rnr_retry_count;
	if (timeout && rdma_set_option(c->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
	                               sizeof(timeout))) {
		int err = errno;

		rex_report_errno("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)", err);
		return -err;
	}
	return 0;
}

/* The minimum RNR timer is the receiver's: what our side tells a sender
 * to wait when no receive was posted. rdma_cm moves the QP to RTR with 0
 * (655 ms); a QP in RTS may change it. */
static int set_min_rnr_timer(struct rex_aconn *c)
{
	struct ibv_qp_attr attr = {.min_rnr_timer = c->devs->attr.min_rnr_timer};
	int ret;

	if (!c->qp || !attr.min_rnr_timer)
		return 0;
	ret = ibv_modify_qp(c->qp, &attr, IBV_QP_MIN_RNR_TIMER); /* an errno value */
	if (ret) {
		rex_report_errno("ibv_modify_qp(IBV_QP_MIN_RNR_TIMER)", ret);
		return -ret;
	}
	return 0;
}
/* [transport] */

int rex_aconn_connect(struct rex_aconn *c, struct rdma_conn_param *param)
{
	int ret = set_transport(c, param);

	if (ret)
		return ret;
	if (rdma_connect(c->id, param)) {
		ret = -errno;
		rex_report_errno("rdma_connect", errno);
		return ret;
	}
	c->active_side = true;
	return rex_aconn_set_state(c, REX_STATE_CONNECTING);
}

int rex_aconn_accept(struct rex_aconn *c, struct rdma_conn_param *param)
{
	int ret = set_transport(c, param);

	if (ret)
		return ret;
	/* The QP is in RTS once rdma_accept() returns (librdmacm moves it). */
	if (rdma_accept(c->id, param)) {
		ret = -errno;
		rex_report_errno("rdma_accept", errno);
		return ret;
	}
	return set_min_rnr_timer(c);
}

/* --- posting, counted ------------------------------------------------------ */

int rex_aconn_post_recv(struct rex_aconn *c, struct ibv_recv_wr *first)
{
	struct ibv_recv_wr *wr, *bad = NULL;
	int ret;

	for (wr = first; wr; wr = wr->next)
		wr->wr_id = rex_wr_id(REX_WR_RECV, rex_wr_id_slot(wr->wr_id));
	ret = ibv_post_recv(c->qp, first, &bad); /* an errno value */
	/* What was posted is outstanding: all, or those before bad. */
	for (wr = first; wr && wr != bad; wr = wr->next)
		c->recvs_posted++;
	if (ret) {
		rex_report_errno("ibv_post_recv", ret);
		return -ret;
	}
	return 0;
}

int rex_aconn_post_recvs(struct rex_aconn *c, const struct ibv_sge *sge, unsigned n)
{
	struct ibv_recv_wr wr[REX_ACONN_WC_BATCH];
	struct ibv_sge sges[REX_ACONN_WC_BATCH];
	unsigned i, k;
	int ret;

	while (n > 0) {
		k = n < REX_ACONN_WC_BATCH ? n : REX_ACONN_WC_BATCH;
		for (i = 0; i < k; i++) {
			if (sge)
				sges[i] = *sge;
			wr[i] = (struct ibv_recv_wr){.wr_id = 0,
			                             .sg_list = sge ? &sges[i] : NULL,
			                             .num_sge = sge ? 1 : 0,
			                             .next = i + 1 < k ? &wr[i + 1] : NULL};
		}
		/* One call for the chain: one doorbell, one lock. */
		ret = rex_aconn_post_recv(c, wr);
		if (ret)
			return ret;
		n -= k;
	}
	return 0;
}

int rex_aconn_post_send(struct rex_aconn *c, struct ibv_send_wr *first)
{
	struct ibv_send_wr *wr, *bad = NULL;
	uint64_t n = c->sq_posted;
	int ret;

	for (wr = first; wr; wr = wr->next)
		wr->wr_id = rex_wr_id(REX_WR_SEND, (uint32_t)++n);
	ret = ibv_post_send(c->qp, first, &bad); /* an errno value */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		/* What was not posted is not outstanding. */
		for (wr = first; wr && wr != bad; wr = wr->next)
			c->sq_posted++;
		return -ret;
	}
	c->sq_posted = n;
	return 0;
}

int rex_aconn_post_imm(struct rex_aconn *c, uint32_t imm)
{
	struct ibv_send_wr wr = {
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = htobe32(imm),
	};

	return rex_aconn_post_send(c, &wr);
}

uint64_t rex_aconn_send_number(const struct rex_aconn *c, uint64_t wr_id)
{
	/* The wr_id holds the low 32 bits; the sends outstanding are far fewer
	 * than 2^31, so the number is the one at most that far below sq_posted. */
	uint32_t behind = (uint32_t)c->sq_posted - rex_wr_id_slot(wr_id);

	return c->sq_posted - behind;
}

/* --- the state, and the end ------------------------------------------------ */

int rex_aconn_set_state(struct rex_aconn *c, enum rex_state to)
{
	enum rex_state from = c->state;

	if (rex_state_change(&c->state, to)) {
		say(c, "bug: %s -> %s refused", rex_state_name(from), rex_state_name(to));
		return -EPERM;
	}
	return 0;
}

/* DRAINING is over: nothing outstanding (or nothing that can still
 * complete), and no answer to our disconnect awaited. */
static bool drained(const struct rex_aconn *c)
{
	return c->state == REX_STATE_DRAINING &&
	       ((c->sq_done >= c->sq_posted && c->recvs_posted == 0) || c->cq_dead) &&
	       !c->await_disconnect;
}

/* Post the release once DRAINING is over. */
static void check_drained(struct rex_aconn *c)
{
	if (drained(c))
		rex_loop_post(c->loop, &c->release);
}

/* [drain-marker] */
/* The QP is in the error state (moved there now when move is true): what is posted
 * flushes, and a signalled marker makes sure a completion comes after the
 * last send, signalled or not. */
static void stop_qp(struct rex_aconn *c, bool move)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
	struct ibv_send_wr marker = {.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;
	int ret;

	if (!c->qp)
		return;
	if (move) {
		ret = ibv_modify_qp(c->qp, &attr, IBV_QP_STATE); /* an errno value */
		if (ret) {
			rex_report_errno("ibv_modify_qp", ret);
			c->cq_dead = true; /* nothing will flush: do not wait for it */
			return;
		}
	}
	if (c->sq_done >= c->sq_posted)
		return;
	marker.wr_id = rex_wr_id(REX_WR_MARKER, (uint32_t)(c->sq_posted + 1));
	ret = ibv_post_send(c->qp, &marker, &bad);
	if (ret == 0)
		c->sq_posted++;
	else
		c->sq_done = c->sq_posted; /* nothing to wait for then; the QP goes first */
}
/* [drain-marker] */

static void start_draining(struct rex_aconn *c)
{
	rex_loop_timer_start(c->loop, &c->deadline, c->devs->attr.drain_timeout_ms);
	check_drained(c);
}

/* [close] */
void rex_aconn_close(struct rex_aconn *c, bool failed)
{
	enum rex_state was = c->state;

	c->failed |= failed;
	if (was == REX_STATE_DRAINING || was == REX_STATE_CLOSED)
		return; /* closing already: one path ends a connection */
	if (rex_aconn_set_state(c, REX_STATE_DRAINING))
		return;
	if (was == REX_STATE_ESTABLISHED && rdma_disconnect(c->id) == 0) {
		/* The peer gets a disconnect request and our QP is in the error
		 * state; the peer's answer comes as DISCONNECTED. */
		c->await_disconnect = true;
		stop_qp(c, false);
	} else {
		if (was == REX_STATE_ESTABLISHED)
			rex_report_errno("rdma_disconnect", errno);
		/* Not connected (yet): no disconnect to send. Destroying the id
		 * later tells the peer (a reject). */
		stop_qp(c, true);
	}
	/* Buffers stay the device's until their work requests complete,
	 * flushed: wait for that, within the drain deadline. */
	start_draining(c);
}
/* [close] */

void rex_aconn_take_completions(struct rex_aconn *c)
{
	if (c->cq && !c->cq_dead && c->lcq.fn)
		c->lcq.fn(c->loop, &c->lcq);
}

/* [disconnected] */
/* The peer's DISCONNECTED: its request, or its answer to ours. */
static void disconnected(struct rex_aconn *c)
{
	bool expected;

	if (c->await_disconnect) {
		c->await_disconnect = false; /* the answer to ours */
		check_drained(c);
		return;
	}
	/* [peer-request] */
	/* The peer's request. Its last messages may still sit in our CQ, on
	 * another channel: take them before deciding what its leaving means. */
	rex_aconn_take_completions(c);
	/* The program closed it while taking them: its rdma_disconnect()
	 * answered the peer's request, and no other DISCONNECTED will come. */
	if (c->await_disconnect) {
		c->await_disconnect = false;
		check_drained(c);
		return;
	}
	if (c->state == REX_STATE_ESTABLISHED) {
		expected = c->ops->peer_left && c->ops->peer_left(c);
		c->failed |= !expected;
		c->peer_ended = expected;
	}
	/* Nothing answers the peer's request until we call rdma_disconnect()
	 * (or destroy the id), and the peer waits for that answer. It also
	 * moves our QP to the error state. */
	if (rdma_disconnect(c->id))
		rex_report_errno("rdma_disconnect", errno);
	if (c->state != REX_STATE_DRAINING && c->state != REX_STATE_CLOSED) {
		rex_aconn_set_state(c, REX_STATE_DRAINING);
		stop_qp(c, true); /* flushes all the same if rdma_disconnect() failed */
		start_draining(c);
	}
	check_drained(c);
	/* [peer-request] */
}
/* [disconnected] */

/* ESTABLISHED: the transport's last setting, the deadline, the program. */
static int established(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	int ret = rex_aconn_set_state(c, REX_STATE_ESTABLISHED);

	if (ret)
		return ret;
	/* A client's QP reached RTS just now (a server's did in rdma_accept()). */
	if (c->active_side) {
		ret = set_min_rnr_timer(c);
		if (ret)
			return ret;
	}
	c->active_ns = clock_ns();
	if (c->devs->attr.idle_timeout_ms)
		rex_loop_timer_start(c->loop, &c->deadline, c->devs->attr.idle_timeout_ms);
	else
		rex_loop_timer_cancel(c->loop, &c->deadline);
	return c->ops->established ? c->ops->established(c, ev) : 0;
}

/* [cm-event] */
/* [cm-event-main] */
void rex_aconn_cm_event(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	int ret = 0;

	if ((c->state == REX_STATE_DRAINING || c->state == REX_STATE_CLOSED) &&
	    ev->type != RDMA_CM_EVENT_DISCONNECTED)
		return; /* closing already: what else comes changes nothing */
	switch (ev->type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(c->id, (int)c->devs->attr.resolve_timeout_ms)) {
			rex_report_errno("rdma_resolve_route", errno);
			ret = -EIO;
		}
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		ret = c->ops->route_resolved ? c->ops->route_resolved(c) : -EINVAL;
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		ret = established(c, ev);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		disconnected(c);
		break;
	case RDMA_CM_EVENT_REJECTED:
		say(c, "rejected (status %d: %s)", ev->status, rex_cm_reject_reason(ev->status));
		ret = -ECONNREFUSED;
		break;
		/* [cm-event-main] */
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		say(c, "%s (status %d)", rdma_event_str(ev->type), ev->status);
		ret = -EIO;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		say(c, "its device went away");
		c->cq_dead = true;
		ret = -ENODEV;
		break;
	default:
		break; /* TIMEWAIT_EXIT, ADDR_CHANGE...: nothing to do */
	}
	if (ret) {
		if (c->ops->cm_failed)
			c->ops->cm_failed(c, ev);
		rex_aconn_close(c, true);
		check_drained(c);
	}
}
/* [cm-event] */

/* --- completions ----------------------------------------------------------- */

/* [poll] */
/* iWARP ends a connection in the kernel: the peer's close (its TCP FIN or
 * TERMINATE) moves our QP to the error state before rdma_cm reports
 * DISCONNECTED, so our posted work flushes first. InfiniBand and RoCE leave
 * the QP up until our own rdma_disconnect(). Such a flush is the peer
 * leaving, to be judged when its DISCONNECTED comes (disconnected()). */
static bool flushed_by_peer_close(struct rex_aconn *c, const struct ibv_wc *wc)
{
	if (wc->status != IBV_WC_WR_FLUSH_ERR || c->state != REX_STATE_ESTABLISHED ||
	    c->id->verbs->device->transport_type != IBV_TRANSPORT_IWARP)
		return false;
	if (!c->peer_closing) {
		c->peer_closing = true;
		rex_loop_timer_start(c->loop, &c->deadline, c->devs->attr.drain_timeout_ms);
	}
	return true;
}

static void refuse_late(struct rex_aconn *c, const struct ibv_wc *wc)
{
	char what[96];

	rex_format_wc_brief(what, sizeof(what), wc);
	if (!c->failed)
		say(c, "the peer sent after it disconnected: %s", what);
	c->failed = true;
}

int rex_aconn_poll(struct rex_aconn *c, struct ibv_wc *wc, int max, int *taken)
{
	bool closing = c->state == REX_STATE_DRAINING || c->state == REX_STATE_CLOSED;
	int n, i, good = 0;
	uint64_t number;
	uint32_t kind;

	*taken = 0;
	if (c->lcq.error && !closing) {
		/* The loop could not arm the CQ again: it will not wake us for
		 * this connection any more. Close it while we are here. */
		say(c, "its CQ cannot be armed (%s): closing it", strerror(-c->lcq.error));
		rex_aconn_close(c, true);
		closing = true;
	}
	n = ibv_poll_cq(c->cq, max, wc);
	if (n <= 0) {
		if (n < 0) {
			say(c, "ibv_poll_cq failed (%d)", n);
			c->cq_dead = true;
			rex_aconn_close(c, true);
			check_drained(c);
		}
		return 0;
	}
	*taken = n;
	/* The clock now, not when the round began: a long round must not make
	 * the idle deadline look closer than it is. */
	c->active_ns = clock_ns();
	for (i = 0; i < n; i++) {
		/* The books: a receive is one; a send's number covers every
		 * send before it, signalled or not. */
		kind = rex_wr_id_kind(wc[i].wr_id);
		if (kind == REX_WR_RECV) {
			c->recvs_posted--;
		} else {
			number = rex_aconn_send_number(c, wc[i].wr_id);
			if (number > c->sq_done)
				c->sq_done = number;
			if (kind == REX_WR_MARKER)
				continue; /* ours: nothing for the program */
		}
		if (wc[i].status == IBV_WC_SUCCESS && !closing) {
			wc[good++] = wc[i]; /* for the program to act on */
			continue;
		}
		/* A message the peer sent after its last word: the session ended
		 * at its disconnect, and this was never read. */
		if (closing && c->peer_ended && kind == REX_WR_RECV &&
		    wc[i].status == IBV_WC_SUCCESS) {
			refuse_late(c, &wc[i]);
			continue;
		}
		if (!closing && flushed_by_peer_close(c, &wc[i]))
			continue;
		/* A flush is how a stopped QP hands its work requests back: the
		 * expected end of a closing connection, not an error. */
		if (closing &&
		    (wc[i].status == IBV_WC_WR_FLUSH_ERR || wc[i].status == IBV_WC_SUCCESS))
			continue;
		rex_report_wc(kind == REX_WR_RECV ? "receive" : "send", &wc[i]);
		say(c, "closing it");
		rex_aconn_close(c, true);
		closing = true;
	}
	if (closing)
		check_drained(c);
	return good;
}
/* [poll] */

/* --- deadlines and the release --------------------------------------------- */

/* Before a deadline calls a connection dead or late: what has arrived and
 * the loop has not read yet (a burst of CM events left for the next round,
 * a CQ event behind others) is taken now. */
static void catch_up(struct rex_aconn *c)
{
	rex_aconn_take_completions(c);
	if (c->state != REX_STATE_CLOSED && c->devs->watching_cm)
		rex_aconn_devs_read_cm(c->devs);
}

/* [deadline] */
static void on_deadline(struct rex_loop *loop, void *arg)
{
	struct rex_aconn *c = arg;
	const struct rex_aconn_attr *a = &c->devs->attr;
	uint64_t idle_until, now;

	catch_up(c); /* may change the state, or rearm this very timer */
	if (rex_loop_timer_armed(&c->deadline))
		return;
	if (c->state == REX_STATE_ESTABLISHED && c->peer_closing) {
		say(c, "its QP was flushed (iWARP: the peer closed) and no DISCONNECTED came "
		       "within %u ms: closing it",
		    a->drain_timeout_ms);
		rex_aconn_close(c, true);
		return;
	}
	switch (c->state) {
	case REX_STATE_RESOLVING:
	case REX_STATE_CONNECTING:
		say(c, "not established within %u ms: closing it", a->setup_timeout_ms);
		rex_aconn_close(c, true);
		break;
	/* [deadline-idle] */
	case REX_STATE_ESTABLISHED:
		if (!a->idle_timeout_ms)
			break;
		/* Completions only stamp the time; the deadline moves here,
		 * once per idle period, not once per completion. */
		idle_until = c->active_ns + (uint64_t)a->idle_timeout_ms * MS;
		now = rex_loop_now_ns(loop);
		if (idle_until > now) {
			rex_loop_timer_start_at(loop, &c->deadline, idle_until);
			break;
		}
		say(c, "nothing for %u ms: dropping it", a->idle_timeout_ms);
		rex_aconn_close(c, true);
		break;
	case REX_STATE_DRAINING:
		if (drained(c))
			break; /* drained in this very round: its release is posted */
		say(c,
		    "still draining after %u ms (%llu work requests outstanding%s): "
		    "releasing it, its QP first",
		    a->drain_timeout_ms,
		    (unsigned long long)(c->recvs_posted + (c->sq_posted - c->sq_done)),
		    c->await_disconnect ? ", no answer to our disconnect" : "");
		c->drain_cut = true; /* the program decides whether that is a failure */
		rex_loop_post(loop, &c->release);
		/* [deadline-idle] */
		break;
	case REX_STATE_CLOSED:
		break;
	}
}
/* [deadline] */

/* [release] */
/* [release-qp] */
static void release(struct rex_loop *loop, void *arg)
{
	struct rex_aconn *c = arg;
	int ret;

	rex_loop_timer_cancel(loop, &c->deadline);
	rex_aconn_set_state(c, REX_STATE_CLOSED);
	/* What the program tied to the QP (memory windows) goes before it. */
	if (c->ops->releasing)
		c->ops->releasing(c);
	/* The QP first: once it is gone the device touches none of the
	 * connection's memory, even if a drain was cut short. */
	if (c->qp)
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	if (c->cq) {
		rex_loop_cq_ack(&c->lcq); /* ibv_destroy_cq() waits for every ack */
		ret = ibv_destroy_cq(c->cq);
		if (ret) {
			rex_report_errno("ibv_destroy_cq", ret);
			c->failed = true;
		}
	}
	c->cq = NULL;
	/* [release-qp] */
	if (c->dev) {
		if (c->dev_prev)
			c->dev_prev->dev_next = c->dev_next;
		else
			c->dev->conns = c->dev_next;
		if (c->dev_next)
			c->dev_next->dev_prev = c->dev_prev;
	}
	/* Destroying the id discards its events still queued in the kernel;
	 * those we took are acknowledged already. */
	if (rdma_destroy_id(c->id)) {
		rex_report_errno("rdma_destroy_id", errno);
		c->failed = true;
	}
	c->id = NULL;
	c->devs->conns--;
	/* The program's buffers, and its structure: nothing uses them now. */
	c->ops->released(c);
}
/* [release] */

/* --- device events --------------------------------------------------------- */

/* [async-event] */
void rex_aconn_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg)
{
	struct rex_aconn_dev *dev = arg;
	const char *who = dev->devs->who;
	const char *name = ibv_event_type_str(event->event_type);
	struct rex_aconn *c, *next;

	(void)loop;
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		/* The QP is in the error state already: its work flushes. */
		c = event->element.qp->qp_context;
		say(c, "%s: closing it", name);
		rex_aconn_close(c, true);
		break;
	case IBV_EVENT_CQ_ERR:
		/* The CQ overran and is dead: no flush will ever come out of it. */
		c = conn_of_lcq(event->element.cq->cq_context);
		say(c, "%s: closing it", name);
		c->cq_dead = true;
		rex_aconn_close(c, true);
		check_drained(c);
		break;
	case IBV_EVENT_COMM_EST:
		/* A message came before the CM's ESTABLISHED (a server may see the
		 * client's first message first): the CM event follows. */
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		break;
	case IBV_EVENT_PORT_ERR:
		rex_errorf("%s: %s: port %d: its connections will fail", who, name,
		           event->element.port_num);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		/* Nothing on this device works any more, nothing will flush. */
		rex_errorf("%s: %s on %s: closing its connections", who, name,
		           ibv_get_device_name(dev->verbs->device));
		for (c = dev->conns; c; c = next) {
			next = c->dev_next;
			c->cq_dead = true;
			rex_aconn_close(c, true);
			check_drained(c);
		}
		break;
	default:
		rex_errorf("%s: %s on %s", who, name, ibv_get_device_name(dev->verbs->device));
		break;
	}
}
/* [async-event] */
