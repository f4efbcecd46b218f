/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn.c: a connection served by an event loop (see rex_aconn.h).
 * Nothing here blocks: every CM call returns at once and its outcome
 * arrives later as an event, every completion arrives through the loop, and
 * a connection's end waits for its flushed work requests in the loop too.
 * Chapter 05-async's walkthrough shows this file step by step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime under -std=c11 */
#endif
#include "rex_aconn.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rex_aconn_priv.h"
#include "rex_error.h"

static void on_deadline(struct rex_loop *loop, void *arg);
static void release(struct rex_loop *loop, void *arg);

void rex_aconn_say(const struct rex_aconn *c, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* rex_errorf() puts the program's name first, as on every line of the
	 * helpers, and writes the line in one write(). */
	rex_errorf("%s: %s: %s", c->who, c->name, text);
}

uint64_t rex_aconn_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail with this clock */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct rex_aconn *rex_aconn_of_lcq(struct rex_loop_cq *lcq)
{
	return (struct rex_aconn *)(void *)((char *)lcq - offsetof(struct rex_aconn, lcq));
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
	struct rex_aconn_queues q = {
	    .sends = sends, .recvs = recvs, .max_sge = 1, .max_inline = max_inline};

	return rex_aconn_create_queues_with(c, dev, &q, poll);
}

