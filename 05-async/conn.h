/* SPDX-License-Identifier: MIT */
/*
 * conn.h: what chapter 05's server and client share about a connection
 * driven by the event loop: the devices, the CM events taken without
 * blocking, the queues and buffers of one connection, its messages with
 * credits (chapter 02's wire format, 02-send-recv/wire.h), its deadlines,
 * and its end: disconnect, drain, release.
 *
 * A connection's life (rex_state in common/rex_loop.h):
 *
 *     client: RESOLVING -> CONNECTING -> ESTABLISHED -> DRAINING -> CLOSED
 *     server:              CONNECTING -> ESTABLISHED -> DRAINING -> CLOSED
 *
 * and every failure on the way leads to DRAINING too. Nothing is released
 * before DRAINING is over: the QP is in the error state, every work request
 * posted has completed (most as flushed), and the peer has answered our
 * disconnect request if we sent one. Then a task of the loop releases the
 * QP, the CQ, the memory and the CM id, in that order, and calls the side's
 * `released` function.
 */
#ifndef ASYNC_CONN_H
#define ASYNC_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_buffers.h"
#include "rex_cm.h"
#include "rex_loop.h"
#include "wire.h"

/* [deadlines] */
/* From the first CM call (client) or the connect request (server) to
 * ESTABLISHED, in ms: address and route resolution, the handshake. It
 * takes microseconds on a NIC, but a server on Soft-RoCE in an emulated
 * VM takes seconds to set up 128 connections that knock at once. */
#define AS_SETUP_TIMEOUT_MS 15000
/* How long an established connection may go without a single completion,
 * in ms. The protocol has no keep-alive: a client with nothing more to say
 * says BYE, so a silent peer is a dead or stuck one. */
#define AS_IDLE_TIMEOUT_MS 5000
/* From the start of a close to the last flushed completion and the peer's
 * answer to our disconnect, in ms. Past it the connection is released
 * anyway, its QP first; short enough that a shutdown ends within 5 s. */
#define AS_DRAIN_TIMEOUT_MS 3000
/* [deadlines] */

/* Address and route resolution, each, in ms (the CM reports its own
 * timeout as an event; AS_SETUP_TIMEOUT_MS bounds the whole). */
#define AS_RESOLVE_TIMEOUT_MS 2000

/* Completions taken from a CQ at once. */
#define AS_WC_BATCH 32
/* CM events taken from the channel in one round of the loop, at most: the
 * rest waits for the next round, after the other fds (see REX_LOOP_BUDGET). */
#define AS_CM_BUDGET 32

/* One RDMA device the program uses, found through a CM id's `verbs`. */
struct as_device {
	struct ibv_context *verbs;             /* librdmacm's, shared by all ids on it */
	const char *who;                       /* "server" or "client", for messages */
	struct ibv_device_attr attr;           /* its limits, asked once */
	struct ibv_pd *pd;                     /* all memory of its connections */
	struct ibv_comp_channel *comp_channel; /* all CQs of its connections */
	bool watching_channel, watching_async; /* the loop watches its fds */
	struct as_conn *conns;                 /* its connections (for device-wide events) */
	struct as_device *next;
};

/* One connection, embedded first in the side's own structure. */
struct as_conn {
	const char *who;                    /* "server" or "client": the start of its lines */
	char name[32 + REX_CM_ADDRESS_LEN]; /* "connection 3 from 10.77.0.1 port 5000" */
	enum rex_state state;
	struct rex_loop *loop;
	struct rdma_cm_id *id;               /* id->context is this connection */
	struct as_device *dev;               /* NULL until the QP exists */
	struct as_conn *dev_prev, *dev_next; /* in dev->conns */

	struct rex_loop_cq lcq; /* the CQ's record: cq_context */
	struct ibv_cq *cq;
	struct ibv_qp *qp;       /* qp_context is this connection */
	struct rex_buffers recv; /* receive slots: header + max_payload each */
	struct rex_buffers send; /* send slots, as many */
	uint32_t *free_send;     /* stack of send slots not in use */
	uint32_t nfree_send;
	uint32_t max_payload; /* what the hellos agreed on */

	/* Credits, as in chapter 02: messages the peer has receives for. */
	uint32_t credits;
	uint32_t credit_limit; /* the peer's receives: credits never exceed them */
	uint16_t credits_owed; /* receives re-posted and not yet told to the peer */

	uint32_t outstanding;           /* work requests posted, completion not yet taken */
	uint64_t active_ns;             /* the loop's time of the last completion (idle deadline) */
	bool await_disconnect;          /* we sent a disconnect request: DISCONNECTED will come */
	bool cq_dead;                   /* CQ overrun or device gone: nothing more will drain */
	bool failed;                    /* ended by a failure, not by the protocol */
	bool drain_cut;                 /* released at the drain deadline, not drained */
	struct rex_loop_timer deadline; /* setup, idle or drain, by state */
	struct rex_loop_task release;   /* posted when DRAINING is over */
	/* Called once everything is released; it frees the side's structure. */
	void (*released)(struct as_conn *conn);
};

