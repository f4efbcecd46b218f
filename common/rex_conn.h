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
 * never mix with the listener's. Every channel is non-blocking. Failures are
 * printed to stderr, naming the call, before a function returns.
 *
 * Both sides end a connection with a disconnect each: the side that starts
 * it calls rex_conn_disconnect(), the other sees the peer's DISCONNECTED in
 * rex_conn_wait_disconnect(), which answers it with rdma_disconnect() too.
 * After either, the QP is in the error state: work requests still posted
 * complete with IBV_WC_WR_FLUSH_ERR. Poll those completions before you
 * deregister the memory they name (the device may touch it until then),
 * then rex_conn_destroy().
 *
 * It blocks: every step waits (with a timeout) for its CM event, and each
 * connection has a PD and a completion channel of its own. A program that
 * serves many connections from one event loop wants the other half,
 * rex_aconn.h: nothing there waits, and the connections of a device share
 * its PD and completion channel.
 *
 * Copy rex_conn.c with rex_conn.h, rex_cm.{c,h}, rex_error.{c,h} and rex_device.{c,h}.
 */
#ifndef REX_CONN_H
#define REX_CONN_H

#include <stdbool.h>
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
	/** Resends of a packet the peer did not acknowledge (3 bits). The spec
	 *  allows 7; Soft-RoCE reads 7 as "forever", so keep it at most 6.
	 *  Only the active side's value counts: rdma_accept() ignores it. */
	uint8_t retry_count;
	/** Resends after the peer answered "receiver not ready" (3 bits): 7
	 *  means "forever" in the spec, and a peer that never posts a receive
	 *  would hang the sender. At most 6. */
	uint8_t rnr_retry_count;
	/** Local ACK timeout, as an exponent (5 bits): a packet the peer has not
	 *  acknowledged within 4.096 us x 2^ack_timeout is sent again, and after
	 *  retry_count resends the work request fails with
	 *  IBV_WC_RETRY_EXC_ERR. A peer that went silent is therefore noticed
	 *  after about (retry_count + 1) x 4.096 us x 2^ack_timeout. Each side
	 *  sets its own. 0 leaves rdma_cm's choice (for RoCE on Linux 6.1: 19,
	 *  2.1 s a try, 15 s with 6 retries). */
	uint8_t ack_timeout;
	int timeout_ms;          /**< for address and route resolution and the other CM waits */
	/** How long rex_conn_connect() and rex_conn_accept() wait for
	 *  ESTABLISHED. A lost connect request, reply or ready-to-use is sent
	 *  again only after the CM's response timeout (about 6.4 s on RoCE, as
	 *  below), so one lost packet would outlast a wait of timeout_ms. The
	 *  default, 15 s, covers two tries. */
	int connect_timeout_ms;
	/** How long rex_conn_disconnect() waits for the peer's reply, and
	 *  rex_conn_wait_disconnect() for the peer's request. A lost
	 *  disconnect request or reply is sent again only after the CM's
	 *  response timeout, about 6.4 s on RoCE (Linux 6.1: 4.096 us x 2^20,
	 *  plus twice the packet lifetime, 4.096 us x 2^18), so one lost packet
	 *  would outlast a wait of timeout_ms. The default, 15 s, covers two tries. */
	int disconnect_timeout_ms;
};

/**
 * A connected (or connecting) RC queue pair and what it needs. The helpers
 * allocate it and rex_conn_destroy() frees it. Fields are read-only for
 * callers; the verbs objects are theirs to use (post on qp, poll cq,
 * register memory in pd).
 */
struct rex_conn {
	struct rdma_event_channel *channel; /**< CM events for this connection (non-blocking fd) */
	struct rdma_cm_id *id;              /**< the connection's CM id (owns the QP) */
	/** Protection domain: register the connection's memory here (== id->pd). */
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_channel; /**< how the CQ wakes a waiting thread */
	struct ibv_cq *cq;                     /**< one CQ for sends and receives */
	struct ibv_qp *qp;                     /**< == id->qp */
	struct rex_conn_attr attr;             /**< the attributes it was made with */
	/** Private data the peer sent: its connect request (server), its accept or
	 *  its reject (client). Peer input: decode and check it before use. */
	uint8_t peer_data[REX_CM_PRIVATE_DATA_MAX];
	size_t peer_data_len; /**< bytes in peer_data; may include CM padding */
	/** RDMA READs the peer asked to have in flight towards us (server: from
	 *  its connect request; client: from the accept). A server grants at most
	 *  this many responder_resources; more would be wasted. */
	uint8_t peer_initiator_depth;
	/** RDMA READs from us the peer serves at once (server: what the client
	 *  offered; client: what the server granted, which bounds our READs). */
	uint8_t peer_responder_resources;
	char peer_name[REX_CM_ADDRESS_LEN]; /**< "address port N" of the peer, for messages */
	/** The peer's disconnect (RDMA_CM_EVENT_DISCONNECTED) was read already,
	 *  by rex_conn_accept() in place of ESTABLISHED. */
	bool peer_left;
};

