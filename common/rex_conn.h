/* SPDX-License-Identifier: MIT */
/**
 * \file rex_conn.h
 * \brief One RC connection through the RDMA connection manager: what chapter
 *        01-connect spells out, as a helper for the chapters after it.
 *
 * A connection is made in two halves so that a chapter can do its own work in
 * between: post receives, register memory, build its private data.
 *
 * Client:                                 Server:
 *
 *     c = rex_conn_create_client(...)         l = rex_listener_create(...)
 *         event channel, id, resolve              event channel, id, bind, listen
 *         address and route, PD, CQ, QP       c = rex_listener_get_request(l, ...)
 *     ... post receives, register ...             CONNECT_REQUEST, PD, CQ, QP
 *     rex_conn_connect(c, data, len)          ... check the peer's private data,
 *         ESTABLISHED; peer's reply in c          post receives, register ...
 *     ...                                     rex_conn_accept(c, data, len)
 *     rex_conn_disconnect(c)                  rex_conn_wait_disconnect(c)
 *     rex_conn_destroy(c)                     rex_conn_destroy(c); rex_listener_destroy(l)
 *
 * Every connection owns its event channel (a server moves each accepted id
 * onto a channel of its own with rdma_migrate_id()), so a connection's events
 * never mix with the listener's. Failures are printed to stderr, naming the
 * call, before a function returns.
 *
 * Copy rex_conn.c with rex_conn.h, rex_cm.{c,h}, rex_error.{c,h} and rex_device.{c,h}.
 */
#ifndef REX_CONN_H
#define REX_CONN_H

#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>
#include <infiniband/verbs.h>

#include "rex_cm.h"

/** Sizes and limits for a connection's queues and for the CM. */
struct rex_conn_attr {
	int send_depth; /**< work requests the send queue holds */
	int recv_depth; /**< work requests the receive queue holds */
	int cq_depth;   /**< completion queue entries (at least send_depth + recv_depth) */
	int max_sge;    /**< scatter/gather entries per work request */
	/** RDMA READs this side may have outstanding towards the peer (0 if it issues none). */
	uint8_t initiator_depth;
	/** RDMA READs from the peer this side serves at once (0 if the peer issues none). */
	uint8_t responder_resources;
	/** Retries after a lost packet or an RNR NAK: at most 6, because 7 means "forever". */
	uint8_t retry_count;
	uint8_t rnr_retry_count; /**< see retry_count */
	int timeout_ms;          /**< for address and route resolution and for each CM wait */
};

/** A connected (or connecting) RC queue pair and what it needs. Fields are read-only for callers.
 */
struct rex_conn {
	struct rdma_event_channel *channel; /**< CM events for this connection */
	struct rdma_cm_id *id;              /**< the connection's CM id (owns the QP) */
	struct ibv_pd *pd;                  /**< protection domain for this connection's memory */
	struct ibv_comp_channel *comp_channel; /**< how the CQ wakes a waiting thread */
	struct ibv_cq *cq;                     /**< one CQ for sends and receives */
	struct ibv_qp *qp;                     /**< == id->qp */
	struct rex_conn_attr attr;             /**< the attributes it was made with */
	/** Private data the peer sent: its connect request (server) or its accept (client). */
	uint8_t peer_data[REX_CM_PRIVATE_DATA_MAX];
	uint8_t peer_data_len;                /**< bytes in peer_data; may include CM padding */
	char peer_name[INET6_ADDRSTRLEN + 8]; /**< "address" of the peer, for messages */
};

/** A listening CM id and its event channel (server side). */
struct rex_listener {
	struct rdma_event_channel *channel; /**< where CONNECT_REQUEST events arrive */
	struct rdma_cm_id *id;              /**< bound and listening */
	char name[INET6_ADDRSTRLEN + 8];    /**< the bound address, for messages */
};

/** Attributes for a small connection: 16-deep queues, one SGE, no RDMA READ, 6 retries, 5 s waits.
 */