/* The devices a program uses, and what their events go to. */
struct as_devices {
	struct as_device *first;
	struct rex_loop *loop;
	const char *who;
};

/* Set up \p c for a CM id (id->context = c): state \p state, \p name for
 * messages, the deadline for setting it up started. */
void as_conn_init(struct as_conn *c, struct rex_loop *loop, const char *who, struct rdma_cm_id *id,
                  enum rex_state state, void (*released)(struct as_conn *));

/* Take the next CM event from \p channel without blocking: copy what we use
 * of it into \p out, acknowledge it. Returns 1 with an event, 0 when there is
 * none (EAGAIN), or a negative errno after printing the failing call. */
int as_cm_next(struct rdma_event_channel *channel, struct rex_cm_event *out);

/* The device of \p verbs, set up on first use: PD, completion channel and
 * async fd, both watched by the loop. NULL after printing why. */
struct as_device *as_device_get(struct as_devices *devs, struct ibv_context *verbs);

/* Stop watching every device and release it: completion channel and PD.
 * Their release fails (EBUSY) while a CQ or memory region remains: it
 * proves that every connection released its own. Returns 0 or the first
 * negative errno (printed). */
int as_devices_release(struct as_devices *devs);

/* Create the connection's CQ (waking the loop through the device's channel,
 * polled by \p poll) and its QP; register \p sends and \p recvs slots of a
 * header plus \p max_payload bytes (receives: local write; sends: nothing);
 * post every receive. Returns 0 or a negative errno (printed); what was made
 * is released with the connection. */
int as_conn_create_queues(struct as_conn *c, struct as_device *dev, uint32_t sends, uint32_t recvs,
                          uint32_t max_payload, rex_loop_cq_fn poll);

/* Take up to \p max completions into \p wc (how many in \p taken: poll
 * again while it is \p max) and keep the books: outstanding work requests,
 * the time of the last completion. Returns how many of them, moved to the
 * front of \p wc, are there to act on: successful completions of a
 * connection that is not closing. A failed one is reported and closes the connection; a flushed
 * one of a closing connection is the end it expects, not an error. When the
 * last outstanding work request of a draining connection completes, its
 * release is posted. */
int as_conn_poll(struct as_conn *c, struct ibv_wc *wc, int max, int *taken);

/* Decode and check the header of a received message in slot \p slot
 * (byte_len bytes arrived), count the credits it returns. Returns 0 with
 * \p hdr filled in, or -EPROTO after printing what was wrong. */
int as_conn_take_message(struct as_conn *c, const struct ibv_wc *wc, uint32_t slot,
                         struct sr_header *hdr);

/* The first byte of a free send slot (its number in \p slot), or NULL when
 * every one is in flight. */
uint8_t *as_conn_send_buffer(struct as_conn *c, uint32_t *slot);

/* Send the message in send slot \p slot: its header (type, \p length and
 * the credits we owe) is written here. Takes a credit: call only with one.
 * Returns 0 or a negative errno (printed; the slot is free again). */
int as_conn_send(struct as_conn *c, uint32_t slot, uint8_t type, uint32_t length);

/* Post receive slot \p slot again: one more credit owed to the peer. */
int as_conn_repost(struct as_conn *c, uint32_t slot);

/* Change the state, or report a refused transition (a bug) and return -EPERM. */
int as_conn_set_state(struct as_conn *c, enum rex_state to);

/* ESTABLISHED came: the state, and the idle deadline from now on. */
int as_conn_established(struct as_conn *c);

/* Start closing: DRAINING. An established connection sends a disconnect
 * request (rdma_disconnect(), which moves the QP to the error state); any
 * other gets its QP moved to the error state. Either way the work requests
 * still posted complete as flushed. \p failed marks it as failed. A
 * connection closing already stays as it is (only \p failed is noted). */
void as_conn_close(struct as_conn *c, bool failed);

/* Take whatever completions the CQ holds now, through the connection's
 * own function: a DISCONNECTED event and the completion of the peer's last
 * message race on two channels, and the message must not be lost to it. */
void as_conn_take_completions(struct as_conn *c);

/* The peer's DISCONNECTED came (its disconnect request, or its answer to
 * ours): answer it unless we asked, and close. */
void as_conn_disconnected(struct as_conn *c);

/* An asynchronous event of a device (\p arg: its struct as_device), for
 * rex_loop_add_async(): a QP or CQ
 * error closes its connection; a port or device error is reported, and a
 * fatal device error closes every connection on it. */
void as_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg);

#endif /* ASYNC_CONN_H */
