/* SPDX-License-Identifier: MIT */
/*
 * bench_conn.c: the benchmark's connections on chapter 05's event loop (see
 * bench_conn.h; 05-async/conn.c is the original, commented at length).
 */
#include "bench_conn.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_error.h"

static void on_deadline(struct rex_loop *loop, void *arg);
static void release(struct rex_loop *loop, void *arg);

void bc_conn_init(struct bc_conn *c, struct rex_loop *loop, const char *who, struct rdma_cm_id *id,
                  enum rex_state state, void (*released)(struct bc_conn *))
{
	c->who = who;
	c->loop = loop;
	c->id = id;
	c->state = state;
	c->released = released;
	id->context = c;
	rex_loop_timer_init(&c->deadline, on_deadline, c);
	rex_loop_task_init(&c->release, release, c);
	rex_loop_timer_start(loop, &c->deadline, BC_SETUP_TIMEOUT_MS);
}

int bc_cm_next(struct rdma_event_channel *channel, struct rex_cm_event *out)
{
	struct rdma_cm_event *event;
	const struct rdma_conn_param *conn;
	int err;

	if (rdma_get_cm_event(channel, &event)) {
		err = errno;
		if (err == EAGAIN || err == EWOULDBLOCK)
			return 0;
		rex_report_errno("rdma_get_cm_event", err);
		return -err;
	}
	/* Copy what we use, then acknowledge at once (05's as_cm_next()). */
	memset(out, 0, sizeof(*out));
	out->type = event->event;
	out->status = event->status;
	out->id = event->id;
	conn = &event->param.conn;
	out->initiator_depth = conn->initiator_depth;
	out->responder_resources = conn->responder_resources;
	if (event->id->qp_type != IBV_QPT_UD && conn->private_data && conn->private_data_len) {
		out->private_data_len = conn->private_data_len;
		memcpy(out->private_data, conn->private_data, out->private_data_len);
	}
	if (rdma_ack_cm_event(event)) {
		err = errno;
		rex_report_errno("rdma_ack_cm_event", err);
		return -err;
	}
	return 1;
}

static int device_release(struct rex_loop *loop, struct bc_device *dev)
{
	int first = 0, ret;

	/* -EBUSY while a buffer is out: a connection was not released. */
	if (dev->pool) {
		ret = rex_pool_destroy(dev->pool);
		first = ret;
	}
	if (dev->watching_async)
		rex_loop_remove_fd(loop, dev->verbs->async_fd);
	if (dev->watching_channel)
		rex_loop_remove_fd(loop, dev->comp_channel->fd);
	if (dev->comp_channel) {
		ret = ibv_destroy_comp_channel(dev->comp_channel);
		if (ret) {
			rex_report_errno("ibv_destroy_comp_channel", ret);
			first = first ? first : -ret;
		}
	}
	if (dev->pd && !first) { /* a pool still registered keeps its PD */
		ret = ibv_dealloc_pd(dev->pd);
		if (ret) {
			rex_report_errno("ibv_dealloc_pd", ret);
			first = -ret;
		}
	}
	free(dev);
	return first;
}

struct bc_device *bc_device_get(struct bc_devices *devs, struct ibv_context *verbs)
{
	struct bc_device *dev;
	int ret;

	for (dev = devs->first; dev; dev = dev->next)
		if (dev->verbs == verbs)
			return dev;
	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		rex_report_errno("calloc", errno);
		return NULL;
	}
	dev->verbs = verbs;
	dev->who = devs->who;
	ret = ibv_query_device(verbs, &dev->attr);
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
	if (rex_loop_add_async(devs->loop, verbs, bc_async_event, dev))
		goto out_release;
	dev->watching_async = true;
	dev->next = devs->first;
	devs->first = dev;
	return dev;

out_release:
	device_release(devs->loop, dev);
	return NULL;
}

