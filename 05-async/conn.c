/* SPDX-License-Identifier: MIT */
/*
 * conn.c: a connection driven by chapter 05's event loop, shared by its
 * server and client (see conn.h). Nothing here blocks: every CM call
 * returns at once and its outcome arrives later as an event, every
 * completion arrives through the loop, and a connection's end waits for
 * its flushed work requests in the loop too.
 */
#include "conn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_error.h"

#define MS 1000000u /* nanoseconds */

_Static_assert(REX_CM_PRIVATE_DATA_MAX > UINT8_MAX, "any private data length fits the copy");

static void on_deadline(struct rex_loop *loop, void *arg);
static void release(struct rex_loop *loop, void *arg);

void as_conn_init(struct as_conn *c, struct rex_loop *loop, const char *who, struct rdma_cm_id *id,
                  enum rex_state state, void (*released)(struct as_conn *))
{
	c->who = who;
	c->loop = loop;
	c->id = id;
	c->state = state;
	c->released = released;
	/* Every CM event of this id will find its connection here. */
	id->context = c;
	rex_loop_timer_init(&c->deadline, on_deadline, c);
	rex_loop_task_init(&c->release, release, c);
	rex_loop_timer_start(loop, &c->deadline, AS_SETUP_TIMEOUT_MS);
}

/* [cm-next] */
int as_cm_next(struct rdma_event_channel *channel, struct rex_cm_event *out)
{
	struct rdma_cm_event *event;
	const struct rdma_conn_param *conn;
	int err;

	/* The channel's fd is non-blocking: no event means EAGAIN, not a sleep. */
	if (rdma_get_cm_event(channel, &event)) {
		err = errno;
		if (err == EAGAIN || err == EWOULDBLOCK)
			return 0;
		rex_report_errno("rdma_get_cm_event", err);
		return -err;
	}
	/* Copy what we use, then acknowledge at once: rdma_destroy_id() waits
	 * for every event of its id to be acknowledged, and the connection may
	 * want to destroy its id while it handles this very event. */
	memset(out, 0, sizeof(*out));
	out->type = event->event;
	out->status = event->status;
	out->id = event->id;
	conn = &event->param.conn;
	if (event->id->qp_type != IBV_QPT_UD && conn->private_data && conn->private_data_len) {
		out->private_data_len = conn->private_data_len; /* a uint8_t: it fits */
		memcpy(out->private_data, conn->private_data, out->private_data_len);
	}
	if (rdma_ack_cm_event(event)) {
		err = errno;
		rex_report_errno("rdma_ack_cm_event", err);
		return -err;
	}
	return 1;
}
/* [cm-next] */

/* Stop watching a device and release it; returns 0 or the first negative
 * errno (printed). */
static int device_release(struct rex_loop *loop, struct as_device *dev)
{
	int first = 0, ret;

	if (dev->watching_async)
		rex_loop_remove_fd(loop, dev->verbs->async_fd);
	if (dev->watching_channel)
		rex_loop_remove_fd(loop, dev->comp_channel->fd);
	/* EBUSY while a CQ still uses the channel. */
	if (dev->comp_channel) {
		ret = ibv_destroy_comp_channel(dev->comp_channel);
		if (ret) {
			rex_report_errno("ibv_destroy_comp_channel", ret);
			first = -ret;
		}
	}
	/* EBUSY while a QP or a memory region still uses the PD. */
	if (dev->pd) {
		ret = ibv_dealloc_pd(dev->pd);
		if (ret) {
			rex_report_errno("ibv_dealloc_pd", ret);
			first = first ? first : -ret;
		}
	}
	free(dev);
	return first;
}

/* [device] */
struct as_device *as_device_get(struct as_devices *devs, struct ibv_context *verbs)
{
	struct as_device *dev;
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
	dev->who = devs->who;
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
	if (rex_loop_add_async(devs->loop, verbs, as_async_event, dev))
		goto out_release;
	dev->watching_async = true;
	dev->next = devs->first;
	devs->first = dev;
	return dev;

out_release:
	device_release(devs->loop, dev);
	return NULL;
}
/* [device] */

