/* SPDX-License-Identifier: MIT */
/*
 * wire.h: the messages of chapter 03, and the data pattern both sides know.
 *
 * Four small messages travel between client and server; none of them is the
 * data itself, which moves by RDMA WRITE and READ without the server's CPU.
 *
 *   request     client -> server, in the connect request's private data:
 *               "give me LENGTH bytes of your memory"
 *   descriptor  server -> client, in the accept's private data:
 *               "here they are: ADDR, LENGTH, RKEY"
 *   refusal     server -> client, in a reject's private data: why not
 *   done        client -> server, one SEND when the client is finished:
 *               "I wrote LENGTH bytes of the pattern for SEED; check them"
 *
 * Private data is small and its size depends on the CM message. On
 * InfiniBand and RoCE (Soft-RoCE included) the fields are fixed-size: a
 * connect request (REQ) leaves 56 bytes for us, an accept (REP) 196 and a
 * reject (REJ) 148. The peer receives the whole field, zero-padded, so every
 * decoder accepts more bytes than it needs and ignores the rest.
 *
 * Every integer is big-endian (network byte order) at a fixed offset; the
 * structs below are the decoded host-order forms and never go on the wire
 * as they are (padding, byte order and field sizes would then depend on the
 * compiler and the machine):
 *
 *   request (16 bytes)           descriptor (28 bytes)
 *     0  4  magic  "RWRQ"          0  4  magic  "RWDS"
 *     4  2  version 1              4  2  version 1
 *     6  2  reserved, 0            6  2  reserved, 0
 *     8  8  length                 8  8  addr   (the server's virtual address)
 *                                 16  8  length
 *                                 24  4  rkey
 *
 *   done (20 bytes)              refusal (96 bytes)
 *     0  4  magic  "RWDN"          0  4  magic  "RWNO"
 *     4  2  version 1              4  2  version 1
 *     6  2  type, 1 (done)         6  2  reserved, 0
 *     8  4  seed                   8 88  text, printable ASCII, NUL-padded
 *    12  8  length
 *
 * Each message has a magic of its own, so one message can never be taken for
 * another. The decoders check everything a hostile peer could get wrong and
 * return 0 or a negative errno with a short reason for a log line.
 */
#ifndef READ_WRITE_WIRE_H
#define READ_WRITE_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* Private data limits on InfiniBand and RoCE, in bytes (see above). */
#define RW_CONNECT_PRIVATE_DATA_MAX 56
#define RW_ACCEPT_PRIVATE_DATA_MAX  196
#define RW_REJECT_PRIVATE_DATA_MAX  148

#define RW_VERSION 1

#define RW_REQUEST_MAGIC    0x52575251u /* "RWRQ" */
#define RW_DESCRIPTOR_MAGIC 0x52574453u /* "RWDS" */
#define RW_DONE_MAGIC       0x5257444eu /* "RWDN" */
#define RW_REFUSAL_MAGIC    0x52574e4fu /* "RWNO" */

#define RW_REQUEST_SIZE      16 /* bytes on the wire */
#define RW_DESCRIPTOR_SIZE   28 /* bytes on the wire */
#define RW_DONE_SIZE         20 /* bytes on the wire */
#define RW_REFUSAL_SIZE      96 /* bytes on the wire */
#define RW_REFUSAL_TEXT_SIZE 88 /* text bytes on the wire, NUL included */

#define RW_DONE_TYPE_DONE 1 /* the only type in version 1 */

/* Room for any reason a decoder gives, NUL included. Every reason fits a
 * refusal's text whole, so the server can pass it on to the client. */
#define RW_WHY_SIZE RW_REFUSAL_TEXT_SIZE

_Static_assert(RW_REQUEST_SIZE <= RW_CONNECT_PRIVATE_DATA_MAX,
               "a request must fit the private data of a connect request");
_Static_assert(RW_DESCRIPTOR_SIZE <= RW_ACCEPT_PRIVATE_DATA_MAX,
               "a descriptor must fit the private data of an accept");
_Static_assert(RW_REFUSAL_SIZE <= RW_REJECT_PRIVATE_DATA_MAX,
               "a refusal must fit the private data of a reject");

/* "Give me this many bytes of your memory." */
struct rw_request {
	uint64_t length; /* bytes, at least 1 */
};

