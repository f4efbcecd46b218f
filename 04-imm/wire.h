/* SPDX-License-Identifier: MIT */
/*
 * wire.h: what chapter 04's client and server say to each other.
 *
 * The client streams messages into a ring of slots in the server's memory
 * with RDMA WRITE WITH IMMEDIATE; the server hands slots back as credits
 * with SEND WITH IMMEDIATE. Apart from the messages themselves, everything
 * the two say is a 32-bit immediate, plus one descriptor at connection time:
 *
 * 1. The descriptor, in the accept's private data (server to client): where
 *    the ring is and how it is cut. 28 bytes, every integer big-endian:
 *
 *      offset  size  field
 *           0     4  magic      IM_DESCRIPTOR_MAGIC, "IMRG" in ASCII
 *           4     2  version    IM_VERSION
 *           6     2  reserved   0
 *           8     8  addr       the server's virtual address of slot 0
 *          16     4  rkey       the ring's remote key
 *          20     4  slot_size  bytes per slot, 1..IM_MAX_SLOT_SIZE
 *          24     4  slots      slots in the ring, 1..IM_MAX_SLOTS
 *
 *    Slot i starts at addr + i * slot_size.
 *
 * 2. The immediate of every RDMA WRITE WITH IMM (client to server): which
 *    slot the write filled, and how many bytes of it hold the message:
 *
 *       31        24 23                                       0
 *      +------------+------------------------------------------+
 *      |    slot    |                  length                  |
 *      +------------+------------------------------------------+
 *
 *    The split is a trade: every bit given to the slot is taken from the
 *    length. 24 bits of length let a slot hold 8 MiB exactly (8388608 =
 *    2^23 needs 24 bits), which is the most one work request may carry on
 *    Soft-RoCE (the port's max_msg_sz), so a message is always one WRITE.
 *    That leaves 8 bits: 256 slots, far more than it takes to keep a link
 *    busy (a few round trips' worth of messages). A length of 0 is a
 *    doorbell: the immediate is the whole message.
 *
 * 3. The immediate of a credit, a SEND WITH IMM with no payload (server to
 *    client): how many slots the server gives back, 1..slots. They are the
 *    oldest slots the client wrote: both sides walk the ring in order.
 *
 * 4. The immediate of "done", a SEND WITH IMM with no payload (client to
 *    server): how many messages the client wrote (mod 2^32).
 *
 * An immediate travels in network byte order, and verbs keeps it that way
 * on both sides: imm_data is a __be32 in struct ibv_send_wr and in struct
 * ibv_wc. Encode with htonl() just before posting, decode with ntohl() just
 * after polling, and a little-endian and a big-endian machine agree.
 *
 * The ring's bookkeeping (struct im_ring) is part of the protocol too: the
 * client follows it when it writes, and the server checks every immediate
 * against its own copy, so a client cannot name a slot it does not hold.
 */
#ifndef IMM_WIRE_H
#define IMM_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h> /* __be32, struct ibv_wc */

/* [imm-layout] */
/* Bits 31..24 of an immediate: the slot; bits 23..0: the length in bytes. */
#define IM_SLOT_BITS   8
#define IM_LENGTH_BITS 24
#define IM_MAX_SLOTS   (1u << IM_SLOT_BITS)          /* 256 */
#define IM_MAX_LENGTH  ((1u << IM_LENGTH_BITS) - 1u) /* 16 MiB - 1 */
/* The largest slot: the largest power of two the length field holds. */
#define IM_MAX_SLOT_SIZE (1u << (IM_LENGTH_BITS - 1)) /* 8 MiB */
/* [imm-layout] */

#define IM_DESCRIPTOR_MAGIC 0x494d5247u /* "IMRG" */
#define IM_VERSION          1
#define IM_DESCRIPTOR_SIZE  28 /* bytes on the wire */