/** A listening CM id and its event channel (server side). */
struct rex_listener {
	struct rdma_event_channel *channel; /**< where CONNECT_REQUEST events arrive (non-blocking) */
	struct rdma_cm_id *id;              /**< bound and listening */
	char name[REX_CM_ADDRESS_LEN];      /**< "address port N" bound, for messages */
};

/** Attributes for a small connection: 16-deep queues, one SGE, no RDMA READ, 6 retries, ACK
 *  timeout 17, 5 s waits for the CM (15 s for ESTABLISHED and for a disconnect's answer).
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
 * \brief Client: connect, sending \p data (at most 56 bytes on IB/RoCE; NULL
 *        and 0 for none), and wait for ESTABLISHED.
 *
 * The server's accept data lands in peer_data; on a reject (-ECONNREFUSED),
 * the reject's private data does. On failure the QP is moved to the error
 * state: receives posted beforehand complete as flushed (rex_cq_drain()).
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
 *         set. Release with rex_conn_destroy().
 *         errno ECONNABORTED: a request came, but its connection could not
 *         be set up (the reason was printed and the client rejected): wait
 *         for the next one. EINTR: a signal handler ran, nothing was printed
 *         and no request taken: stop, or call again. Any other errno: the
 *         listener failed (printed).
 */
struct rex_conn *rex_listener_get_request(struct rex_listener *listener,
                                          const struct rex_conn_attr *attr);

/**
 * \brief Server: accept, sending \p data (at most 196 bytes on IB/RoCE; NULL
 *        and 0 for none), and wait for ESTABLISHED.
 *
 * On failure the QP is moved to the error state: receives posted beforehand
 * complete as flushed (rex_cq_drain()).
 *
 * A client that disconnects as soon as it is connected (it did its part, or
 * it refused what our accept said) may be seen to leave with no ESTABLISHED
 * first: its disconnect request can overtake its ready-to-use, or the
 * ready-to-use was lost (rex_cm_wait_either() says why). The peer then had
 * our accept and left: this prints "PEER left before its connection was
 * established here", sets peer_left and returns -ECONNRESET, and
 * rex_conn_wait_disconnect() then answers that disconnect without waiting
 * for another. A server that serves nothing after its accept may take it as
 * the normal end; one that expects messages has lost its client.
 * \return 0, or a negative errno after printing why (-ECONNRESET: the peer
 *         connected and left before ESTABLISHED was read, as above).
 */
int rex_conn_accept(struct rex_conn *conn, const void *data, uint8_t len);

/**
 * \brief Server: refuse the request, sending \p data (at most 148 bytes on
 *        IB/RoCE; NULL and 0 for none) as the reason. Then rex_conn_destroy().
 * \return 0, or a negative errno after printing why.
 */
int rex_conn_reject(struct rex_conn *conn, const void *data, uint8_t len);

/**
 * \brief Start a disconnect and wait for RDMA_CM_EVENT_DISCONNECTED.
 *
 * rdma_disconnect() moves the QP to the error state at once (outstanding
 * work requests complete with IBV_WC_WR_FLUSH_ERR) and sends the peer a
 * disconnect request; the event comes with the peer's reply, or when the CM
 * gives up waiting for it.
 * \return 0, or a negative errno after printing why (-EINTR, printing
 *         nothing, when a signal handler ran; the QP is stopped all the same).
 */
int rex_conn_disconnect(struct rex_conn *conn);

/**
 * \brief Wait up to rex_conn_attr::disconnect_timeout_ms for the peer's
 *        disconnect, then answer it with rdma_disconnect().
 *
 * The peer's disconnect request arrives as DISCONNECTED, but nothing answers
 * it until this side calls rdma_disconnect() (or destroys the id): the peer
 * waits for that reply. rdma_disconnect() also moves the QP to the error
 * state, so that outstanding work requests complete with
 * IBV_WC_WR_FLUSH_ERR; once they have, the device touches the connection's
 * memory no more and it may be deregistered.
 *
 * A peer that ends the connection before its own CM has taken our
 * ready-to-use (a server that serves from its accept on, under load) sends
 * a reject instead: its CM still counts the connection as being set up.
 * That arrives as REJECTED, and counts here as the peer's disconnect.
 *
 * Whatever happens, the QP is stopped when this returns: when the wait fails
 * (the peer stayed connected past the timeout, a signal came, another event
 * arrived), rdma_disconnect() ends the connection from this side. When the
 * peer's disconnect was read already (peer_left), it only answers it.
 * \return 0, or a negative errno after printing why (from rex_cm_wait(), or
 *         the errno of a failing rdma_disconnect()); -EINTR prints nothing.
 */
int rex_conn_wait_disconnect(struct rex_conn *conn);

/**
 * \brief Release everything in reverse order of creation: QP, CQ, completion
 *        channel, PD, id, event channel; then free \p conn itself.
 *
 * Accepts NULL and half-built connections. Deregister the connection's
 * memory first, and acknowledge every CQ event taken: ibv_destroy_cq()
 * blocks until they are.
 * \return 0, or the negative errno of the first release that failed (it is
 *         printed, and the rest are still released; \p conn is freed either
 *         way): EBUSY from the PD means a memory region still registered in it.
 */
int rex_conn_destroy(struct rex_conn *conn);

#endif /* REX_CONN_H */
