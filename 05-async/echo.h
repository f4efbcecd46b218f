/* SPDX-License-Identifier: MIT */
/*
 * echo.h: chapter 05's service, as its server and client both speak it,
 * over common/rex_svc.h (messages with chapter 02's credits, each
 * connection's life, the devices, the deadlines: the helper's, born in
 * this chapter).
 *
 * The client's private data (its hello): the payload size it will send,
 * 4 bytes, big-endian. A message is a type byte and its payload. The
 * client sends DATA; the server sends each DATA back as it came, its echo;
 * the client says BYE once every echo is in, the server answers it with a
 * BYE, and the client disconnects: the side that answers the disconnect is
 * the server, whose loop is always running. Credits, in the helper's 4-byte header in front of each
 * message, keep either side from sending to a receive not posted.
 */
#ifndef ASYNC_ECHO_H
#define ASYNC_ECHO_H

#include "rex_svc.h"

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
 * anyway, its QP first. Two of the CM's tries of the disconnect (4.6 s
 * each, rex_aconn.h): at 3 s, 53 of 128 connections gave up on a peer that a
 * loaded VM kept busy for seconds, and their released ids cancelled the
 * resends the peer was waiting for. */
#define AS_DRAIN_TIMEOUT_MS 10000
/* [deadlines] */

/* [wire] */
#define AS_HELLO_SIZE   4    /* the client's private data: its payload size */
#define AS_MAX_PAYLOAD  4096 /* bytes of a DATA's payload, at most */
#define AS_TYPE_SIZE    1    /* the type byte in front of the payload */
enum as_type { AS_DATA = 'D', AS_BYE = 'B' };
/* [wire] */

/* The settings both sides share: the deadlines above, rex_svc's defaults
 * for the rest; who, messages and slots are each side's to set. */
static inline void as_config(struct rex_svc_config *cfg, const char *who)
{
	rex_svc_config_default(cfg);
	cfg->who = who;
	cfg->attr.setup_timeout_ms = AS_SETUP_TIMEOUT_MS;
	cfg->attr.idle_timeout_ms = AS_IDLE_TIMEOUT_MS;
	cfg->attr.drain_timeout_ms = AS_DRAIN_TIMEOUT_MS;
}

#endif /* ASYNC_ECHO_H */