/* Why an iWARP device cannot run this chapter (rex_device_refuse_iwarp()). */
#define IM_IWARP_LACKS                                                                     \
	"iWARP carries no immediate data, and every message here is an RDMA WRITE WITH "   \
	"IMMEDIATE"

/* Private data an accept carries on InfiniBand and RoCE, in bytes. */
#define IM_ACCEPT_PRIVATE_DATA_MAX 196
_Static_assert(IM_DESCRIPTOR_SIZE <= IM_ACCEPT_PRIVATE_DATA_MAX,
               "the descriptor must fit the private data of an accept");
_Static_assert(IM_MAX_SLOT_SIZE <= IM_MAX_LENGTH,
               "a full slot's length must fit the immediate's length field");

/* Room for any reason a decoder gives, NUL included. */
#define IM_WHY_SIZE 96

/* The ring, as the server describes it. */
struct im_descriptor {
	uint64_t addr;      /* the server's virtual address of slot 0 */
	uint32_t rkey;      /* the ring's remote key */
	uint32_t slot_size; /* bytes per slot */
	uint32_t slots;     /* slots in the ring */
};

/* What a WRITE WITH IMM's immediate says. */
struct im_imm {
	uint32_t slot;   /* 0..slots - 1 */
	uint32_t length; /* bytes of the slot the message fills; 0: a doorbell */
};

/* Write \p d in wire format into \p buf: exactly IM_DESCRIPTOR_SIZE bytes. */
void im_descriptor_encode(const struct im_descriptor *d, uint8_t buf[IM_DESCRIPTOR_SIZE]);

/*
 * Read the descriptor a server sent, at a client whose messages are
 * \p message_size bytes. \p len may exceed IM_DESCRIPTOR_SIZE (the CM pads
 * private data); the extra bytes are ignored. Returns 0 with *out filled in,
 * or a negative errno with a reason in \p why (up to \p why_size bytes;
 * IM_WHY_SIZE always has room); *out is written only on success:
 *   -EMSGSIZE         "too short: N bytes"
 *   -EBADMSG          "bad magic 0x...", "reserved field 0x..., want 0"
 *   -EPROTONOSUPPORT  "version N, want 1"
 *   -ERANGE           "slot size N, want 1..8388608", "N slots, want 1..256",
 *                     "N-byte slots cannot hold our M-byte messages"
 *   -EOVERFLOW        "ring at 0x... + N wraps around"
 */
int im_descriptor_decode(const void *buf, size_t len, uint64_t message_size,
                         struct im_descriptor *out, char *why, size_t why_size);

/* [imm-codec] */
/*
 * The immediate of a WRITE WITH IMM that filled \p length bytes of slot
 * \p slot, in network byte order, ready for ibv_send_wr.imm_data. Each value
 * is cut to its field (slot < IM_MAX_SLOTS, length <= IM_MAX_LENGTH), so one
 * can never spill into the other: check them before encoding.
 */
__be32 im_imm_encode(uint32_t slot, uint32_t length);

/*
 * Read the immediate of a WRITE WITH IMM (ibv_wc.imm_data, as it came) for a
 * ring of \p slots slots of \p slot_size bytes. Returns 0 with *out filled
 * in, or a negative errno and a reason in \p why; *out is always filled in
 * with the raw fields, so an error message can name them:
 *   -ERANGE    "slot N is beyond the ring's last slot, M"
 *   -EMSGSIZE  "length N exceeds the M-byte slot"
 */
int im_imm_decode(__be32 imm, uint32_t slots, uint32_t slot_size, struct im_imm *out, char *why,
                  size_t why_size);
/* [imm-codec] */

/* [ring] */
/* [ring-struct] */
/*
 * A ring's bookkeeping, the same on both sides. The client (the writer)
 * holds `held` slots: next, next + 1, ... (mod slots). It writes them in that
 * order; each message takes one, and the server's credits give them back,
 * oldest first. The server keeps its own copy and checks every immediate
 * against it.
 */