void rex_conn_attr_default(struct rex_conn_attr *attr);

/**
 * \brief Client: resolve \p addr : \p port and create the PD, CQ and QP.
 *
 * \return a new connection, not yet connected; or NULL with errno set, after
 *         printing the failing call. Release with rex_conn_destroy().
 */
struct rex_conn *rex_conn_create_client(const char *addr, uint16_t port,
                                        const struct rex_conn_attr *attr);

/**
 * \brief Client: connect, sending \p data (at most 56 bytes on IB/RoCE), and
 *        wait for ESTABLISHED. The server's accept data lands in peer_data.
 * \return 0, or a negative errno after printing why (see rex_cm_wait()).
 */
int rex_conn_connect(struct rex_conn *conn, const void *data, uint8_t len);

/**
 * \brief Server: bind to \p addr (NULL: all addresses) and \p port, and listen.
 * \return the listener, or NULL with errno set after printing the failing call.
 */
struct rex_listener *rex_listener_create(const char *addr, uint16_t port);

/**
 * \brief Stop listening and release \p listener. Accepts NULL.
 * \return 0, or the negative errno of the first release that failed (it is
 *         printed; the rest are still released).
 */
int rex_listener_destroy(struct rex_listener *listener);

/**
 * \brief Server: wait (forever) for a connect request and create the PD, CQ
 *        and QP for it. The client's connect data lands in peer_data.
 * \return the new connection, to be accepted or rejected; or NULL with errno
 *         set after printing why. Release with rex_conn_destroy().
 *         errno ECONNABORTED: a request came, but its connection could not
 *         be set up (the reason was printed and the client rejected): wait
 *         for the next one. Any other errno: the listener failed.
 */
struct rex_conn *rex_listener_get_request(struct rex_listener *listener,
                                          const struct rex_conn_attr *attr);

/**
 * \brief Server: accept, sending \p data (at most 196 bytes on IB/RoCE), and
 *        wait for ESTABLISHED.
 * \return 0, or a negative errno after printing why.
 */
int rex_conn_accept(struct rex_conn *conn, const void *data, uint8_t len);

/**
 * \brief Server: refuse the request, sending \p data (at most 148 bytes) as the reason.
 * \return 0, or a negative errno after printing why.
 */
int rex_conn_reject(struct rex_conn *conn, const void *data, uint8_t len);

/**
 * \brief Start a disconnect and wait for RDMA_CM_EVENT_DISCONNECTED.
 *
 * Outstanding work requests complete with IBV_WC_WR_FLUSH_ERR afterwards.
 * \return 0, or a negative errno after printing why.
 */
int rex_conn_disconnect(struct rex_conn *conn);

/**
 * \brief Wait up to the connection's timeout for the peer's disconnect, then
 *        move the QP to the error state.
 *
 * DISCONNECTED alone leaves the local QP as it was: librdmacm moves it to
 * the error state only in rdma_disconnect() and on a reject. This function
 * does it with ibv_modify_qp(), so that, as after rex_conn_disconnect(),
 * outstanding work requests complete with IBV_WC_WR_FLUSH_ERR and the device
 * writes no more into the connection's memory: it may be deregistered.
 * \return 0, or a negative errno after printing why (from rex_cm_wait(), or
 *         the errno value of a failing ibv_modify_qp()).
 */
int rex_conn_wait_disconnect(struct rex_conn *conn);

/**
 * \brief Release everything in reverse order of creation: QP, CQ, completion
 *        channel, PD, id, event channel. Accepts NULL and half-built connections.
 * \return 0, or the negative errno of the first release that failed (it is
 *         printed, and the rest are still released): EBUSY from the CQ means
 *         an unacknowledged CQ event, from the PD a memory region still
 *         registered in it.
 */
int rex_conn_destroy(struct rex_conn *conn);

#endif /* REX_CONN_H */