int bc_devices_release(struct bc_devices *devs)
{
	struct bc_device *dev, *next;
	int first = 0, ret;

	for (dev = devs->first; dev; dev = next) {
		next = dev->next;
		ret = device_release(devs->loop, dev);
		first = first ? first : ret;
	}
	devs->first = NULL;
	return first;
}

/* [create-queues] */
int bc_conn_create_queues(struct bc_conn *c, struct bc_device *dev, uint32_t sends, uint32_t recvs,
                          uint32_t max_inline, rex_loop_cq_fn poll)
{
	int cqe = (int)(sends + recvs);
	int ret;

	if (cqe > dev->attr.max_cqe || (int)sends > dev->attr.max_qp_wr ||
	    (int)recvs > dev->attr.max_qp_wr) {
		fprintf(stderr,
		        "%s: %s: %u sends and %u receives exceed the device's limits "
		        "(max_qp_wr %d, max_cqe %d)\n",
		        c->who, c->name, sends, recvs, dev->attr.max_qp_wr, dev->attr.max_cqe);
		return -EINVAL;
	}
	c->dev = dev;
	c->dev_next = dev->conns;
	if (dev->conns)
		dev->conns->dev_prev = c;
	dev->conns = c;

	rex_loop_cq_init(&c->lcq, poll, c);
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
	    .qp_context = c,
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

int bc_conn_post_recvs(struct bc_conn *c, const struct ibv_sge *sge, unsigned n)
{
	struct ibv_recv_wr wr[BC_WC_BATCH], *bad;
	struct ibv_sge sges[BC_WC_BATCH];
	unsigned i, k;
	int ret;

	while (n > 0) {
		k = n < BC_WC_BATCH ? n : BC_WC_BATCH;
		for (i = 0; i < k; i++) {
			if (sge)
				sges[i] = *sge;
			wr[i] = (struct ibv_recv_wr){.wr_id = bc_wr_id(BC_WR_RECV, 0),
			                             .sg_list = sge ? &sges[i] : NULL,
			                             .num_sge = sge ? 1 : 0,
			                             .next = i + 1 < k ? &wr[i + 1] : NULL};
		}
		/* One call for the chain: one doorbell, one lock. */
		ret = ibv_post_recv(c->qp, wr, &bad);
		if (ret) {
			rex_report_errno("ibv_post_recv", ret);
			c->recvs_posted += (unsigned)(bad - wr);
			return -ret;
		}
		c->recvs_posted += k;
		n -= k;
	}
	return 0;
}

int bc_conn_post_chain(struct bc_conn *c, struct ibv_send_wr *first)
{
	struct ibv_send_wr *bad;
	int ret = ibv_post_send(c->qp, first, &bad); /* an errno value */

	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		/* What was not posted is not outstanding. */
		c->sq_posted = bc_wr_seq(bad->wr_id) - 1;
		return -ret;
	}
	return 0;
}

int bc_conn_post_ctrl(struct bc_conn *c, uint32_t imm)
{
	struct ibv_send_wr wr = {
	    .wr_id = bc_conn_number(c),
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = htobe32(imm),
	};

	return bc_conn_post_chain(c, &wr);
}

int bc_conn_set_state(struct bc_conn *c, enum rex_state to)
{
	enum rex_state from = c->state;

	if (rex_state_change(&c->state, to)) {
		fprintf(stderr, "%s: bug: %s: %s -> %s refused\n", c->who, c->name,
		        rex_state_name(from), rex_state_name(to));
		return -EPERM;
	}
	return 0;
}

int bc_conn_established(struct bc_conn *c)
{
	int ret = bc_conn_set_state(c, REX_STATE_ESTABLISHED);

	if (ret)
		return ret;
	/* No idle deadline: a benchmark's control phases have their own. */
	rex_loop_timer_cancel(c->loop, &c->deadline);
	return 0;
}

static bool drained(const struct bc_conn *c)
{
	return c->state == REX_STATE_DRAINING &&
	       ((c->sq_done >= c->sq_posted && c->recvs_posted == 0) || c->cq_dead) &&
	       !c->await_disconnect;
}

