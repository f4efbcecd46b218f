/* SPDX-License-Identifier: MIT */
/*
 * rex_loop_cq.c: what rex_loop adds for RDMA besides fds, timers and tasks
 * (see rex_loop.h): completion channels with their CQs armed again and
 * acknowledged in batches, and the checked states of a connection. The
 * loop itself is rex_loop.c.
 */
#include "rex_loop.h"

#include <errno.h>
#include <sys/epoll.h>

#include "rex_error.h"

/* --- completion channels -------------------------------------------------- */

void rex_loop_cq_init(struct rex_loop_cq *lcq, rex_loop_cq_fn fn, void *arg)
{
	memset(lcq, 0, sizeof(*lcq));
	lcq->fn = fn;
	lcq->arg = arg;
}

int rex_loop_cq_arm(struct rex_loop_cq *lcq)
{
	int ret = ibv_req_notify_cq(lcq->cq, 0); /* an errno value */

	if (ret) {
		rex_report_errno("ibv_req_notify_cq", ret);
		lcq->error = -ret;
		return -ret;
	}
	return 0;
}

void rex_loop_cq_ack(struct rex_loop_cq *lcq)
{
	if (lcq->cq && lcq->unacked)
		ibv_ack_cq_events(lcq->cq, lcq->unacked);
	lcq->unacked = 0;
}

/* [cq-events] */
static void cq_events(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct ibv_comp_channel *channel = arg;
	struct ibv_cq *cq;
	void *context;
	int taken;

	(void)events;
	/* [cq-take] */
	/* The channel is non-blocking: take events until there are none, or
	 * until this round's budget is spent (the rest waits for the next
	 * round, after the other fds). Each says "this CQ has completions",
	 * once per arming. */
	for (taken = 0; taken < REX_LOOP_BUDGET; taken++) {
		if (ibv_get_cq_event(channel, &cq, &context)) {
			if (errno != EAGAIN) {
				/* A lost device: the fd may stay readable for ever.
				 * Stop watching it rather than spin; the device's
				 * async fd or the CM says what happened. */
				rex_report_errno("ibv_get_cq_event", errno);
				rex_loop_remove_fd(loop, channel->fd);
			}
			break;
		}
		struct rex_loop_cq *lcq = context;

		/* Acknowledging takes a lock: count events, acknowledge many at
		 * once. ibv_destroy_cq() waits for all of them (rex_loop_cq_ack()). */
		if (++lcq->unacked >= REX_LOOP_CQ_ACK_BATCH)
			rex_loop_cq_ack(lcq);
		/* Poll, arm, poll again: a completion that arrived between the
		 * first poll and the arming raised no event, and would wait
		 * unseen until the next one. */
		lcq->fn(loop, lcq);
		if (lcq->busy_polled)
			continue;     /* its owner polls it: no more events wanted */
		rex_loop_cq_arm(lcq); /* on failure, lcq->error tells fn the CQ is deaf */
		lcq->fn(loop, lcq);
	}
	/* [cq-take] */
	rex_loop_note_cq_events(loop, (unsigned)taken); /* rex_loop_most_cq_events() */
}
/* [cq-events] */

int rex_loop_add_comp_channel(struct rex_loop *loop, struct ibv_comp_channel *channel)
{
	return rex_loop_add_fd(loop, channel->fd, EPOLLIN, cq_events, channel);
}

/* --- the state of a connection ------------------------------------------- */

const char *rex_state_name(enum rex_state state)
{
	switch (state) {
	case REX_STATE_RESOLVING:
		return "resolving";
	case REX_STATE_CONNECTING:
		return "connecting";
	case REX_STATE_ESTABLISHED:
		return "established";
	case REX_STATE_DRAINING:
		return "draining";
	case REX_STATE_CLOSED:
		return "closed";
	}
	return "unknown";
}

/* [state-table] */
bool rex_state_allowed(enum rex_state from, enum rex_state to)
{
	/* allowed[from] is the set of states `from` may become, one bit each. */
	static const unsigned allowed[REX_STATE_COUNT] = {
	    [REX_STATE_RESOLVING] = 1u << REX_STATE_CONNECTING | 1u << REX_STATE_DRAINING,
	    [REX_STATE_CONNECTING] = 1u << REX_STATE_ESTABLISHED | 1u << REX_STATE_DRAINING,
	    [REX_STATE_ESTABLISHED] = 1u << REX_STATE_DRAINING,
	    [REX_STATE_DRAINING] = 1u << REX_STATE_CLOSED,
	    [REX_STATE_CLOSED] = 0,
	};

	if ((unsigned)from >= REX_STATE_COUNT || (unsigned)to >= REX_STATE_COUNT)
		return false;
	return (allowed[from] & 1u << to) != 0;
}
/* [state-table] */

int rex_state_change(enum rex_state *state, enum rex_state to)
{
	if (!rex_state_allowed(*state, to))
		return -EPERM;
	*state = to;
	return 0;
}