int as_devices_release(struct as_devices *devs)
{
	struct as_device *dev, *next;
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
int as_conn_create_queues(struct as_conn *c, struct as_device *dev, uint32_t sends, uint32_t recvs,
                          uint32_t max_payload, rex_loop_cq_fn poll)
{
	int cqe = (int)(sends + recvs); /* room for a completion of every work request */
	uint32_t i;
	int ret;

	if (cqe > dev->attr.max_cqe || (int)sends > dev->attr.max_qp_wr ||
	    (int)recvs > dev->attr.max_qp_wr) {
		rex_errorf("%s: %s: %u sends and %u receives exceed the device's limits "
		           "(max_qp_wr %d, max_cqe %d)",
		           c->who, c->name, sends, recvs, dev->attr.max_qp_wr, dev->attr.max_cqe);
		return -EINVAL;
	}
	c->dev = dev;
	c->dev_next = dev->conns;
	if (dev->conns)
		dev->conns->dev_prev = c;
	dev->conns = c;

	/* The CQ's context is its record for the loop, which finds the
	 * connection in it (lcq.arg) when the device's channel says "this CQ". */
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
	    .qp_context = c, /* for the QP's asynchronous events */
	    .send_cq = c->cq,
	    .recv_cq = c->cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = sends,
	            .max_recv_wr = recvs,
	            .max_send_sge = 1,
	            .max_recv_sge = 1},
	};
	if (rdma_create_qp(c->id, dev->pd, &attr)) {
		ret = -errno;
		rex_report_errno("rdma_create_qp", errno);
		return ret;
	}
	c->qp = c->id->qp;

	/* Chapter 02's buffers: the device writes receives, only reads sends. */
	c->max_payload = max_payload;
	ret = rex_buffers_create(&c->recv, dev->pd, recvs, SR_HEADER_SIZE + max_payload,
	                         IBV_ACCESS_LOCAL_WRITE);
	if (ret)
		return ret;
	ret = rex_buffers_create(&c->send, dev->pd, sends, SR_HEADER_SIZE + max_payload, 0);
	if (ret)
		return ret;
	c->free_send = calloc(sends, sizeof(*c->free_send));
	if (!c->free_send) {
		ret = -errno;
		rex_report_errno("calloc", errno);
		return ret;
	}
	for (i = 0; i < sends; i++)
		c->free_send[c->nfree_send++] = i;

	/* Receives before the peer can send: each one a credit in our hello. */
	for (i = 0; i < recvs; i++) {
		ret = rex_buffers_post_recv(c->qp, &c->recv, i, rex_wr_id(SR_WR_RECV, i));
		if (ret)
			return ret;
		c->outstanding++;
	}
	return 0;
}
/* [create-queues] */

int as_conn_set_state(struct as_conn *c, enum rex_state to)
{
	enum rex_state from = c->state;

	if (rex_state_change(&c->state, to)) {
		rex_errorf("%s: bug: %s: %s -> %s refused", c->who, c->name, rex_state_name(from),
		           rex_state_name(to));
		return -EPERM;
	}
	return 0;
}

int as_conn_established(struct as_conn *c)
{
	int ret = as_conn_set_state(c, REX_STATE_ESTABLISHED);

	if (ret)
		return ret;
	c->active_ns = rex_loop_now_ns(c->loop);
	return rex_loop_timer_start(c->loop, &c->deadline, AS_IDLE_TIMEOUT_MS);
}

/* DRAINING is over: nothing outstanding (or nothing that can still
 * complete), and no answer to our disconnect awaited. */
static bool drained(const struct as_conn *c)
{
	return c->state == REX_STATE_DRAINING && (c->outstanding == 0 || c->cq_dead) &&
	       !c->await_disconnect;
}

/* Post the release once DRAINING is over. */
static void check_drained(struct as_conn *c)
{
	if (drained(c))
		rex_loop_post(c->loop, &c->release);
}

/* Move the QP to the error state: its work requests complete as flushed. */
static void stop_qp(struct as_conn *c)
{
	struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};
	int ret;

	if (!c->qp)
		return;
	ret = ibv_modify_qp(c->qp, &attr, IBV_QP_STATE); /* an errno value */
	if (ret) {
		rex_report_errno("ibv_modify_qp", ret);
		c->cq_dead = true; /* nothing will flush: do not wait for it */
	}
}

/* [close] */
void as_conn_close(struct as_conn *c, bool failed)
{
	enum rex_state was = c->state;

	c->failed |= failed;
	if (was == REX_STATE_DRAINING || was == REX_STATE_CLOSED)
		return; /* closing already: one path ends a connection */
	if (as_conn_set_state(c, REX_STATE_DRAINING))
		return;
	if (was == REX_STATE_ESTABLISHED) {
		/* Sends the peer a disconnect request and moves our QP to the
		 * error state; its answer comes as DISCONNECTED. */
		if (rdma_disconnect(c->id) == 0) {
			c->await_disconnect = true;
		} else {
			rex_report_errno("rdma_disconnect", errno);
			stop_qp(c);
		}
	} else {
		/* Not connected yet: no disconnect to send. Destroying the id
		 * later tells the peer (a reject). */
		stop_qp(c);
	}
	/* Buffers stay the device's until their work requests complete,
	 * flushed: wait for that, within the drain deadline. */
	rex_loop_timer_start(c->loop, &c->deadline, AS_DRAIN_TIMEOUT_MS);
	check_drained(c);
}
/* [close] */