static void check_drained(struct bc_conn *c)
{
	if (drained(c))
		rex_loop_post(c->loop, &c->release);
}

/* [drain-marker] */
/* The QP is in the error state: flush what is posted, and make sure a
 * completion comes after the last send, signalled or not. */
static void stop_qp(struct bc_conn *c, bool move)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
	struct ibv_send_wr marker = {.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED}, *bad;
	int ret;

	if (!c->qp)
		return;
	if (move) {
		ret = ibv_modify_qp(c->qp, &attr, IBV_QP_STATE);
		if (ret) {
			rex_report_errno("ibv_modify_qp", ret);
			c->cq_dead = true;
			return;
		}
	}
	if (c->sq_done >= c->sq_posted)
		return;
	marker.wr_id = bc_wr_id(BC_WR_MARKER, c->sq_posted + 1);
	ret = ibv_post_send(c->qp, &marker, &bad);
	if (ret == 0)
		c->sq_posted++;
	else
		c->sq_done = c->sq_posted; /* nothing to wait for then; the QP goes first */
}
/* [drain-marker] */

void bc_conn_close(struct bc_conn *c, bool failed)
{
	enum rex_state was = c->state;

	c->failed |= failed;
	if (was == REX_STATE_DRAINING || was == REX_STATE_CLOSED)
		return;
	if (bc_conn_set_state(c, REX_STATE_DRAINING))
		return;
	if (was == REX_STATE_ESTABLISHED && rdma_disconnect(c->id) == 0) {
		c->await_disconnect = true;
		stop_qp(c, false); /* rdma_disconnect() moved it to the error state */
	} else {
		if (was == REX_STATE_ESTABLISHED)
			rex_report_errno("rdma_disconnect", errno);
		stop_qp(c, true);
	}
	rex_loop_timer_start(c->loop, &c->deadline, BC_DRAIN_TIMEOUT_MS);
	check_drained(c);
}

void bc_conn_take_completions(struct bc_conn *c)
{
	if (c->cq && !c->cq_dead)
		c->lcq.fn(c->loop, &c->lcq);
}

void bc_conn_disconnected(struct bc_conn *c)
{
	if (c->await_disconnect) {
		c->await_disconnect = false;
		check_drained(c);
		return;
	}
	if (rdma_disconnect(c->id))
		rex_report_errno("rdma_disconnect", errno);
	if (c->state != REX_STATE_DRAINING && c->state != REX_STATE_CLOSED) {
		bc_conn_set_state(c, REX_STATE_DRAINING);
		stop_qp(c, true);
		rex_loop_timer_start(c->loop, &c->deadline, BC_DRAIN_TIMEOUT_MS);
	}
	check_drained(c);
}

/* [poll] */
int bc_conn_poll(struct bc_conn *c, struct ibv_wc *wc, int max, int *taken)
{
	int n, i, good = 0;
	bool closing = c->state == REX_STATE_DRAINING || c->state == REX_STATE_CLOSED;

	*taken = 0;
	n = ibv_poll_cq(c->cq, max, wc);
	if (n <= 0) {
		if (n < 0) {
			fprintf(stderr, "%s: %s: ibv_poll_cq failed (%d)\n", c->who, c->name, n);
			c->cq_dead = true;
			bc_conn_close(c, true);
			check_drained(c);
		}
		return 0;
	}
	*taken = n;
	for (i = 0; i < n; i++) {
		/* The books: a send's number covers every send before it. */
		if (bc_wr_kind(wc[i].wr_id) == BC_WR_RECV) {
			c->recvs_posted--;
		} else if (bc_wr_seq(wc[i].wr_id) > c->sq_done) {
			c->sq_done = bc_wr_seq(wc[i].wr_id);
		}
		if (wc[i].status == IBV_WC_SUCCESS && !closing) {
			wc[good++] = wc[i];
			continue;
		}
		if (closing &&
		    (wc[i].status == IBV_WC_WR_FLUSH_ERR || wc[i].status == IBV_WC_SUCCESS))
			continue;
		rex_report_wc(bc_wr_kind(wc[i].wr_id) == BC_WR_RECV ? "receive" : "send", &wc[i]);
		fprintf(stderr, "%s: %s: closing it\n", c->who, c->name);
		bc_conn_close(c, true);
		closing = true;
	}
	if (closing)
		check_drained(c);
	return good;
}
/* [poll] */