int rex_aconn_create_queues_with(struct rex_aconn *c, struct rex_aconn_dev *dev,
                                 const struct rex_aconn_queues *q, rex_loop_cq_fn poll)
{
	uint32_t recvs = q->recvs, sge = q->max_sge ? q->max_sge : 1;
	/* One send more than asked: the drain's marker has a slot of its own,
	 * so a send queue the program filled still takes it. In 64 bits, where
	 * large depths cannot wrap around to a small queue. */
	uint64_t sends = (uint64_t)q->sends + 1;
	uint64_t cqe = sends + recvs; /* room for a completion of every work request */
	bool srq = q->srq != NULL;
	int ret;

	if (cqe > (uint64_t)dev->attr.max_cqe || sends > (uint32_t)dev->attr.max_qp_wr ||
	    (!srq && recvs > (uint32_t)dev->attr.max_qp_wr) || sge > (uint32_t)dev->attr.max_sge) {
		rex_aconn_say(c,
		              "%u sends (and the drain's marker) and %u receives of %u SGEs exceed "
		              "the device's limits (max_qp_wr %d, max_cqe %d, max_sge %d)",
		              q->sends, recvs, sge, dev->attr.max_qp_wr, dev->attr.max_cqe,
		              dev->attr.max_sge);
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
	c->cq = ibv_create_cq(dev->verbs, (int)cqe, &c->lcq, dev->comp_channel, 0);
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
	    .srq = q->srq, /* NULL: a receive queue of its own */
	    .qp_type = IBV_QPT_RC,
	    /* Selective signalling: a send completes silently unless flagged. */
	    .sq_sig_all = 0,
	    .cap = {.max_send_wr = (uint32_t)sends,
	            .max_recv_wr = srq ? 0 : recvs,
	            .max_send_sge = sge,
	            .max_recv_sge = srq ? 0 : sge,
	            .max_inline_data = q->max_inline},
	};
	if (rdma_create_qp(c->id, dev->pd, &attr)) {
		ret = -errno;
		rex_report_errno("rdma_create_qp", errno);
		return ret;
	}
	c->qp = c->id->qp;
	c->srq = srq;
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

/* --- the state, and the end ------------------------------------------------ */

int rex_aconn_set_state(struct rex_aconn *c, enum rex_state to)
{
	enum rex_state from = c->state;

	if (rex_state_change(&c->state, to)) {
		rex_aconn_say(c, "bug: %s -> %s refused", rex_state_name(from), rex_state_name(to));
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
void rex_aconn_check_drained(struct rex_aconn *c)
{
	if (drained(c))
		rex_loop_post(c->loop, &c->release);
}

static bool is_iwarp(const struct rex_aconn *c)
{
	return c->id->verbs->device->transport_type == IBV_TRANSPORT_IWARP;
}

/* [drain-marker] */
/* The QP is stopping: in the error state (moved there now when move is
 * true), where what is posted flushes, or on iWARP after our
 * rdma_disconnect(), in SQD, where what is queued still goes out before TCP
 * closes. A signalled marker makes sure a completion comes after the last
 * send, signalled or not. */
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
	ret = ibv_post_send(c->qp, &marker, &bad); /* an errno value */
	if (ret == 0) {
		c->sq_posted++;
		return;
	}
	/* A QP in SQD may refuse new work: the books are closed when the
	 * peer's DISCONNECTED comes (settle_iwarp()), within the deadline. */
	if (c->await_disconnect && is_iwarp(c))
		return;
	/* Elsewhere a QP in the error state takes work to flush it: a refusal
	 * is unexpected, said, and leaves nothing to wait for (the QP goes
	 * before its memory all the same). */
	rex_aconn_say(c, "ibv_post_send (the drain's marker): %s: not waiting for %llu sends",
	              strerror(ret), (unsigned long long)(c->sq_posted - c->sq_done));
	c->sq_done = c->sq_posted;
}
/* [drain-marker] */

static void start_draining(struct rex_aconn *c)
{
	rex_loop_timer_start(c->loop, &c->deadline, c->devs->attr.drain_timeout_ms);
	rex_aconn_check_drained(c);
}

/* [close] */
void rex_aconn_close(struct rex_aconn *c, bool failed)
{
	enum rex_state was = c->state;
	bool lost = c->dev && c->dev->lost;

	c->failed |= failed;
	if (was == REX_STATE_DRAINING || was == REX_STATE_CLOSED)
		return; /* closing already: one path ends a connection */
	if (rex_aconn_set_state(c, REX_STATE_DRAINING))
		return;
	if (was == REX_STATE_ESTABLISHED && !lost && rdma_disconnect(c->id) == 0) {
		/* The peer gets a disconnect request, and our QP is in the error
		 * state (InfiniBand, RoCE) or in SQD (iWARP: a graceful close,
		 * docs/iwarp.md); the peer's answer comes as DISCONNECTED. */
		c->await_disconnect = true;
		stop_qp(c, false);
	} else {
		/* ENXIO: the kernel takes the id down with its device, whose
		 * loss is said once (RDMA_CM_EVENT_DEVICE_REMOVAL, next). */
		if (was == REX_STATE_ESTABLISHED && !lost && errno != ENXIO)
			rex_report_errno("rdma_disconnect", errno);
		/* Not connected (yet), or the device gone: nothing to send.
		 * Destroying the id later tells the peer (a reject). */
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

/* iWARP moves the QP to the error state in the kernel, and Soft-iWARP then
 * completes nothing posted after that (a receive posted again, a reply, a
 * drain marker), while what was posted before is flushed by the time
 * rdma_cm reports DISCONNECTED. So once that came and the CQ is read, what
 * is still outstanding never completes: the books are closed on it. */
static void settle_iwarp(struct rex_aconn *c)
{
	if (!c->qp || !is_iwarp(c))
		return;
	rex_aconn_take_completions(c);
	c->recvs_posted = 0;
	c->sq_done = c->sq_posted;
}

/* The program's judgement of a peer's leaving; without one, a failure. */
static bool peer_left_expected(struct rex_aconn *c)
{
	if (c->ops->peer_left)
		return c->ops->peer_left(c);
	rex_aconn_say(c, "the peer disconnected, and no peer_left() says it may: failed");
	return false;
}

/* [disconnected] */
/* The peer's DISCONNECTED: its request, or its answer to ours. */
static void disconnected(struct rex_aconn *c)
{
	bool expected;

	if (c->await_disconnect) {
		c->await_disconnect = false; /* the answer to ours */
		settle_iwarp(c);
		rex_aconn_check_drained(c);
		return;
	}
	/* [peer-request] */
	/* The peer's request. Its last messages may still sit in our CQ, on
	 * another channel: take them before deciding what its leaving means. */
	rex_aconn_take_completions(c);
	/* Closed by the program meanwhile: that answered the peer's request. */
	if (c->await_disconnect) {
		c->await_disconnect = false;
		settle_iwarp(c);
		rex_aconn_check_drained(c);
		return;
	}
	/* A server serves from its accept on: a DISCONNECTED before its
	 * ESTABLISHED (the client's RTU late or lost) is judged the same. */
	if (c->state == REX_STATE_ESTABLISHED ||
	    (c->state == REX_STATE_CONNECTING && !c->active_side)) {
		expected = peer_left_expected(c);
		c->failed |= !expected;
		c->peer_ended = expected;
	}
	/* Nothing answers the peer's request until we call rdma_disconnect()
	 * (or destroy the id): the peer waits for it. It moves our QP to the
	 * error state (iWARP: the peer's close did). ENXIO: the device goes. */
	if (rdma_disconnect(c->id) && errno != ENXIO)
		rex_report_errno("rdma_disconnect", errno);
	if (c->state != REX_STATE_DRAINING && c->state != REX_STATE_CLOSED) {
		rex_aconn_set_state(c, REX_STATE_DRAINING);
		stop_qp(c, true); /* flushes all the same if rdma_disconnect() failed */
		start_draining(c);
	}
	settle_iwarp(c);
	rex_aconn_check_drained(c);
	/* [peer-request] */
}
/* [disconnected] */

/* ESTABLISHED: the transport's last setting, the deadline, the program. */
/* A rejection says why in a number (an IB CM reason on RoCE): hints for the
 * two a program meets, nobody listening (8) and the server's refusal (28). */
static void reject_hints(int status)
{
	const char *mine = rex_error_program_hint("rdma_connect", ECONNREFUSED);

	if (status == 8) {
		fprintf(stderr, "  hint: %s\n", rex_errno_hint("rdma_connect", ECONNREFUSED));
		if (mine)
			fprintf(stderr, "  hint: %s\n", mine);
	} else if (status == 28) {
		fprintf(stderr, "  hint: the server's program refused it: its output says why\n");
	}
}

/* How often an established connection's idle deadline is looked at: a
 * quarter of it (see on_deadline()). */
static unsigned idle_check_ms(const struct rex_aconn_attr *a)
{
	return a->idle_timeout_ms >= 4 ? a->idle_timeout_ms / 4 : 1;
}

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
	c->active_ns = rex_aconn_clock_ns();
	c->heard = false;
	if (c->peer_closing) /* iWARP: flushed by the peer's close already */
		rex_loop_timer_start(c->loop, &c->deadline, c->devs->attr.drain_timeout_ms);
	else if (c->devs->attr.idle_timeout_ms)
		rex_loop_timer_start(c->loop, &c->deadline, idle_check_ms(&c->devs->attr));
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
	    ev->type != RDMA_CM_EVENT_DISCONNECTED && ev->type != RDMA_CM_EVENT_DEVICE_REMOVAL)
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
		rex_aconn_say(c, "rejected (status %d: %s)", ev->status,
		              rex_cm_reject_reason(ev->status));
		reject_hints(ev->status);
		ret = -ECONNREFUSED;
		break;
		/* [cm-event-main] */
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		rex_aconn_say(c, "%s (status %d)", rdma_event_str(ev->type), ev->status);
		ret = -EIO;
		break;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		/* Closing or not, nothing more comes from a device that is gone:
		 * no flush, no answer to our disconnect. */
		if (c->state == REX_STATE_CLOSED)
			break;
		c->cq_dead = true;
		c->await_disconnect = false;
		if (c->state == REX_STATE_DRAINING) {
			rex_aconn_check_drained(c);
		} else {
			rex_aconn_say(c, "its device went away");
			ret = -ENODEV;
		}
		/* Every connection on it goes, and then the device's entry. */
		if (c->dev)
			rex_aconn_dev_lost(c->dev, "RDMA_CM_EVENT_DEVICE_REMOVAL");
		break;
	default:
		break; /* TIMEWAIT_EXIT, ADDR_CHANGE...: nothing to do */
	}
	if (ret) {
		if (c->ops->cm_failed)
			c->ops->cm_failed(c, ev);
		rex_aconn_close(c, true);
		rex_aconn_check_drained(c);
	}
}
/* [cm-event] */

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
	uint64_t idle_until, now, next;

	catch_up(c); /* may change the state, or rearm this very timer */
	if (rex_loop_timer_armed(&c->deadline))
		return;
	if ((c->state == REX_STATE_ESTABLISHED ||
	     (c->state == REX_STATE_CONNECTING && !c->active_side)) &&
	    c->peer_closing) {
		rex_aconn_say(
		    c,
		    "its QP was flushed (iWARP: the peer closed) and no DISCONNECTED came "
		    "within %u ms: closing it",
		    a->drain_timeout_ms);
		rex_aconn_close(c, true);
		return;
	}
	switch (c->state) {
	case REX_STATE_RESOLVING:
	case REX_STATE_CONNECTING:
		rex_aconn_say(c, "not established within %u ms: closing it", a->setup_timeout_ms);
		rex_aconn_close(c, true);
		break;
	/* [deadline-idle] */
	case REX_STATE_ESTABLISHED:
		if (!a->idle_timeout_ms)
			break;
		/* Completions set c->heard and read no clock (a system call in a
		 * VM without a user-space one: 06 part 3). It is read here, each
		 * quarter period: silent since s, dropped by s + 1.25 idle. */
		now = rex_loop_now_ns(loop);
		if (c->heard)
			c->active_ns = now;
		c->heard = false;
		idle_until = c->active_ns + (uint64_t)a->idle_timeout_ms * REX_ACONN_MS;
		next = now + (uint64_t)idle_check_ms(a) * REX_ACONN_MS;
		if (idle_until > now) {
			rex_loop_timer_start_at(loop, &c->deadline,
			                        next < idle_until ? next : idle_until);
			break;
		}
		/* Its protocol done, only the peer's disconnect was missing. */
		rex_aconn_say(c,
		              c->protocol_done ? "no disconnect from the peer in %u ms: closing it"
		                               : "nothing for %u ms: dropping it",
		              a->idle_timeout_ms);
		rex_aconn_close(c, !c->protocol_done);
		break;
		/* [deadline-idle] */
	/* [deadline-drain] */
	case REX_STATE_DRAINING:
		if (drained(c))
			break; /* drained in this very round: its release is posted */
		rex_aconn_say(c,
		              "still draining after %u ms (%llu work requests outstanding%s): "
		              "releasing it, its QP first",
		              a->drain_timeout_ms,
		              (unsigned long long)(c->recvs_posted + (c->sq_posted - c->sq_done)),
		              c->await_disconnect ? ", no answer to our disconnect" : "");
		c->drain_cut = true; /* the program decides whether that is a failure */
		rex_loop_post(loop, &c->release);
		/* [deadline-drain] */
		break;
	case REX_STATE_CLOSED:
		break;
	}
}
/* [deadline] */

