/* SPDX-License-Identifier: MIT */
/*
 * bench_wire.h: what the benchmark's client and server say to each other.
 *
 * Three fixed-width, big-endian messages travel in the CM's private data:
 *
 *   hello   (client -> server, connect request, 32 of the 56 bytes allowed):
 *           magic, version, op, mode, largest message size, depth, which
 *           connection of how many, and the client's buffer (address, rkey)
 *           for the server's answers in WRITE and WRITE WITH IMM latency;
 *   accept  (server -> client, 36 of 196 bytes): the server's buffer
 *           (address, rkey, length), the receives it keeps posted, the
 *           grant's lease in ms (0: none) and what the rkey is (a memory
 *           window over just this buffer, or the pool's region);
 *   reject  (server -> client, 24 of 148 bytes): which parameter the server
 *           refuses, the value asked and the server's own.
 *
 * Once connected, the control messages are zero-length SENDs WITH IMM: the
 * 32-bit immediate carries a type (4 bits) and a value (28 bits). A message
 * of zero bytes touches no memory, so it may land on any posted receive,
 * even one that points at the data buffer, and the data stays intact:
 *
 *   START(size) c->s   a run of messages of this size begins
 *   READY       s->c   the server is set up for it (READ: its pattern is in place)
 *   DONE        c->s   the run is over: check what arrived
 *   CPU_USER(us) s->c  the server's user CPU from START to DONE, in us
 *   CPU_SYS(us)  s->c  and its system CPU (both BENCH_CPU_UNKNOWN if not known)
 *   END         c->s   the client is finished: revoke its grant (a local
 *                      invalidate); or, instead, the client's zero-length
 *                      SEND WITH INVALIDATE of its window's rkey
 *   ENDED(why)  s->c   the grant is revoked: 0 as asked, 1 its lease ran out
 *   RESULT(v)   s->c   0 verified, BENCH_RESULT_NA nothing to check (READ),
 *                      else 1 + the first offset that differs
 *   DATA        both   the immediate of a WRITE WITH IMM of the benchmark
 *
 * Everything a peer sends is checked by the decoders before use.
 */
#ifndef BENCH_WIRE_H
#define BENCH_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define BENCH_MAGIC   0x52584236u /* "RXB6" */
/* 2: the server's CPU before its RESULT; 3: the server's ALIVE probes */
#define BENCH_VERSION 3

/* The operations. Their order is the bit order of the server's -o mask. */
enum bench_op {
	BENCH_OP_SEND = 0,
	BENCH_OP_WRITE = 1,
	BENCH_OP_WRITE_IMM = 2,
	BENCH_OP_READ = 3,
	BENCH_OP_FADD = 4, /* FETCH_AND_ADD of 1 on an 8-byte counter */
	BENCH_OP_CAS = 5,  /* COMPARE_AND_SWAP: n to n + 1 on the same counter */
};
#define BENCH_OP_COUNT 6
#define BENCH_OPS_ALL  0x3fu
/* An atomic works on 8 bytes, aligned to 8: the only size it has. */
#define BENCH_ATOMIC_SIZE 8u

static inline int bench_op_atomic(unsigned op)
{
	return op == BENCH_OP_FADD || op == BENCH_OP_CAS;
}

enum bench_mode {
	BENCH_MODE_BW = 0,
	BENCH_MODE_LAT = 1,
	/* The client's offered load (-m load): never on the wire; its hello
	 * says BW, for the server's side of it is a bandwidth run's. */
	BENCH_MODE_LOAD = 2,
};

/* Limits of the protocol. A size travels in 28 bits of an immediate. */
#define BENCH_MAX_SIZE  (128u << 20) /* bytes per message */
#define BENCH_MAX_DEPTH 4096         /* work requests in flight per QP */
#define BENCH_MAX_QPS   64           /* connections of one client run */

#define BENCH_HELLO_LEN  32
#define BENCH_ACCEPT_LEN 36
#define BENCH_REJECT_LEN 24
#define BENCH_WHY_SIZE   96 /* room for a decoder's reason */

struct bench_hello {
	uint8_t op, mode;
	uint32_t max_size; /* largest message of the run */
	uint32_t depth;
	uint16_t qp_index, qps;
	uint64_t addr; /* client's buffer for the server's answers (0: none) */
	uint32_t rkey;
};

/* What the accept's rkey is. */
enum bench_grant {
	BENCH_GRANT_POOL = 0,   /* the pool's region: every buffer of the pool */
	BENCH_GRANT_WINDOW = 1, /* a type 2 memory window over this buffer alone */
	BENCH_GRANT_NONE = 2,   /* nothing remote (SEND needs no rkey) */
};

struct bench_accept {
	uint64_t addr; /* the server's buffer */
	uint32_t rkey;
	uint32_t length;
	uint32_t recv_depth; /* receives the server keeps posted */
	uint32_t lease_ms;   /* the grant is revoked this long after it is made; 0: never */
	uint32_t grant;      /* enum bench_grant */
};

/* Why an iWARP device cannot run the benchmark (rex_device_refuse_iwarp()):
 * its control messages are immediates (its grants are memory windows and two
 * of its ops atomics, which Soft-iWARP lacks too). */
