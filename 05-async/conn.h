/* SPDX-License-Identifier: MIT */
/*
 * conn.h: what chapter 05's server and client share about a connection:
 * chapter 02's messages with credits (02-send-recv/wire.h) over a
 * connection of the event loop. The connection's life (the devices, the
 * CM events, the state machine, the books of work requests, the deadlines,
 * the drain and the release) is common/rex_aconn.h, born in this chapter;
 * this file adds the message buffers and the credits.
 */
#ifndef ASYNC_CONN_H
#define ASYNC_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "rex_aconn.h"
#include "rex_buffers.h"
#include "wire.h"

/* [deadlines] */
/* From the first CM call (client) or the connect request (server) to
 * ESTABLISHED, in ms. It takes microseconds on a NIC, but a server on
 * Soft-RoCE in an emulated VM takes seconds to set up 64 connections that
 * knock at once. */
#define AS_SETUP_TIMEOUT_MS 15000
/* How long an established connection may go without a single completion,
 * in ms. The protocol has no keep-alive: a client with nothing more to say
 * says BYE, so a silent peer is a dead or stuck one. Longer than the 3.8 s
 * the transport takes to give up on a peer that does not answer (7 tries
 * of 0.54 s: rex_aconn.h), so a lost packet is resent before we give up. */
#define AS_IDLE_TIMEOUT_MS 5000
/* From the start of a close to the last flushed completion and the peer's
 * answer to our disconnect, in ms. Past it the connection is released
 * anyway, its QP first; short enough that a shutdown ends within 5 s. */
#define AS_DRAIN_TIMEOUT_MS 3000
/* [deadlines] */

/* Completions taken from a CQ at once. */
#define AS_WC_BATCH 32

/* One connection with chapter 02's messages, first in the side's structure. */
struct as_conn {
	struct rex_aconn ac;     /* first: its life, queues and books (rex_aconn.h) */
	struct rex_buffers recv; /* receive slots: header + max_payload each */
	struct rex_buffers send; /* send slots, used in turn: RC completes sends in order */
	uint32_t max_payload;    /* what the hellos agreed on */

	/* Credits, as in chapter 02: messages the peer has receives for. */
	uint32_t credits;
	uint32_t credit_limit; /* the peer's receives: credits never exceed them */
	uint16_t credits_owed; /* receives re-posted and not yet told to the peer */
};

/* The settings of every connection of the chapter: the deadlines above,
 * the rest rex_aconn's defaults. */
void as_conn_attr(struct rex_aconn_attr *attr);

/* Create the connection's CQ (polled by \p poll, with \p arg in lcq.arg)
 * and QP; register \p sends and \p recvs slots of a header plus
 * \p max_payload bytes (receives: local write; sends: nothing); post every
 * receive. Returns 0 or a negative errno (printed); what was made is
 * released with the connection. */
int as_conn_create_queues(struct as_conn *c, struct rex_aconn_dev *dev, uint32_t sends,
                          uint32_t recvs, uint32_t max_payload, rex_loop_cq_fn poll, void *arg);

/* Deregister and free the buffers: from the side's `released` function,
 * once the QP is gone. Returns 0, or -1 when a deregistration failed. */
int as_conn_release_buffers(struct as_conn *c);

/* Decode and check the header of a received message in slot \p slot
 * (byte_len bytes arrived), count the credits it returns. Returns 0 with
 * \p hdr filled in, or -EPROTO after printing what was wrong. */
int as_conn_take_message(struct as_conn *c, const struct ibv_wc *wc, uint32_t slot,
                         struct sr_header *hdr);

/* The first byte of the next send slot (its number in \p slot), or NULL
 * when every one is in flight. */
uint8_t *as_conn_send_buffer(struct as_conn *c, uint32_t *slot);

/* Send the message in send slot \p slot (as as_conn_send_buffer() gave
 * it): its header (type, \p length and the credits we owe) is written
 * here. Takes a credit: call only with one. Returns 0 or a negative errno
 * (printed). */
int as_conn_send(struct as_conn *c, uint32_t slot, uint8_t type, uint32_t length);

/* Post receive slot \p slot again: one more credit owed to the peer. */
int as_conn_repost(struct as_conn *c, uint32_t slot);

#endif /* ASYNC_CONN_H */
