/* SPDX-License-Identifier: MIT */
/*
 * wire.h: the one message of chapter 01, the greeting that client and server
 * exchange inside the connection manager's own packets.
 *
 * When rdma_connect() and rdma_accept() set up a connection they can carry a
 * few bytes of "private data" for the application. It is the cheapest place
 * to say "I am this program, speaking this version": the peer reads it before
 * it commits any resources to the connection. A server that does not
 * understand a client refuses it with rdma_reject(), and says why in the
 * reject's private data, as plain text (a "refusal").
 *
 * Private data is small, and how small depends on the CM message. On
 * InfiniBand and RoCE (Soft-RoCE included) the CM packets have fixed-size
 * private data fields:
 *
 *   REQ (rdma_connect)  92 bytes, of which rdma_cm takes 36 for its own header
 *                       (addresses and ports), leaving 56 for us;
 *   REP (rdma_accept)   196 bytes, all ours;
 *   REJ (rdma_reject)   148 bytes, all ours.
 *
 * Because the fields are fixed-size, the peer receives the whole field: a
 * 32-byte greeting sent in a REQ arrives as 56 bytes, zero-padded. A decoder
 * must accept more bytes than it expects and ignore the rest. (iWARP's MPA
 * carries private data at the length sent, up to 512 bytes: there the
 * greeting arrives as 32 bytes. The same decoder serves both.)
 *
 * On the wire a greeting is 32 bytes, all integers big-endian (network byte
 * order), whatever the byte order of the machines at either end:
 *
 *   offset  size  field
 *        0     4  magic    GREETING_MAGIC, "REXG" in ASCII
 *        4     2  version  GREETING_VERSION
 *        6     2  flags    none defined in version 1: must be 0
 *        8    24  text     printable ASCII, NUL-padded, at least one NUL
 *
 * The struct below is the decoded, host-order form. It is never copied to
 * the wire as it is: greeting_encode() and greeting_decode() convert field by
 * field, so padding and byte order can never leak into the protocol.
 *
 * A refusal is different on purpose: printable ASCII text ending in a NUL,
 * with no magic and no version. The client a server refuses is often one
 * that speaks another version; whatever its version, it can still read why.
 */
#ifndef CONNECT_WIRE_H
#define CONNECT_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* [greeting] */
/* Private data limits on InfiniBand and RoCE, in bytes (see above). */
#define CM_CONNECT_PRIVATE_DATA_MAX 56
#define CM_ACCEPT_PRIVATE_DATA_MAX 196
#define CM_REJECT_PRIVATE_DATA_MAX 148

#define GREETING_MAGIC 0x52455847u /* "REXG": easy to spot in a packet dump */
/* The version this build speaks; 01-connect-client-v2 is built with 2 (-D). */
#ifndef GREETING_VERSION
#define GREETING_VERSION 1
#endif
#define GREETING_WIRE_SIZE 32 /* bytes on the wire */
#define GREETING_TEXT_SIZE 24 /* bytes of text on the wire, NUL included */
#define GREETING_TEXT_MAX (GREETING_TEXT_SIZE - 1) /* printable characters */

/* Flags a version-1 peer understands: none. A later version may define some;
 * a version-1 peer then refuses what it cannot honour, instead of guessing. */
#define GREETING_FLAGS_KNOWN 0x0000u

/* Room for any reason greeting_decode() gives, NUL included. */
#define GREETING_WHY_SIZE 32

/* The most bytes of a refusal, NUL included: short enough for a log line,
 * and well inside the 148 bytes of a reject's private data. */
#define REFUSAL_SIZE_MAX 64
_Static_assert(REFUSAL_SIZE_MAX <= CM_REJECT_PRIVATE_DATA_MAX,
	       "a refusal must fit the private data of a reject");

_Static_assert(GREETING_WIRE_SIZE <= CM_CONNECT_PRIVATE_DATA_MAX,
	       "a greeting must fit the private data of a connect request");

/* A greeting in host byte order. */
struct greeting {
	uint32_t magic;
	uint16_t version;
	uint16_t flags; /* 0 */
	char text[GREETING_TEXT_SIZE]; /* NUL-terminated */
};
/* [greeting] */

/*
 * Fill in a version-1 greeting carrying text. Text longer than
 * GREETING_TEXT_MAX characters is cut to fit.
 * Returns 0, or -EINVAL (nothing sensible in *g) when text holds a
 * character that is not printable ASCII.
 */
int greeting_init(struct greeting *g, const char *text);

/* Write g to buf in wire format: exactly GREETING_WIRE_SIZE bytes. */
void greeting_encode(const struct greeting *g, uint8_t buf[GREETING_WIRE_SIZE]);

/*
 * Read a greeting a peer sent. len may exceed GREETING_WIRE_SIZE (the CM
 * pads private data); the extra bytes are ignored.
 *
 * Returns 0 with *out filled in, or a negative errno with a short reason for
 * a log line written to why (up to why_size bytes, NUL-terminated;
 * GREETING_WHY_SIZE always has room):
 *   -EMSGSIZE         "too short: N bytes"
 *   -EBADMSG          "bad magic 0x...", "text not terminated", "text not printable"
 *   -EPROTONOSUPPORT  "version N, want 1", "unknown flags 0x..."
 * *out is only written on success.
 */
int greeting_decode(const void *buf, size_t len, struct greeting *out, char *why,
		    size_t why_size);

/*
 * Write reason as a refusal into buf (of size bytes, at most
 * REFUSAL_SIZE_MAX are used), cut to fit, with characters that are not
 * printable ASCII replaced by '?'.
 * Returns the bytes to send, NUL included (at least 1), or 0 when size is 0.
 */
size_t refusal_encode(const char *reason, uint8_t *buf, size_t size);

/*
 * Read the refusal a server sent in a reject's private data into text (of
 * text_size bytes; REFUSAL_SIZE_MAX always has room). len may exceed
 * what was sent (padding).
 * Returns 0; -ENODATA when there is no text (an empty field: a reject that
 * carried no reason); -EBADMSG when a character is not printable ASCII or no
 * NUL ends the text within REFUSAL_SIZE_MAX bytes. *text is only written on success.
 */
int refusal_decode(const void *buf, size_t len, char *text, size_t text_size);

#endif /* CONNECT_WIRE_H */