static void on_deadline(struct rex_loop *loop, void *arg)
{
	struct bc_conn *c = arg;

	switch (c->state) {
	case REX_STATE_RESOLVING:
	case REX_STATE_CONNECTING:
		fprintf(stderr, "%s: %s: not established within %d ms: closing it\n", c->who,
		        c->name, BC_SETUP_TIMEOUT_MS);
		bc_conn_close(c, true);
		break;
	case REX_STATE_DRAINING:
		if (drained(c))
			break;
		fprintf(stderr,
		        "%s: %s: still draining after %d ms (%u receives, %llu sends "
		        "outstanding%s): releasing it, its QP first\n",
		        c->who, c->name, BC_DRAIN_TIMEOUT_MS, c->recvs_posted,
		        (unsigned long long)(c->sq_posted - c->sq_done),
		        c->await_disconnect ? ", no answer to our disconnect" : "");
		c->drain_cut = true;
		rex_loop_post(loop, &c->release);
		break;
	default:
		break;
	}
}

/* [release] */
static void release(struct rex_loop *loop, void *arg)
{
	struct bc_conn *c = arg;
	int ret;

	rex_loop_timer_cancel(loop, &c->deadline);
	bc_conn_set_state(c, REX_STATE_CLOSED);
	/* The QP first: once it is gone the device touches none of its memory. */
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->cq) {
		rex_loop_cq_ack(&c->lcq);
		ret = ibv_destroy_cq(c->cq);
		if (ret) {
			rex_report_errno("ibv_destroy_cq", ret);
			c->failed = true;
		}
	}
	/* The pool buffer goes back only now: no work request can use it. */
	if (c->buf)
		rex_pool_put(c->pool, c->buf);
	c->buf = NULL;
	if (c->dev) {
		if (c->dev_prev)
			c->dev_prev->dev_next = c->dev_next;
		else
			c->dev->conns = c->dev_next;
		if (c->dev_next)
			c->dev_next->dev_prev = c->dev_prev;
	}
	if (rdma_destroy_id(c->id)) {
		rex_report_errno("rdma_destroy_id", errno);
		c->failed = true;
	}
	c->released(c);
}
/* [release] */

void bc_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg)
{
	struct bc_device *dev = arg;
	const char *name = ibv_event_type_str(event->event_type);
	struct rex_loop_cq *lcq;
	struct bc_conn *c, *next;

	(void)loop;
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		c = event->element.qp->qp_context;
		fprintf(stderr, "%s: %s: %s: closing it\n", dev->who, c->name, name);
		bc_conn_close(c, true);
		break;
	case IBV_EVENT_CQ_ERR:
		lcq = event->element.cq->cq_context;
		c = lcq->arg;
		fprintf(stderr, "%s: %s: %s: closing it\n", dev->who, c->name, name);
		c->cq_dead = true;
		bc_conn_close(c, true);
		check_drained(c);
		break;
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		break;
	case IBV_EVENT_DEVICE_FATAL:
		fprintf(stderr, "%s: %s on %s: closing its connections\n", dev->who, name,
		        ibv_get_device_name(dev->verbs->device));
		for (c = dev->conns; c; c = next) {
			next = c->dev_next;
			c->cq_dead = true;
			bc_conn_close(c, true);
			check_drained(c);
		}
		break;
	default:
		fprintf(stderr, "%s: %s on %s\n", dev->who, name,
		        ibv_get_device_name(dev->verbs->device));
		break;
	}
}