/* Where the granted bytes are and the key that opens them. */
struct rw_descriptor {
	uint64_t addr;   /* the server's virtual address of the first byte */
	uint64_t length; /* bytes granted from addr on */
	uint32_t rkey;   /* the remote key of the server's memory region */
};

/* "I am done; the first LENGTH bytes hold the pattern for SEED." */
struct rw_done {
	uint32_t seed;
	uint64_t length;
};

/* Why the server refused a request. */
struct rw_refusal {
	char text[RW_REFUSAL_TEXT_SIZE]; /* NUL-terminated, printable ASCII */
};

/* Write the message in wire format into \p buf (exactly the _SIZE bytes). */
void rw_request_encode(const struct rw_request *r, uint8_t buf[RW_REQUEST_SIZE]);
void rw_descriptor_encode(const struct rw_descriptor *d, uint8_t buf[RW_DESCRIPTOR_SIZE]);
void rw_done_encode(const struct rw_done *d, uint8_t buf[RW_DONE_SIZE]);
void rw_refusal_encode(const struct rw_refusal *r, uint8_t buf[RW_REFUSAL_SIZE]);

/*
 * Fill in a refusal whose text is \p text, cut to RW_REFUSAL_TEXT_SIZE - 1
 * characters; characters that are not printable ASCII become '?'.
 */
void rw_refusal_init(struct rw_refusal *r, const char *text);

/*
 * The decoders read a message a peer sent. \p len may exceed the message's
 * size (the CM pads private data); the extra bytes are ignored. Each returns
 * 0 with *out filled in, or a negative errno and a reason written to \p why
 * (up to \p why_size bytes, NUL-terminated; RW_WHY_SIZE always has room).
 * *out is only written on success. Common to all:
 *   -EMSGSIZE         "too short: N bytes"
 *   -EBADMSG          "bad magic 0x...", "reserved field 0x..., want 0"
 *   -EPROTONOSUPPORT  "version N, want 1"
 */

/*
 * A client's request, at a server that has \p have bytes to give.
 *   -ERANGE  "zero length", "asks for N bytes, this server has M"
 */
int rw_request_decode(const void *buf, size_t len, uint64_t have, struct rw_request *out, char *why,
                      size_t why_size);

/*
 * The server's descriptor, at a client that asked for \p asked bytes. A
 * grant of other than exactly \p asked bytes is refused: more would be
 * memory we did not ask about, less would make us write past the end.
 *   -ERANGE     "zero length", "length N beyond the M bytes asked for",
 *               "length N short of the M bytes asked for"
 *   -EOVERFLOW  "address 0x... + length N overflows"
 */
int rw_descriptor_decode(const void *buf, size_t len, uint64_t asked, struct rw_descriptor *out,
                         char *why, size_t why_size);

/*
 * The client's done message, at a server that granted \p granted bytes.
 *   -EPROTO  "type N, want 1"
 *   -ERANGE  "length N, but M bytes were granted"
 */
int rw_done_decode(const void *buf, size_t len, uint64_t granted, struct rw_done *out, char *why,
                   size_t why_size);

/*
 * A server's refusal.
 *   -EBADMSG  also "text not terminated", "text not printable"
 */
int rw_refusal_decode(const void *buf, size_t len, struct rw_refusal *out, char *why,
                      size_t why_size);

/*
 * The data pattern: byte \p offset of the pattern for \p seed. It is a hash
 * of (seed, offset / 8), so every 8-byte word differs from its neighbours and
 * a block that lands at the wrong offset does not match; and the server can
 * check the data without being sent a copy of it, knowing only the seed.
 */
uint8_t rw_pattern_byte(uint32_t seed, uint64_t offset);

/* Fill \p len bytes at \p buf with the pattern for \p seed (offset 0 at buf). */
void rw_pattern_fill(void *buf, uint64_t len, uint32_t seed);

/*
 * Check \p len bytes at \p buf against the pattern for \p seed.
 * Returns 0 when every byte matches, or -EBADMSG with the offset of the first
 * byte that does not in *bad_offset.
 */
int rw_pattern_check(const void *buf, uint64_t len, uint32_t seed, uint64_t *bad_offset);

#endif /* READ_WRITE_WIRE_H */
