/* SPDX-License-Identifier: MIT */
/*
 * Waiting for one expected CM event, with a timeout, a precise message when
 * something else arrives, and an acknowledgement on every path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* poll(), clock_gettime() and inet_ntop() under -std=c11 */
#endif
#include "rex_cm.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "rex_error.h"

/* IB CM reject reasons (InfiniBand Architecture Specification, table "REJ reason"). */
enum {
	REJ_INVALID_SERVICE_ID = 8,
	REJ_CONSUMER_DEFINED = 28,
};

const char *rex_cm_reject_reason(int status)
{
	switch (status) {
	case 1:
		return "no queue pair available";
	case 2:
		return "no end-to-end context available";
	case 3:
		return "no resources";
	case 4:
		return "timeout";
	case 5:
		return "unsupported request";
	case 6:
		return "invalid communication ID";
	case 7:
		return "invalid communication instance";
	case REJ_INVALID_SERVICE_ID:
		return "invalid service ID";
	case 9:
		return "invalid transport type";
	case 10:
		return "stale connection";
	case 11:
		return "reliable datagram channel does not exist";
	case 12:
		return "invalid GID";
	case 13:
		return "invalid LID";
	case 14:
		return "invalid service level";
	case 15:
		return "invalid traffic class";
	case 16:
		return "invalid hop limit";
	case 17:
		return "invalid packet rate";
	case 18:
		return "invalid alternate GID";
	case 19:
		return "invalid alternate LID";
	case 20:
		return "invalid alternate service level";
	case 21:
		return "invalid alternate traffic class";
	case 22:
		return "invalid alternate hop limit";
	case 23:
		return "invalid alternate packet rate";
	case 24:
		return "port and CM redirect";
	case 25:
		return "port redirect";
	case 26:
		return "invalid path MTU";
	case 27:
		return "insufficient responder resources";
	case REJ_CONSUMER_DEFINED:
		return "consumer defined";
	case 29:
		return "invalid RNR retry count";
	case 30:
		return "duplicate local communication ID";
	case 31:
		return "invalid class version";
	case 32:
		return "invalid flow label";
	case 33:
		return "invalid alternate flow label";
	case 35:
		return "vendor option not supported";
	default:
		return "unknown reason";
	}
}

int rex_cm_channel_nonblocking(struct rdma_event_channel *channel)
{
	int flags = fcntl(channel->fd, F_GETFL);

	if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		int err = errno;

		rex_report_errno("fcntl", err);
		return -err;
	}
	return 0;
}

const char *rex_cm_format_address(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (sa && sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		port = ntohs(in->sin_port);
	} else if (sa && sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

		inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
		port = ntohs(in6->sin6_port);
	}
	snprintf(buf, len, "%s port %u", host, port);
	return buf;
}

/* Milliseconds left of \p timeout_ms since \p start; -1 (forever) stays -1. */
static int remaining_ms(const struct timespec *start, int timeout_ms)
{
	struct timespec now;
	long long elapsed;

	if (timeout_ms < 0)
		return -1;
	if (clock_gettime(CLOCK_MONOTONIC, &now))
		return 0; /* cannot happen with CLOCK_MONOTONIC; give up waiting */
	elapsed = (now.tv_sec - start->tv_sec) * 1000LL + (now.tv_nsec - start->tv_nsec) / 1000000;
	if (elapsed >= timeout_ms)
		return 0;
	return timeout_ms - (int)elapsed;
}

/*
 * Wait until the channel has an event, then take it. poll() bounds the wait;
 * on a non-blocking fd, rdma_get_cm_event() then either returns an event or
 * fails with EAGAIN (librdmacm read something it discarded, or another reader
 * was faster), and we poll again for what is left of the time.
 */
static int get_event(struct rdma_event_channel *channel, enum rdma_cm_event_type expected,
                     int timeout_ms, struct rdma_cm_event **event)
{
	struct pollfd pfd = {.fd = channel->fd, .events = POLLIN};
	struct timespec start;
	int left = timeout_ms < 0 ? -1 : timeout_ms;
	int err;
	int n;

	if (clock_gettime(CLOCK_MONOTONIC, &start)) {
		err = errno;
		rex_report_errno("clock_gettime", err);
		return -err;
	}
	for (;;) {
		n = poll(&pfd, 1, left);
		if (n < 0) {
			err = errno;
			if (err == EINTR)
				return -EINTR; /* a signal handler ran: the caller decides */
			rex_report_errno("poll", err);
			return -err;
		}
		if (n == 0) {
			rex_errorf("rdma_cm: no %s within %d ms", rdma_event_str(expected),
			           timeout_ms);
			return -ETIMEDOUT;
		}
		if (pfd.revents & POLLNVAL) {
			rex_errorf("poll: event channel fd %d is not open", channel->fd);
			return -EBADF;
		}
		if (rdma_get_cm_event(channel, event) == 0)
			return 0;
		err = errno;
		if (err == EINTR)
			return -EINTR;
		if (err != EAGAIN && err != EWOULDBLOCK) {
			rex_report_errno("rdma_get_cm_event", err);
			return -err;
		}
		/* Nothing to take after all: wait for what is left of the time. */
		left = remaining_ms(&start, timeout_ms);
	}
}

/* What rex_cm_wait() returns for an event that is not the expected one. */
static int unexpected_result(const struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_REJECTED:
		return -ECONNREFUSED;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
		return event->status < 0 ? event->status : -EHOSTUNREACH;
	case RDMA_CM_EVENT_DISCONNECTED:
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
		return -ECONNRESET;
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return -ENODEV;
	default:
		return -EPROTO;
	}
}

