/* SPDX-License-Identifier: MIT */
/**
 * \file rex_cm.h
 * \brief Waiting for one expected RDMA connection manager event.
 *
 * Every CM step has the same shape: start an operation (`rdma_resolve_addr`,
 * `rdma_connect`, ...), then wait on the event channel for the one event that
 * says it worked. Anything else (an error event, a timeout, an event of the
 * wrong kind) is a failure worth a precise message. rex_cm_wait() does that
 * wait, copies what the caller needs out of the event, and always acknowledges
 * the event, on every path, so no event is ever left unacked (an unacked
 * event makes rdma_destroy_id() block forever).
 *
 * Copy rex_cm.c and rex_cm.h together; they need only librdmacm.
 */
#ifndef REX_CM_H
#define REX_CM_H

#include <stdint.h>
#include <rdma/rdma_cma.h>

/** Largest private data any CM event carries (an accept on InfiniBand/RoCE: 196 bytes). */
#define REX_CM_PRIVATE_DATA_MAX 196

/** What rex_cm_wait() keeps of an event after acknowledging it. */
struct rex_cm_event {
	enum rdma_cm_event_type type; /**< the event that arrived */
	int status;                   /**< the event's status (0, a negative errno or a CM reason) */
	/** The id the event is for. For RDMA_CM_EVENT_CONNECT_REQUEST this is the
	 *  new id of the incoming connection: the caller owns it and must accept,
	 *  reject or rdma_destroy_id() it. */
	struct rdma_cm_id *id;
	uint8_t private_data_len; /**< bytes in private_data (may exceed what the peer sent: padding) */
	uint8_t private_data[REX_CM_PRIVATE_DATA_MAX]; /**< copy of the event's private data */
};

/**
 * \brief Wait for the next event on \p channel and check it is \p expected.
 *
 * The event is acknowledged before this returns, whatever happened. When it
 * is of the expected type, its id, status and private data are copied to
 * \p out and 0 is returned. Otherwise a message naming both events (with
 * rdma_event_str()) and the status is printed to stderr, \p out still
 * describes the event that came, and a negative errno is returned:
 *
 * | what came                                  | returns          |
 * |--------------------------------------------|------------------|
 * | nothing within \p timeout_ms               | -ETIMEDOUT       |
 * | RDMA_CM_EVENT_REJECTED                     | -ECONNREFUSED    |
 * | ADDR_ERROR, ROUTE_ERROR, UNREACHABLE, CONNECT_ERROR | the event's negative status if it is a negative errno, else -EHOSTUNREACH |
 * | DISCONNECTED, TIMEWAIT_EXIT                | -ECONNRESET      |
 * | DEVICE_REMOVAL                             | -ENODEV          |
 * | any other event                            | -EPROTO          |
 * | rdma_get_cm_event() or poll() failing      | -errno           |
 *
 * An unexpected CONNECT_REQUEST is rejected and its id destroyed, so it cannot
 * leak; \p out->id is then NULL. When no event was taken (timeout, poll() or
 * rdma_get_cm_event() failing) \p out is all zeros: go by the return value.
 * Private data is copied only for connected (non-UD) ids.
 *
 * Messages look like
 *
 *     rdma_cm: expected RDMA_CM_EVENT_ESTABLISHED, got RDMA_CM_EVENT_REJECTED (status 8: invalid service ID)
 *       hint: ...
 *     rdma_cm: no RDMA_CM_EVENT_ESTABLISHED within 5000 ms
 *
 * \param channel     the event channel to read; its fd may be blocking or not.
 * \param expected    the event that means success.
 * \param timeout_ms  how long to wait in milliseconds; -1 (any negative value)
 *                    waits forever. A signal does not cut the wait short.
 * \param out         filled in as described; may be NULL when nothing is needed.
 * \return 0 or a negative errno as above.
 */
int rex_cm_wait(struct rdma_event_channel *channel, enum rdma_cm_event_type expected,
		int timeout_ms, struct rex_cm_event *out);

/**
 * \brief Text for the reason a peer's CM gave in RDMA_CM_EVENT_REJECTED.
 *
 * On InfiniBand and RoCE the status of a REJECTED event is an IB CM reject
 * reason: 8 "invalid service ID" is what a connect to a port with no listener
 * gets; 28 "consumer defined" is an application calling rdma_reject().
 *
 * \return a static string; "unknown reason" for values it does not know.
 */
const char *rex_cm_reject_reason(int status);

#endif /* REX_CM_H */