/* A receive of a shared queue that a stopped QP had begun comes back
 * flushed, in no set order with the drain's marker (the drain waits for
 * none of them). Taken to the program (its buffer is the queue's) before
 * the QP goes, as some drivers clean a destroyed QP's completions out of
 * its CQ, and after, as Soft-RoCE may flush it only then. Even a CQ
 * known dead is read (an overrun one may still hold what came before).
 * A CQ that cannot be read is dead: what it held is lost, and cq_dead
 * says so to the program (rex_svc writes its share off the queue).
 * Nothing without a shared queue. */
static void srq_leftovers(struct rex_aconn *c)
{
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	int n, i;

	if (!c->srq || !c->cq)
		return;
	while ((n = ibv_poll_cq(c->cq, REX_ACONN_WC_BATCH, wc)) > 0)
		for (i = 0; i < n; i++)
			if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV && c->ops->srq_recv)
				c->ops->srq_recv(c, &wc[i]);
	if (n < 0 && !c->cq_dead) {
		rex_aconn_say(
		    c, "ibv_poll_cq failed (%d): its shared receives still in the CQ are lost", n);
		c->cq_dead = true;
	}
}

/* [release] */
/* [release-qp] */
static void release(struct rex_loop *loop, void *arg)
{
	struct rex_aconn *c = arg;
	struct rex_aconn_dev *dev = c->dev;
	int ret;

	rex_loop_timer_cancel(loop, &c->deadline);
	rex_aconn_set_state(c, REX_STATE_CLOSED);
	/* What the program tied to the QP (memory windows) goes before it. */
	if (c->ops->releasing)
		c->ops->releasing(c);
	/* The QP first: once it is gone the device touches none of the
	 * connection's memory, even if a drain was cut short. */
	srq_leftovers(c); /* a shared queue's receive begun, before and after */
	if (c->qp)
		rdma_destroy_qp(c->id);
	c->qp = NULL;
	srq_leftovers(c);
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
	/* The last connection of a lost device: the device goes too. */
	if (dev)
		rex_aconn_dev_conn_gone(dev);
}
/* [release] */