struct im_ring {
	uint32_t slots; /* in the ring */
	uint32_t next;  /* the slot the next message must go into */
	uint32_t held;  /* slots the writer holds, from next on */
};
/* [ring-struct] */

/* At the start the writer holds every slot. */
void im_ring_init(struct im_ring *r, uint32_t slots);

/* Writer: take the next slot (only when r->held > 0) and return its index. */
uint32_t im_ring_take(struct im_ring *r);

/*
 * Server: a message arrived in \p slot (already range-checked by
 * im_imm_decode()). It must be the next slot, and the client must hold it;
 * then it is taken as im_ring_take() would. Returns 0, or a negative errno
 * and a reason in \p why, leaving \p r as it was:
 *   -EACCES  "slot N is not the client's: it holds none",
 *            "slot N is not the client's: it holds M from slot K on"
 *   -EPROTO  "slot N out of order: the next is slot K"
 */
int im_ring_accept(struct im_ring *r, uint32_t slot, char *why, size_t why_size);

/* Slots the writer does not hold: written, and not yet given back. */
uint32_t im_ring_out(const struct im_ring *r);

/* Give \p n slots back to the writer (n <= im_ring_out(r)). */
void im_ring_give(struct im_ring *r, uint32_t n);
/* [ring] */

/* The immediate of a credit that gives back \p count slots. */
__be32 im_credit_encode(uint32_t count);

/*
 * Read a credit's immediate at the client, whose ring is \p r: it may give
 * back 1..im_ring_out(r) slots. Returns 0 with *count set, or a negative
 * errno and a reason in \p why (*count untouched):
 *   -EPROTO  "zero slots returned", "N slots returned, but the server has only M"
 */
int im_credit_decode(__be32 imm, const struct im_ring *r, uint32_t *count, char *why,
                     size_t why_size);

/* The immediate of "done" after \p messages messages. */
__be32 im_done_encode(uint32_t messages);

/*
 * Read "done" at a server that counted \p arrived messages (mod 2^32).
 * Returns 0, or -EPROTO and "the client says it wrote N messages, but M arrived".
 */
int im_done_decode(__be32 imm, uint32_t arrived, char *why, size_t why_size);

/*
 * The client's messages: byte \p offset of message \p seq. Each 8-byte word
 * is a hash of (seq, word index), so a message in the wrong slot, a stale
 * slot, or bytes at the wrong offset do not pass for the right ones.
 */
uint8_t im_pattern_byte(uint64_t seq, uint32_t offset);

/* Fill \p len bytes at \p buf with message \p seq. */
void im_pattern_fill(void *buf, uint32_t len, uint64_t seq);

/* Check \p len bytes at \p buf against message \p seq: true when they all
 * match; otherwise false with the first bad offset in *bad. */
bool im_pattern_check(const void *buf, uint32_t len, uint64_t seq, uint32_t *bad);

/*
 * One completion as the device reported it, for a -v line, such as
 *   IBV_WC_RECV, wc_flags IBV_WC_GRH|IBV_WC_WITH_IMM, byte_len 0, imm_data 0x00000004
 * Flags without a name are shown in hex. imm_data is shown (in host order)
 * only for a receive completion (IBV_WC_RECV, IBV_WC_RECV_RDMA_WITH_IMM)
 * with IBV_WC_WITH_IMM: the only case where verbs defines it.
 */
void im_wc_describe(const struct ibv_wc *wc, char *buf, size_t len);

/* What a work request was, in the upper half of its wr_id (rex_wr_id()). */
enum im_wr_kind {
	IM_WR_RECV = 1,   /* a receive with no memory: for an immediate */
	IM_WR_WRITE = 2,  /* client: a WRITE WITH IMM; the lower half is the slot */
	IM_WR_CREDIT = 3, /* server: a credit */
	IM_WR_DONE = 4,   /* client: done */
};

#endif /* IMM_WIRE_H */
