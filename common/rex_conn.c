/* SPDX-License-Identifier: MIT */
/*
 * rex_conn.c: chapter 01-connect's connection setup, as a helper.
 * The walkthrough of 01-connect explains every call made here.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getaddrinfo() under -std=c11 */
#endif
#include "rex_conn.h"

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "rex_cm.h"
#include "rex_device.h"
#include "rex_error.h"

/* Connect requests the kernel queues for us before we take them. */
#define LISTEN_BACKLOG 8
/* Address and route resolution report their own timeout as an event after
 * timeout_ms; wait a little longer than that so the event, not our poll(),
 * says what went wrong. */
#define RESOLVE_SLACK_MS 1000

void rex_conn_attr_default(struct rex_conn_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->send_depth = 16;
	attr->recv_depth = 16;
	attr->cq_depth = 32;
	attr->max_sge = 1;
	attr->retry_count = 6;
	attr->rnr_retry_count = 6;
	/* 17: 0.54 s a try, 3.8 s for 7 tries: a silent peer is noticed in
	 * seconds, long before the chapters' own waits (10 s) run out. */
	attr->ack_timeout = 17;
	attr->timeout_ms = 5000;
	attr->connect_timeout_ms = 15000;
	attr->disconnect_timeout_ms = 15000;
}

/* getaddrinfo() for an RDMA address; prints the failure. */
static struct addrinfo *resolve_name(const char *addr, uint16_t port, int flags)
{
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICSERV | flags, .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *res = NULL;
	char service[8];
	int ret;

	snprintf(service, sizeof(service), "%u", (unsigned)port);
	ret = getaddrinfo(addr, service, &hints, &res);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s", addr ? addr : "(any)", gai_strerror(ret));
		errno = ret == EAI_SYSTEM ? errno : EHOSTUNREACH;
		return NULL;
	}
	return res;
}

/* PD, completion channel, CQ and QP on the device the id is bound to. */
static int create_queues(struct rex_conn *conn, const struct rex_conn_attr *attr)
{
	struct ibv_context *verbs = conn->id->verbs;
	int depth = attr->send_depth > attr->recv_depth ? attr->send_depth : attr->recv_depth;
	int ret;

	ret = rex_device_check_queues(verbs, attr->cq_depth, depth, attr->max_sge);
	if (ret)
		return ret;
	conn->pd = ibv_alloc_pd(verbs);
	if (!conn->pd) {
		ret = -errno;
		rex_report_errno("ibv_alloc_pd", errno);
		return ret;
	}
	conn->comp_channel = ibv_create_comp_channel(verbs);
	if (!conn->comp_channel) {
		ret = -errno;
		rex_report_errno("ibv_create_comp_channel", errno);
		return ret;
	}
	conn->cq = ibv_create_cq(verbs, attr->cq_depth, conn, conn->comp_channel, 0);
	if (!conn->cq) {
		ret = -errno;
		rex_report_errno("ibv_create_cq", errno);
		return ret;
	}
	struct ibv_qp_init_attr qp_attr = {
	    .send_cq = conn->cq,
	    .recv_cq = conn->cq,
	    .qp_type = IBV_QPT_RC,
	    .cap = {.max_send_wr = attr->send_depth,
	            .max_recv_wr = attr->recv_depth,
	            .max_send_sge = attr->max_sge,
	            .max_recv_sge = attr->max_sge},
	};
	if (rdma_create_qp(conn->id, conn->pd, &qp_attr)) {
		ret = -errno;
		rex_report_errno("rdma_create_qp", errno);
		return ret;
	}
	conn->qp = conn->id->qp;
	return 0;
}

/* Keep what the peer sent with an event (accept, reject or connect data,
 * and the RDMA READ depths it asked for). */
static void keep_peer_data(struct rex_conn *conn, const struct rex_cm_event *event)
{
	conn->peer_data_len = event->private_data_len;
	memcpy(conn->peer_data, event->private_data, event->private_data_len);
	/* The kernel gives them from our side: its responder_resources is
	 * what the peer asked to initiate, and the other way round. */
	conn->peer_initiator_depth = event->responder_resources;
	conn->peer_responder_resources = event->initiator_depth;
}

/* A new event channel, non-blocking (see rex_cm.h for why). */
static struct rdma_event_channel *create_channel(void)
{
	struct rdma_event_channel *channel = rdma_create_event_channel();
	int err;