void as_conn_take_completions(struct as_conn *c)
{
	if (c->cq && !c->cq_dead)
		c->lcq.fn(c->loop, &c->lcq);
}

/* [disconnected] */
void as_conn_disconnected(struct as_conn *c)
{
	if (c->await_disconnect) {
		c->await_disconnect = false; /* the answer to ours */
		check_drained(c);
		return;
	}
	/* The peer's request: nothing answers it until we call rdma_disconnect()
	 * (or destroy the id), and the peer waits for that answer. It also
	 * moves our QP to the error state. */
	if (rdma_disconnect(c->id))
		rex_report_errno("rdma_disconnect", errno);
	if (c->state != REX_STATE_DRAINING && c->state != REX_STATE_CLOSED) {
		as_conn_set_state(c, REX_STATE_DRAINING);
		stop_qp(c); /* in case rdma_disconnect() failed: flush all the same */
		rex_loop_timer_start(c->loop, &c->deadline, AS_DRAIN_TIMEOUT_MS);
	}
	check_drained(c);
}
/* [disconnected] */

/* [poll] */
int as_conn_poll(struct as_conn *c, struct ibv_wc *wc, int max, int *taken)
{
	int n, i, good = 0;
	bool closing;

	*taken = 0;
	n = ibv_poll_cq(c->cq, max, wc);
	if (n < 0) {
		rex_errorf("%s: %s: ibv_poll_cq failed (%d)", c->who, c->name, n);
		c->cq_dead = true;
		as_conn_close(c, true);
		check_drained(c);
		return 0;
	}
	if (n == 0)
		return 0;
	*taken = n;
	c->outstanding -= (uint32_t)n;
	c->active_ns = rex_loop_now_ns(c->loop); /* read once per round: free */
	for (i = 0; i < n; i++) {
		closing = c->state == REX_STATE_DRAINING || c->state == REX_STATE_CLOSED;
		if (wc[i].status == IBV_WC_SUCCESS && !closing) {
			wc[good++] = wc[i]; /* for the side to act on */
			continue;
		}
		/* A flush is how a stopped QP hands its work requests back:
		 * the expected end of a closing connection, not an error. */
		if (closing &&
		    (wc[i].status == IBV_WC_WR_FLUSH_ERR || wc[i].status == IBV_WC_SUCCESS))
			continue;
		rex_report_wc(rex_wr_id_kind(wc[i].wr_id) == SR_WR_SEND ? "send" : "receive",
		              &wc[i]);
		rex_errorf("%s: %s: closing it", c->who, c->name);
		as_conn_close(c, true);
	}
	check_drained(c);
	return good;
}
/* [poll] */

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
		fprintf(stderr, "%s: bad message on %s: %s\n", c->who, c->name, why);
		return -EPROTO;
	}
	c->credits += hdr->credits;
	return 0;
}

uint8_t *as_conn_send_buffer(struct as_conn *c, uint32_t *slot)
{
	if (c->nfree_send == 0)
		return NULL;
	*slot = c->free_send[c->nfree_send - 1];
	return rex_buffers_slot(&c->send, *slot);
}

int as_conn_send(struct as_conn *c, uint32_t slot, uint8_t type, uint32_t length)
{
	struct sr_header hdr = {.type = type, .credits = c->credits_owed, .length = length};
	int ret;

	sr_header_encode(&hdr, rex_buffers_slot(&c->send, slot));
	/* Signaled: its completion tells us the buffer is ours again. */
	ret = rex_buffers_post_send(c->qp, &c->send, slot, SR_HEADER_SIZE + length,
	                            rex_wr_id(SR_WR_SEND, slot), IBV_SEND_SIGNALED);
	if (ret)
		return ret;
	c->nfree_send--; /* the slot as_conn_send_buffer() gave */
	c->outstanding++;
	c->credits--;
	c->credits_owed = 0;
	return 0;
}

int as_conn_repost(struct as_conn *c, uint32_t slot)
{
	int ret = rex_buffers_post_recv(c->qp, &c->recv, slot, rex_wr_id(SR_WR_RECV, slot));

	if (ret)
		return ret;
	c->outstanding++;
	c->credits_owed++;
	return 0;
}