#define BENCH_IWARP_LACKS                                                                  \
	"iWARP carries no immediate data, and the benchmark's control messages are "      \
	"immediates"

enum bench_reject_reason {
	BENCH_REJECT_HELLO = 1, /* undecodable: magic, version, lengths */
	BENCH_REJECT_OP = 2,    /* value: op asked; limit: the server's op mask */
	BENCH_REJECT_SIZE = 3,  /* value: size asked; limit: the server's -s */
	BENCH_REJECT_DEPTH = 4, /* value: depth asked; limit: what the device allows */
	BENCH_REJECT_BUSY = 5,  /* limit: buffers in the server's pool */
	BENCH_REJECT_SRQ_SIZE =
	    6, /* value: a SEND's size asked; limit: the shared queue's buffers */
};

struct bench_reject {
	uint16_t reason;
	uint64_t value, limit;
};

/* Control immediates. */
enum bench_ctrl {
	BENCH_CTRL_START = 1,
	BENCH_CTRL_READY = 2,
	BENCH_CTRL_DONE = 3,
	BENCH_CTRL_RESULT = 4,
	BENCH_CTRL_DATA = 5,
	BENCH_CTRL_CPU_USER = 6,
	BENCH_CTRL_CPU_SYS = 7,
	BENCH_CTRL_END = 8,
	BENCH_CTRL_ENDED = 9,
	/* The server's probe of a client it has heard nothing from for
	 * BENCH_PROBE_MS: the client takes it and posts its receive again,
	 * nothing more. A client that stopped posts none: once its receives
	 * are used up the next probe meets "receiver not ready", the
	 * server's send fails, and the session ends, its buffer free again. */
	BENCH_CTRL_ALIVE = 10,
};
/* How long a session may be quiet before the server probes it. A client
 * with R receives posted is cut (R + 1) probes after it stopped: 06's
 * client posts 16, so about 17 s; its buffer is free once the drain
 * deadline (10 s: a stopped client answers no disconnect) has passed,
 * about 27 s after it stopped. */
#define BENCH_PROBE_MS       1000u
#define BENCH_ENDED_ASKED 0 /* ENDED's value: revoked at the client's END */
#define BENCH_ENDED_LEASE 1 /* its lease ran out */
#define BENCH_CTRL_VALUE_MAX 0x0fffffffu
#define BENCH_RESULT_NA      BENCH_CTRL_VALUE_MAX
/* A CPU time in us travels in 28 bits: up to 268 s; above, or not
 * measured, it is sent as this. */
#define BENCH_CPU_UNKNOWN BENCH_CTRL_VALUE_MAX

/* The immediate for type and value, in host order (post it with htonl()). */
static inline uint32_t bench_ctrl_imm(enum bench_ctrl type, uint32_t value)
{
	return (uint32_t)type << 28 | (value & BENCH_CTRL_VALUE_MAX);
}
static inline unsigned bench_ctrl_type(uint32_t imm)
{
	return imm >> 28;
}
static inline uint32_t bench_ctrl_value(uint32_t imm)
{
	return imm & BENCH_CTRL_VALUE_MAX;
}

/* "send", "write", "write_imm", "read"; "?" for anything else. */
const char *bench_op_name(unsigned op);
/* The op named \p name, or -1. */
int bench_op_parse(const char *name);
/* Parse a comma list of op names ("send,read" or "all") into a mask; -1 if bad. */
int bench_ops_parse(const char *list);
/* Write the names of the ops in \p mask, comma separated, into \p buf. */
const char *bench_ops_format(unsigned mask, char *buf, size_t len);
const char *bench_mode_name(unsigned mode);

void bench_hello_encode(const struct bench_hello *h, uint8_t *out);
/* Decode and check a hello of \p len bytes (padding allowed). 0, or -EPROTO
 * with the reason in \p why. */
int bench_hello_decode(const uint8_t *in, size_t len, struct bench_hello *h, char *why,
                       size_t why_len);
void bench_accept_encode(const struct bench_accept *a, uint8_t *out);
int bench_accept_decode(const uint8_t *in, size_t len, struct bench_accept *a, char *why,
                        size_t why_len);
void bench_reject_encode(const struct bench_reject *r, uint8_t *out);
int bench_reject_decode(const uint8_t *in, size_t len, struct bench_reject *r);
/* One line saying what a reject means, e.g. "size 1048576 is above the
 * server's -s 65536". */
const char *bench_reject_format(const struct bench_reject *r, char *buf, size_t len);

/*
 * The data pattern: byte i of a message from seed s. Not periodic at 256
 * bytes, so a misplaced block is caught. The seed names the connection,
 * the size and the side that wrote it (bench_seed()).
 */
uint32_t bench_seed(uint32_t qp_index, uint32_t size, int from_server);
void bench_pattern_fill(uint8_t *buf, size_t len, uint32_t seed);
/* \p len when all bytes match, else the first offset that differs. */
size_t bench_pattern_check(const uint8_t *buf, size_t len, uint32_t seed);

/* The tag WRITE latency writes into the last byte of message \p i: never 0,
 * never the tag of i - 1. */
static inline uint8_t bench_tag(uint64_t i)
{
	return (uint8_t)(i % 255 + 1);
}

#endif /* BENCH_WIRE_H */