	if (!channel) {
		err = errno;
		rex_report_errno("rdma_create_event_channel", err);
		errno = err;
		return NULL;
	}
	err = -rex_cm_channel_nonblocking(channel);
	if (err) {
		rdma_destroy_event_channel(channel);
		errno = err;
		return NULL;
	}
	return channel;
}

struct rex_conn *rex_conn_create_client(const char *addr, uint16_t port,
                                        const struct rex_conn_attr *attr)
{
	struct rex_conn *conn;
	struct addrinfo *res;
	int err = 0, ret;

	res = resolve_name(addr, port, 0);
	if (!res)
		return NULL;
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		err = errno;
		rex_report_errno("calloc", err);
		goto out_free_addrinfo;
	}
	conn->attr = *attr;
	rex_cm_format_address(res->ai_addr, conn->peer_name, sizeof(conn->peer_name));

	conn->channel = create_channel();
	if (!conn->channel) {
		err = errno;
		goto out_destroy_conn;
	}
	if (rdma_create_id(conn->channel, &conn->id, conn, RDMA_PS_TCP)) {
		err = errno;
		rex_report_errno("rdma_create_id", err);
		goto out_destroy_conn;
	}
	if (rdma_resolve_addr(conn->id, NULL, res->ai_addr, attr->timeout_ms)) {
		err = errno;
		rex_report_errno("rdma_resolve_addr", err);
		goto out_destroy_conn;
	}
	ret = rex_cm_wait(conn->channel, RDMA_CM_EVENT_ADDR_RESOLVED,
	                  attr->timeout_ms + RESOLVE_SLACK_MS, NULL);
	if (ret) {
		err = -ret; /* rex_cm_wait() said what came instead */
		goto out_destroy_conn;
	}
	if (rdma_resolve_route(conn->id, attr->timeout_ms)) {
		err = errno;
		rex_report_errno("rdma_resolve_route", err);
		goto out_destroy_conn;
	}
	ret = rex_cm_wait(conn->channel, RDMA_CM_EVENT_ROUTE_RESOLVED,
	                  attr->timeout_ms + RESOLVE_SLACK_MS, NULL);
	if (ret) {
		err = -ret;
		goto out_destroy_conn;
	}
	ret = create_queues(conn, attr);
	if (ret)
		err = -ret;

out_destroy_conn:
	if (err) {
		rex_conn_destroy(conn);
		conn = NULL;
	}
out_free_addrinfo:
	freeaddrinfo(res);
	errno = err;
	return conn;
}

/* The CM carries the queue pair's RDMA READ and retry settings in its handshake. */
static struct rdma_conn_param conn_param(const struct rex_conn *conn, const void *data, uint8_t len)
{
	struct rdma_conn_param param = {
	    .private_data = data,
	    .private_data_len = len,
	    .initiator_depth = conn->attr.initiator_depth,
	    .responder_resources = conn->attr.responder_resources,
	    .retry_count = conn->attr.retry_count,
	    .rnr_retry_count = conn->attr.rnr_retry_count,
	};
	return param;
}

/* The QP's local ACK timeout, before connect or accept moves it to RTS. */
static int set_ack_timeout(struct rex_conn *conn)
{
	uint8_t timeout = conn->attr.ack_timeout;

	if (timeout == 0)
		return 0;
	if (rdma_set_option(conn->id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout,
	                    sizeof(timeout))) {
		int ret = -errno;

		rex_report_errno("rdma_set_option(RDMA_OPTION_ID_ACK_TIMEOUT)", errno);
		return ret;
	}
	return 0;
}

/*
 * After a failed connect or accept: move the QP to the error state, which a
 * QP in any state may enter, so that receives the caller posted beforehand
 * complete as flushed and their memory can be released safely.
 */
static void stop_qp(struct rex_conn *conn)
{
	int ret = ibv_modify_qp(conn->qp, &(struct ibv_qp_attr){.qp_state = IBV_QPS_ERR},
	                        IBV_QP_STATE); /* an errno value */

	if (ret)
		rex_report_errno("ibv_modify_qp", ret);
}

int rex_conn_connect(struct rex_conn *conn, const void *data, uint8_t len)
{
	struct rdma_conn_param param = conn_param(conn, data, len);
	struct rex_cm_event event;
	int ret;

	ret = set_ack_timeout(conn);
	if (ret) {
		stop_qp(conn);
		return ret;
	}
	if (rdma_connect(conn->id, &param)) {
		ret = -errno;
		rex_report_errno("rdma_connect", errno);
		stop_qp(conn);
		return ret;
	}
	memset(&event, 0, sizeof(event));
	ret = rex_cm_wait(conn->channel, RDMA_CM_EVENT_ESTABLISHED, conn->attr.connect_timeout_ms,
	                  &event);
	/* Accept data on success; on a reject, the server's reason. */
	keep_peer_data(conn, &event);
	if (ret)
		stop_qp(conn);
	return ret;
}

