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
 * Make every event channel non-blocking (rex_cm_channel_nonblocking()) before
 * waiting on it: poll() saying "readable" does not promise that
 * rdma_get_cm_event() returns at once, because librdmacm may discard an
 * event it cannot match to an id and read again, and on a blocking fd that
 * second read sleeps past any timeout.
 *
 * Copy rex_cm.c and rex_cm.h with rex_error.c and rex_error.h; they need
 * librdmacm and libibverbs.
 */
#ifndef REX_CM_H
#define REX_CM_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <rdma/rdma_cma.h>

/**
 * Room for any private data an event carries: librdmacm's buffer. What a
 * peer can really send is less, and depends on the CM message: on
 * InfiniBand and RoCE, 56 bytes with a connect request, 196 with an accept,
 * 148 with a reject.
 */
#define REX_CM_PRIVATE_DATA_MAX 256

/** Room for rex_cm_format_address()'s text, e.g. "fe80::1 port 20886", NUL included. */
#define REX_CM_ADDRESS_LEN (INET6_ADDRSTRLEN + 12)

/** What rex_cm_wait() keeps of an event after acknowledging it. */
struct rex_cm_event {
	enum rdma_cm_event_type type; /**< the event that arrived */
	int status;                   /**< the event's status (0, a negative errno or a CM reason) */
	/** The id the event is for. For RDMA_CM_EVENT_CONNECT_REQUEST this is the
	 *  new id of the incoming connection: the caller owns it and must accept,
	 *  reject or rdma_destroy_id() it. */
	struct rdma_cm_id *id;
	/** From a connect request or an accept (0 for other events), seen from
	 *  our side, as the kernel gives it: RDMA READs and atomics we may have
	 *  in flight towards the peer (the peer's responder resources). */
	uint8_t initiator_depth;
	/** RDMA READs and atomics the peer will have in flight towards us (its
	 *  initiator depth): a server that serves them grants at most this
	 *  many responder resources. */
	uint8_t responder_resources;
	size_t private_data_len; /**< bytes in private_data (may exceed what the peer sent: padding) */
	uint8_t private_data[REX_CM_PRIVATE_DATA_MAX]; /**< copy of the event's private data */
};

/**
 * \brief Make \p channel's fd non-blocking, as rex_cm_wait() wants it.
 * \return 0, or a negative errno after printing the failing fcntl().
 */
int rex_cm_channel_nonblocking(struct rdma_event_channel *channel);

/**
 * \brief Write \p sa as numeric text with its port, e.g. "10.77.0.1 port 20886",
 *        into \p buf (#REX_CM_ADDRESS_LEN bytes always have room).
 *
 * Takes what rdma_get_local_addr() and rdma_get_peer_addr() return. An
 * address that is not IPv4 or IPv6 (or NULL) is written as "? port 0".
 * \return \p buf.
 */
const char *rex_cm_format_address(const struct sockaddr *sa, char *buf, size_t len);

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
 * | a signal handler ran (nothing printed)     | -EINTR           |
 * | rdma_get_cm_event() or poll() failing      | -errno           |
 *
 * -EINTR is what read(2) does without SA_RESTART: a program whose SIGINT
 * handler sets a flag gets control back, even from a server waiting forever
 * for a connect request. No event was taken; call again to go on waiting.
 * An unexpected CONNECT_REQUEST is rejected and its id destroyed, so it cannot
 * leak; \p out->id is then NULL. When no event was taken (timeout, poll() or
 * rdma_get_cm_event() failing) \p out is all zeros: go by the return value.
 * Private data is copied only for connected (non-UD) ids.
 *
 * Messages start with the program's name (see rex_errorf()), and look like
 *
 *     prog: rdma_cm: expected RDMA_CM_EVENT_ESTABLISHED, got RDMA_CM_EVENT_REJECTED (status 8: invalid service ID)
 *       hint: ...
 *     prog: rdma_cm: no RDMA_CM_EVENT_ESTABLISHED within 5000 ms
 *
 * \param channel     the event channel to read, made non-blocking with
 *                    rex_cm_channel_nonblocking() (a blocking one works, but
 *                    may then wait past \p timeout_ms; see above).
 * \param expected    the event that means success.
 * \param timeout_ms  how long to wait in milliseconds; -1 (any negative value)
 *                    waits forever.
 * \param out         filled in as described; may be NULL when nothing is needed.
 * \return 0 or a negative errno as above.
 */
int rex_cm_wait(struct rdma_event_channel *channel, enum rdma_cm_event_type expected,
		int timeout_ms, struct rex_cm_event *out);

/**
 * \brief rex_cm_wait() for a step with two good outcomes: \p expected or
 *        \p or_this; \p out->type says which came.
 *
 * Where the peer may already have gone, the CM does not promise the order a
 * program would like. A server that accepted a client which disconnects at
 * once can read RDMA_CM_EVENT_DISCONNECTED with no ESTABLISHED before it:
 * the client's DREQ can be handled before its RTU (the kernel's CM handles
 * each message in its own work item), or the RTU was lost, and the CM then
 * reports the disconnect alone. Waiting for ESTABLISHED only would call a
 * client that did everything right a failure. Everything else is as for
 * rex_cm_wait(), which is this function with \p or_this == \p expected.
 */
int rex_cm_wait_either(struct rdma_event_channel *channel, enum rdma_cm_event_type expected,
                       enum rdma_cm_event_type or_this, int timeout_ms, struct rex_cm_event *out);

/**
 * \brief Take the next event from a non-blocking \p channel, if there is
 *        one: copy it into \p out and acknowledge it at once, so that the
 *        id it is for may be destroyed while the copy is handled
 *        (rdma_destroy_id() waits for every event of its id to be
 *        acknowledged). For event loops; rex_cm_wait() is the blocking kind.
 * \return 1 with \p out filled in, 0 when no event is waiting (EAGAIN), or
 *         a negative errno after printing the failing rdma_get_cm_event(). An
 *         event whose acknowledgement fails is still returned (the failure
 *         printed): an event is never dropped.
 */
int rex_cm_next(struct rdma_event_channel *channel, struct rex_cm_event *out);

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