/* [deadline] */
static void on_deadline(struct rex_loop *loop, void *arg)
{
	struct as_conn *c = arg;
	uint64_t idle_until = c->active_ns + (uint64_t)AS_IDLE_TIMEOUT_MS * MS;

	switch (c->state) {
	case REX_STATE_RESOLVING:
	case REX_STATE_CONNECTING:
		fprintf(stderr, "%s: %s: not established within %d ms: closing it\n", c->who,
		        c->name, AS_SETUP_TIMEOUT_MS);
		as_conn_close(c, true);
		break;
	case REX_STATE_ESTABLISHED:
		/* Completions only stamp the time; the deadline moves here,
		 * once per idle period, not once per message. */
		if (idle_until <= rex_loop_now_ns(loop)) {
			/* A loop behind with its events may not have heard
			 * of this CQ yet: look in it before calling it idle. */
			as_conn_take_completions(c);
			if (c->state != REX_STATE_ESTABLISHED)
				break;
			idle_until = c->active_ns + (uint64_t)AS_IDLE_TIMEOUT_MS * MS;
		}
		if (idle_until > rex_loop_now_ns(loop)) {
			rex_loop_timer_start_at(loop, &c->deadline, idle_until);
			break;
		}
		fprintf(stderr, "%s: %s: nothing for %d ms: dropping it\n", c->who, c->name,
		        AS_IDLE_TIMEOUT_MS);
		as_conn_close(c, true);
		break;
	case REX_STATE_DRAINING:
		if (drained(c))
			break; /* drained in this very round: its release is posted */
		fprintf(stderr,
		        "%s: %s: still draining after %d ms (%u work requests outstanding%s): "
		        "releasing it, its QP first\n",
		        c->who, c->name, AS_DRAIN_TIMEOUT_MS, c->outstanding,
		        c->await_disconnect ? ", no answer to our disconnect" : "");
		c->drain_cut = true; /* the side decides whether that is a failure */
		rex_loop_post(loop, &c->release);
		break;
	case REX_STATE_CLOSED:
		break;
	}
}
/* [deadline] */

/* [release] */
static void release(struct rex_loop *loop, void *arg)
{
	struct as_conn *c = arg;
	int ret;

	rex_loop_timer_cancel(loop, &c->deadline);
	as_conn_set_state(c, REX_STATE_CLOSED);
	/* The QP first: once it is gone the device touches none of the
	 * connection's memory, even if a drain was cut short. */
	if (c->qp)
		rdma_destroy_qp(c->id);
	if (c->cq) {
		rex_loop_cq_ack(&c->lcq); /* ibv_destroy_cq() waits for every ack */
		ret = ibv_destroy_cq(c->cq);
		if (ret) {
			rex_report_errno("ibv_destroy_cq", ret);
			c->failed = true;
		}
	}
	/* A failed deregistration keeps (leaks) its memory: see rex_buffers.h. */
	if (rex_buffers_destroy(&c->send) || rex_buffers_destroy(&c->recv))
		c->failed = true;
	free(c->free_send);
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
	c->released(c);
}
/* [release] */

/* [async-event] */
void as_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg)
{
	struct as_device *dev = arg;
	const char *name = ibv_event_type_str(event->event_type);
	struct rex_loop_cq *lcq;
	struct as_conn *c, *next;

	(void)loop;
	switch (event->event_type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
		/* The QP is in the error state already: its work flushes. */
		c = event->element.qp->qp_context;
		rex_errorf("%s: %s: %s: closing it", dev->who, c->name, name);
		as_conn_close(c, true);
		break;
	case IBV_EVENT_CQ_ERR:
		/* The CQ overran and is dead: no flush will ever come out of it. */
		lcq = event->element.cq->cq_context;
		c = lcq->arg;
		rex_errorf("%s: %s: %s: closing it", dev->who, c->name, name);
		c->cq_dead = true;
		as_conn_close(c, true);
		check_drained(c);
		break;
	case IBV_EVENT_COMM_EST:
		/* A message came before the CM's ESTABLISHED (the server may see
		 * the client's first DATA first): the CM event follows. */
		break;
	case IBV_EVENT_PORT_ERR:
		rex_errorf("%s: %s: port %d: its connections will fail", dev->who, name,
		           event->element.port_num);
		break;
	case IBV_EVENT_DEVICE_FATAL:
		/* Nothing on this device works any more, nothing will flush. */
		rex_errorf("%s: %s on %s: closing its connections", dev->who, name,
		           ibv_get_device_name(dev->verbs->device));
		for (c = dev->conns; c; c = next) {
			next = c->dev_next;
			c->cq_dead = true;
			as_conn_close(c, true);
			check_drained(c);
		}
		break;
	default:
		rex_errorf("%s: %s on %s", dev->who, name, ibv_get_device_name(dev->verbs->device));
		break;
	}
}
/* [async-event] */