struct rex_listener *rex_listener_create(const char *addr, uint16_t port)
{
	struct sockaddr_in any = {.sin_family = AF_INET, .sin_port = htons(port)};
	struct rex_listener *listener;
	struct addrinfo *res = NULL;
	struct sockaddr *sa = (struct sockaddr *)&any;
	int err = 0;

	if (addr) {
		res = resolve_name(addr, port, AI_PASSIVE);
		if (!res)
			return NULL;
		sa = res->ai_addr;
	}
	listener = calloc(1, sizeof(*listener));
	if (!listener) {
		err = errno;
		rex_report_errno("calloc", err);
		goto out_free_addrinfo;
	}
	rex_cm_format_address(sa, listener->name, sizeof(listener->name));
	listener->channel = create_channel();
	if (!listener->channel) {
		err = errno;
		goto out_destroy_listener;
	}
	if (rdma_create_id(listener->channel, &listener->id, listener, RDMA_PS_TCP)) {
		err = errno;
		rex_report_errno("rdma_create_id", err);
		goto out_destroy_listener;
	}
	if (rdma_bind_addr(listener->id, sa)) {
		err = errno;
		rex_report_errno("rdma_bind_addr", err);
		goto out_destroy_listener;
	}
	if (rdma_listen(listener->id, LISTEN_BACKLOG)) {
		err = errno;
		rex_report_errno("rdma_listen", err);
		goto out_destroy_listener;
	}

out_destroy_listener:
	if (err) {
		rex_listener_destroy(listener);
		listener = NULL;
	}
out_free_addrinfo:
	if (res)
		freeaddrinfo(res);
	errno = err;
	return listener;
}

int rex_listener_destroy(struct rex_listener *listener)
{
	int first = 0;

	if (!listener)
		return 0;
	if (listener->id && rdma_destroy_id(listener->id)) {
		first = -errno;
		rex_report_errno("rdma_destroy_id", errno);
	}
	if (listener->channel)
		rdma_destroy_event_channel(listener->channel);
	free(listener);
	return first;
}

struct rex_conn *rex_listener_get_request(struct rex_listener *listener,
                                          const struct rex_conn_attr *attr)
{
	struct rex_cm_event event;
	struct rex_conn *conn;
	int err = 0, ret;

	memset(&event, 0, sizeof(event));
	ret = rex_cm_wait(listener->channel, RDMA_CM_EVENT_CONNECT_REQUEST, -1, &event);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	conn = calloc(1, sizeof(*conn));
	if (!conn) {
		err = errno;
		rex_report_errno("calloc", err);
		goto out_reject;
	}
	conn->id = event.id;
	conn->id->context = conn;
	conn->attr = *attr;
	keep_peer_data(conn, &event);
	rex_cm_format_address(rdma_get_peer_addr(conn->id), conn->peer_name,
	                      sizeof(conn->peer_name));

	/* Give the connection an event channel of its own, away from the listener's. */
	conn->channel = create_channel();
	if (!conn->channel) {
		err = errno;
		goto out_reject;
	}
	if (rdma_migrate_id(conn->id, conn->channel)) {
		err = errno;
		rex_report_errno("rdma_migrate_id", err);
		goto out_reject;
	}
	ret = create_queues(conn, attr);
	if (ret)
		err = -ret;

out_reject:
	if (err) {
		/* Tell the client no, rather than leaving it to time out. */
		if (rdma_reject(event.id, NULL, 0))
			rex_report_errno("rdma_reject", errno);
		if (conn) {
			rex_conn_destroy(conn);
		} else if (rdma_destroy_id(event.id)) {
			rex_report_errno("rdma_destroy_id", errno);
		}
		conn = NULL;
		/* The listener is fine: this client failed, not the server.
		 * A distinct errno lets the caller wait for the next one. */
		err = ECONNABORTED;
	}
	errno = err;
	return conn;
}