/* A hint for the unexpected events people meet most, or NULL. */
static const char *unexpected_hint(const struct rdma_cm_event *event)
{
	switch (event->event) {
	case RDMA_CM_EVENT_REJECTED:
		if (event->status == REJ_INVALID_SERVICE_ID || event->status == -ECONNREFUSED)
			return rex_errno_hint("rdma_connect", ECONNREFUSED);
		if (event->status == REJ_CONSUMER_DEFINED)
			return "the server's program refused the connection (rdma_reject()), or "
			       "closed its listener before taking the request: its output says which";
		return NULL;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
		return rex_errno_hint("rdma_resolve_addr", EHOSTUNREACH);
	case RDMA_CM_EVENT_DISCONNECTED:
		return "the peer disconnected or died: look at its output";
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		return "the RDMA device went away (driver unloaded or link deleted)";
	default:
		return NULL;
	}
}

static void report_unexpected(enum rdma_cm_event_type expected, const struct rdma_cm_event *event,
                              int result)
{
	char status[128];
	const char *hint = unexpected_hint(event);
	const char *own = rex_error_program_hint("rdma_cm", result);

	if (event->event == RDMA_CM_EVENT_REJECTED && event->status > 0)
		snprintf(status, sizeof(status), "status %d: %s", event->status,
		         rex_cm_reject_reason(event->status));
	else if (event->status < 0)
		snprintf(status, sizeof(status), "status %d: %s", event->status,
		         strerror(-event->status));
	else
		snprintf(status, sizeof(status), "status %d", event->status);

	rex_errorf("rdma_cm: expected %s, got %s (%s)%s%s%s%s%s", rdma_event_str(expected),
	           rdma_event_str(event->event), status,
	           event->event == RDMA_CM_EVENT_CONNECT_REQUEST ? "; rejected that connection" : "",
	           hint ? "\n  hint: " : "", hint ? hint : "", own ? "\n  hint: " : "",
	           own ? own : "");
}

/* Keep what the caller needs: the event itself is freed by rdma_ack_cm_event(). */
static void copy_event(const struct rdma_cm_event *event, struct rex_cm_event *out)
{
	const struct rdma_conn_param *conn = &event->param.conn;
	size_t len;

	out->type = event->event;
	out->status = event->status;
	out->id = event->id;
	out->private_data_len = 0;
	/* UD ids (and multicast events) carry param.ud instead: nothing to copy. */
	if (!event->id || event->id->qp_type == IBV_QPT_UD)
		return;
	if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
	    event->event == RDMA_CM_EVENT_ESTABLISHED) {
		out->initiator_depth = conn->initiator_depth;
		out->responder_resources = conn->responder_resources;
	}
	if (!conn->private_data || conn->private_data_len == 0)
		return;
	len = conn->private_data_len;
	if (len > REX_CM_PRIVATE_DATA_MAX)
		len = REX_CM_PRIVATE_DATA_MAX;
	memcpy(out->private_data, conn->private_data, len);
	out->private_data_len = len;
}

int rex_cm_wait(struct rdma_event_channel *channel, enum rdma_cm_event_type expected,
                int timeout_ms, struct rex_cm_event *out)
{
	return rex_cm_wait_either(channel, expected, expected, timeout_ms, out);
}

int rex_cm_wait_either(struct rdma_event_channel *channel, enum rdma_cm_event_type expected,
                       enum rdma_cm_event_type or_this, int timeout_ms, struct rex_cm_event *out)
{
	struct rex_cm_event scratch;
	struct rdma_cm_event *event;
	struct rdma_cm_id *stray_id = NULL;
	int ret;

	if (!out)
		out = &scratch;
	memset(out, 0, sizeof(*out));
	if (!channel) {
		rex_errorf("rex_cm_wait: no event channel");
		return -EINVAL;
	}

	ret = get_event(channel, expected, timeout_ms, &event);
	if (ret)
		return ret;

	copy_event(event, out);
	if (event->event != expected && event->event != or_this) {
		ret = unexpected_result(event);
		report_unexpected(expected, event, ret);
		if (event->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			/* A connection nobody asked for: refuse it so it cannot leak. */
			stray_id = event->id;
			out->id = NULL;
			if (rdma_reject(stray_id, NULL, 0))
				rex_report_errno("rdma_reject", errno);
		}
	}

	/* Acknowledge first: rdma_destroy_id() waits for the id's events to be acked. */
	if (rdma_ack_cm_event(event)) {
		int err = errno;

		rex_report_errno("rdma_ack_cm_event", err);
		/* Destroying the stray id now could block forever: leak it instead. */
		return ret ? ret : -err;
	}
	if (stray_id && rdma_destroy_id(stray_id))
		rex_report_errno("rdma_destroy_id", errno);
	return ret;
}

/* [cm-next] */
int rex_cm_next(struct rdma_event_channel *channel, struct rex_cm_event *out)
{
	struct rdma_cm_event *event;
	int err;

	/* The channel's fd is non-blocking: no event means EAGAIN, not a sleep. */
	if (rdma_get_cm_event(channel, &event)) {
		err = errno;
		if (err == EAGAIN || err == EWOULDBLOCK)
			return 0;
		rex_report_errno("rdma_get_cm_event", err);
		return -err;
	}
	/* Copy what we use, then acknowledge at once. */
	memset(out, 0, sizeof(*out));
	copy_event(event, out);
	/* A failed acknowledgement is printed, and the event still delivered:
	 * it happened, and dropping it would leak a connect request's new id or
	 * leave a connection waiting for a DISCONNECTED that came. (librdmacm
	 * refuses only a NULL event; a real failure would make the id's
	 * rdma_destroy_id() wait for the acknowledgement.) */
	if (rdma_ack_cm_event(event))
		rex_report_errno("rdma_ack_cm_event", errno);
	return 1;
}
/* [cm-next] */
