/* SPDX-License-Identifier: MIT */
/*
 * rex_cq.c: wait for completions through a completion channel.
 * Chapter 02-send-recv's walkthrough shows this file step by step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* poll() and clock_gettime() under -std=c11 */
#endif
#include "rex_cq.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "rex_error.h"

/* Milliseconds on a clock that never jumps. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Sleep until the channel has an event, for at most timeout_ms (-1: forever);
 * -ECONNRESET when watch_fd (unless -1) becomes readable first; -EINTR when
 * a signal handler ran. */
static int wait_readable(struct ibv_comp_channel *channel, int timeout_ms, int watch_fd)
{
	struct pollfd pfd[2] = {{.fd = channel->fd, .events = POLLIN},
	                        {.fd = watch_fd, .events = POLLIN}};
	long long deadline = now_ms() + timeout_ms;
	int ret;

	for (;;) {
		int left = timeout_ms < 0 ? -1 : (int)(deadline - now_ms());

		if (timeout_ms >= 0 && left < 0)
			left = 0;
		ret = poll(pfd, watch_fd < 0 ? 1 : 2, left);
		if (ret > 0 && (pfd[0].revents & POLLIN))
			return 0;
		if (ret > 0)
			return -ECONNRESET; /* only the watched fd is ready */
		if (ret == 0) {
			rex_errorf("ibv_get_cq_event: no completion within %d ms", timeout_ms);
			return -ETIMEDOUT;
		}
		if (errno == EINTR)
			return -EINTR; /* a signal handler ran: the caller decides */
		ret = -errno;
		rex_report_errno("poll", errno);
		return ret;
	}
}

int rex_cq_wait(struct ibv_comp_channel *channel, struct ibv_cq *cq, struct ibv_wc *wc, int max,
                int timeout_ms)
{
	return rex_cq_wait_watch(channel, cq, wc, max, timeout_ms, -1);
}

/* Sleeps on a completion channel in this process (rex_cq_sleeps()). */
static atomic_ulong sleeps;

/* Move 4: sleep on the channel, then take the event and acknowledge it
 * right away: ibv_destroy_cq() waits until every event it raised has been
 * acknowledged. 0, or what wait_readable() returns. */
static int sleep_for_event(struct ibv_comp_channel *channel, int timeout_ms, int watch_fd)
{
	struct ibv_cq *event_cq;
	void *event_context;
	int ret = wait_readable(channel, timeout_ms, watch_fd);

	if (ret)
		return ret;
	atomic_fetch_add_explicit(&sleeps, 1, memory_order_relaxed);
	if (ibv_get_cq_event(channel, &event_cq, &event_context)) {
		ret = -errno;
		rex_report_errno("ibv_get_cq_event", errno);
		return ret;
	}
	ibv_ack_cq_events(event_cq, 1);
	return 0;
}

unsigned long rex_cq_sleeps(void)
{
	return atomic_load_explicit(&sleeps, memory_order_relaxed);
}

int rex_cq_wait_watch(struct ibv_comp_channel *channel, struct ibv_cq *cq, struct ibv_wc *wc,
                      int max, int timeout_ms, int watch_fd)
{
	bool armed = false;
	int n, ret;

	/* [cq-wait] */
	for (;;) {
		n = ibv_poll_cq(cq, max, wc); /* 1. (and 3.): take what is there */
		if (n < 0) {
			rex_errorf("ibv_poll_cq: failed (%d)", n);
			return -EIO;
		}
		if (n > 0)
			return n;
		if (!armed) { /* 2. empty: an event at the next completion... */
			ret = ibv_req_notify_cq(cq, 0); /* an errno value */
			if (ret) {
				rex_report_errno("ibv_req_notify_cq", ret);
				return -ret;
			}
			armed = true;
			continue; /* 3. ...then poll again: one may have slipped in */
		}
		ret = sleep_for_event(channel, timeout_ms, watch_fd); /* 4. */
		if (ret == -ECONNRESET) { /* the peer is going: keep what it did */
			n = ibv_poll_cq(cq, max, wc);
			return n != 0 ? (n > 0 ? n : -EIO) : -ECONNRESET;
		}
		if (ret)
			return ret;
		armed = false; /* one event per arming: arm again before sleeping */
	}
	/* [cq-wait] */
}

/* Not a flush, and not a send of ours that went well: the peer's doing. */
static bool is_late(const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_WR_FLUSH_ERR)
		return false;
	return wc->status != IBV_WC_SUCCESS || (wc->opcode & IBV_WC_RECV);
}

int rex_cq_drain_late(struct ibv_cq *cq, unsigned int outstanding, int timeout_ms,
                      struct ibv_wc *late)
{
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = 100 * 1000}; /* 100 us */
	long long deadline = now_ms() + timeout_ms;
	unsigned int left = outstanding;
	struct ibv_wc wc[16];
	int n, i, nlate = 0;

	while (left > 0) {
		n = ibv_poll_cq(cq, (int)(left < 16 ? left : 16), wc);
		if (n < 0) {
			rex_errorf("ibv_poll_cq: failed (%d)", n);
			return -EIO;
		}
		left -= (unsigned int)n;
		for (i = 0; i < n; i++) {
			if (!is_late(&wc[i]))
				continue;
			if (late && nlate == 0)
				*late = wc[i];
			nlate++;
		}
		if (n > 0)
			continue;
		if (now_ms() >= deadline) {
			rex_errorf("rex_cq_drain: %u of %u work requests did not complete within "
			           "%d ms: is the QP in the error state?",
			           left, outstanding, timeout_ms);
			return -ETIMEDOUT;
		}
		nanosleep(&pause, NULL);
	}
	return nlate;
}

int rex_cq_drain(struct ibv_cq *cq, unsigned int outstanding, int timeout_ms)
{
	int ret = rex_cq_drain_late(cq, outstanding, timeout_ms, NULL);

	return ret < 0 ? ret : 0;
}