int rex_conn_accept(struct rex_conn *conn, const void *data, uint8_t len)
{
	struct rdma_conn_param param = conn_param(conn, data, len);
	struct rex_cm_event event;
	int ret;

	ret = set_ack_timeout(conn);
	if (ret) {
		stop_qp(conn);
		return ret;
	}
	if (rdma_accept(conn->id, &param)) {
		ret = -errno;
		rex_report_errno("rdma_accept", errno);
		stop_qp(conn);
		return ret;
	}
	/* The client may connect and leave before we read ESTABLISHED: its
	 * DISCONNECTED can come alone (see rex_cm_wait_either()). */
	ret = rex_cm_wait_either(conn->channel, RDMA_CM_EVENT_ESTABLISHED,
	                         RDMA_CM_EVENT_DISCONNECTED, conn->attr.connect_timeout_ms, &event);
	if (ret == 0 && event.type == RDMA_CM_EVENT_DISCONNECTED) {
		rex_errorf("rdma_cm: %s left before its connection was established here "
		           "(RDMA_CM_EVENT_DISCONNECTED came first)",
		           conn->peer_name);
		conn->peer_left = true;
		ret = -ECONNRESET;
	}
	if (ret)
		stop_qp(conn);
	return ret;
}

int rex_conn_reject(struct rex_conn *conn, const void *data, uint8_t len)
{
	if (rdma_reject(conn->id, data, len)) {
		int ret = -errno;
		rex_report_errno("rdma_reject", errno);
		return ret;
	}
	return 0;
}

int rex_conn_disconnect(struct rex_conn *conn)
{
	int ret;

	if (rdma_disconnect(conn->id)) {
		ret = -errno;
		rex_report_errno("rdma_disconnect", errno);
		return ret;
	}
	/* rdma_disconnect() has moved our QP to the error state already. The
	 * reply normally comes within milliseconds; the longer wait is for a
	 * lost packet, which the CM sends again only seconds later. */
	return rex_cm_wait(conn->channel, RDMA_CM_EVENT_DISCONNECTED,
	                   conn->attr.disconnect_timeout_ms, NULL);
}

int rex_conn_wait_disconnect(struct rex_conn *conn)
{
	int ret;

	/* The peer's request may be lost and sent again seconds later, as
	 * rex_conn_disconnect() allows for: the same wait. A peer whose CM had
	 * not yet taken our ready-to-use ends with a reject (REJECTED, status
	 * 28, consumer defined): the connection is over just the same. */
	ret = conn->peer_left ? 0
	                      : rex_cm_wait_either(conn->channel, RDMA_CM_EVENT_DISCONNECTED,
	                                           RDMA_CM_EVENT_REJECTED,
	                                           conn->attr.disconnect_timeout_ms, NULL);
	/*
	 * The peer's disconnect request (DREQ) arrived as DISCONNECTED, but
	 * nothing has answered it yet: the reply (DREP) goes out only from
	 * rdma_disconnect() (or when the id is destroyed), and until then the
	 * peer's own wait for DISCONNECTED goes on. rdma_disconnect() also
	 * moves our QP to the error state: receives still posted are flushed,
	 * and nothing lands in our memory once they have completed. When the
	 * wait failed instead (the peer stayed, or a signal came), the same
	 * call ends the connection from our side: either way the QP is stopped.
	 */
	if (rdma_disconnect(conn->id)) {
		int err = errno;

		rex_report_errno("rdma_disconnect", err);
		if (!ret)
			ret = -err;
	}
	return ret;
}

/* Remember the first failure of a teardown; report each one. */
static void teardown_failed(int *first, const char *call, int err)
{
	rex_report_errno(call, err);
	if (!*first)
		*first = -err;
}

int rex_conn_destroy(struct rex_conn *conn)
{
	int first = 0, ret;

	if (!conn)
		return 0;
	if (conn->qp)
		rdma_destroy_qp(conn->id); /* returns nothing */
	if (conn->cq) {
		/* Blocks until every CQ event taken with ibv_get_cq_event()
		 * has been acknowledged: ack them first. */
		ret = ibv_destroy_cq(conn->cq);
		if (ret)
			teardown_failed(&first, "ibv_destroy_cq", ret);
	}
	if (conn->comp_channel) {
		/* Returns an errno value, like the other ibv_destroy_ calls. */
		ret = ibv_destroy_comp_channel(conn->comp_channel);
		if (ret)
			teardown_failed(&first, "ibv_destroy_comp_channel", ret);
	}
	if (conn->pd) {
		/* Fails with EBUSY while memory regions are still registered in it. */
		ret = ibv_dealloc_pd(conn->pd);
		if (ret)
			teardown_failed(&first, "ibv_dealloc_pd", ret);
	}
	if (conn->id && rdma_destroy_id(conn->id))
		teardown_failed(&first, "rdma_destroy_id", errno);
	if (conn->channel)
		rdma_destroy_event_channel(conn->channel);
	free(conn);
	return first;
}
