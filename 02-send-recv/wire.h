/* SPDX-License-Identifier: MIT */
/*
 * wire.h: what chapter 02's client and server say to each other.
 *
 * Two things travel between them, both in network byte order (big-endian),
 * both encoded and decoded field by field, never as a raw struct:
 *
 * 1. The hello, in the CM's private data of the connect request (client to
 *    server) and of the accept (server to client). It says how many receives
 *    the sender has posted, which is how many messages the peer may send
 *    before it hears back: its first credits. 16 bytes:
 *
 *      offset  size  field
 *           0     4  magic        SR_HELLO_MAGIC, "REXS" in ASCII
 *           4     2  version      SR_VERSION
 *           6     2  reserved     0
 *           8     2  credits      receives the sender posted, >= 1
 *          10     2  reserved     0
 *          12     4  max_payload  the largest payload either side may send, 1..SR_MAX_PAYLOAD
 *
 *    Every field sits at an offset that is a multiple of its size, so a
 *    packet dump reads easily. The client says what it will send (its -s);
 *    the server answers with the same value once it has posted receives that
 *    large.
 *
 * 2. The header in front of every message on the queue pair, 8 bytes:
 *
 *      offset  size  field
 *           0     1  type     SR_DATA, SR_ECHO or SR_BYE
 *           1     1  flags    0
 *           2     2  credits  receives the sender re-posted since its last message
 *           4     4  length   bytes of payload after the header
 *
 *    A DATA carries the client's payload, the ECHO sends it back unchanged,
 *    and BYE (no payload) says the client is done.
 *
 * Credits are RDS-style flow control: a receive posted is a credit granted;
 * the first credits travel in the hello, later ones in the credits field of
 * the next message header. A sender that has no credit does not send, so a
 * message never arrives before a receive is posted for it.
 */
#ifndef SEND_RECV_WIRE_H
#define SEND_RECV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SR_HELLO_MAGIC     0x52455853u /* "REXS": easy to spot in a packet dump */
#define SR_VERSION         1
#define SR_HELLO_WIRE_SIZE 16 /* bytes on the wire */
#define SR_HEADER_SIZE     8  /* bytes in front of every message */

/* The largest payload in one message, in bytes (1 MiB). Every receive must
 * be able to hold the largest message, so this bounds the memory a peer can
 * make us register: 16 receives of 1 MiB. */
#define SR_MAX_PAYLOAD (1u << 20)

/* Room for any reason a decoder gives, NUL included. */
#define SR_WHY_SIZE 64

/* [wire-types] */
/* Message types (the header's first byte). 0 is not a type: zeroed memory
 * never passes as a message. */
enum sr_type {
	SR_DATA = 1, /* client to server: a payload to echo */
	SR_ECHO = 2, /* server to client: the same payload, back */
	SR_BYE = 3,  /* client to server: no more messages; no payload */
};

/* A hello in host byte order. */
struct sr_hello {
	uint32_t magic;
	uint16_t version;
	uint16_t credits;     /* receives the sender posted */
	uint32_t max_payload; /* bytes */
};

/* A message header in host byte order. */
struct sr_header {
	uint8_t type; /* enum sr_type */
	uint8_t flags;
	uint16_t credits; /* credits returned to the peer */
	uint32_t length;  /* payload bytes after the header */
};
/* [wire-types] */

/* Fill in a version-1 hello. */
void sr_hello_init(struct sr_hello *h, uint16_t credits, uint32_t max_payload);

/* Write \p h to \p buf: exactly SR_HELLO_WIRE_SIZE bytes. */
void sr_hello_encode(const struct sr_hello *h, uint8_t buf[SR_HELLO_WIRE_SIZE]);

/*
 * Read a hello a peer sent in private data. \p len may exceed
 * SR_HELLO_WIRE_SIZE (the CM pads private data); the extra bytes are ignored.
 *
 * Returns 0 with *out filled in, or a negative errno with a reason for a log
 * line in \p why (up to \p why_size bytes, NUL-terminated):
 *   -EMSGSIZE         "too short: N bytes"
 *                     "max payload N, want 1..1048576"
 *   -EBADMSG          "bad magic 0x..."
 *   -EPROTONOSUPPORT  "version N, want 1", "reserved field 0x... not zero"
 *   -EINVAL           "no credits: the sender posted no receive"
 * *out is written only on success.
 */
int sr_hello_decode(const void *buf, size_t len, struct sr_hello *out, char *why, size_t why_size);

/* Write \p h to \p buf: exactly SR_HEADER_SIZE bytes. */
void sr_header_encode(const struct sr_header *h, uint8_t buf[SR_HEADER_SIZE]);

/*
 * Read the header of a message that arrived: \p received bytes in \p buf
 * (a receive completion's byte_len), of which at most \p max_payload may be
 * payload, the limit the hellos agreed on.
 *
 * Returns 0 with *out filled in; or a negative errno and a reason in \p why:
 *   -EMSGSIZE         "too short: N bytes"
 *                     "length N exceeds the max payload M"
 *   -EBADMSG          "unknown type N"
 *                     "length N, but M bytes of payload arrived"
 *                     "BYE with N bytes of payload"
 *   -EPROTONOSUPPORT  "unknown flags 0x.."
 * *out is written only on success: when the header is bad, nothing of the
 * message may be used.
 */
int sr_header_decode(const void *buf, size_t received, uint32_t max_payload, struct sr_header *out,
                     char *why, size_t why_size);

/* "DATA", "ECHO", "BYE", or "unknown". */
const char *sr_type_name(uint8_t type);

/* The client's test payload: byte \p offset of message number \p seq. Every
 * message gets a different pattern, so an echo of the wrong message (or of
 * stale bytes in a reused buffer) does not pass for the right one. */
uint8_t sr_pattern_byte(uint64_t seq, size_t offset);

/* Fill \p len bytes at \p buf with message \p seq's pattern. */
void sr_pattern_fill(void *buf, size_t len, uint64_t seq);

/* Check \p len bytes at \p buf against message \p seq's pattern. Returns
 * true when they match; otherwise false with the first bad offset in *offset. */
bool sr_pattern_check(const void *buf, size_t len, uint64_t seq, size_t *offset);

/*
 * What a work request was, in the upper half of its wr_id (rex_wr_id()); the
 * lower half is its buffer slot. A completion carries wr_id back, and it is
 * the only field a failed completion is sure to carry: wr_id 4294967297 in
 * an error message is send slot 1.
 */
enum sr_wr_kind { SR_WR_SEND = 1, SR_WR_RECV = 2 };

#endif /* SEND_RECV_WIRE_H */
