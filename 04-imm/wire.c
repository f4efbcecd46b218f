/* SPDX-License-Identifier: MIT */
/*
 * wire.c: the descriptor, the three immediates, the ring's bookkeeping and
 * the message pattern of chapter 04 (see wire.h).
 *
 * Everything a peer sends is untrusted input: a descriptor says where the
 * client's device will write in the server's memory, and an immediate says
 * which of the server's slots to read. Each is checked in full before any
 * of it is used.
 */
#include "wire.h"
#include "rex_wire.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Byte offsets of the descriptor's fields. */
#define OFF_MAGIC     0
#define OFF_VERSION   4
#define OFF_RESERVED  6
#define OFF_ADDR      8
#define OFF_RKEY      16
#define OFF_SLOT_SIZE 20
#define OFF_SLOTS     24
_Static_assert(OFF_SLOTS + 4 == IM_DESCRIPTOR_SIZE, "the fields fill the descriptor exactly");

/* The immediate's fields (see the drawing in wire.h). */
#define SLOT_SHIFT  IM_LENGTH_BITS
#define SLOT_MASK   (IM_MAX_SLOTS - 1u)
#define LENGTH_MASK IM_MAX_LENGTH
_Static_assert(IM_SLOT_BITS + IM_LENGTH_BITS == 32, "the two fields fill 32 bits");

void im_descriptor_encode(const struct im_descriptor *d, uint8_t buf[IM_DESCRIPTOR_SIZE])
{
	rex_put_be32(buf + OFF_MAGIC, IM_DESCRIPTOR_MAGIC);
	rex_put_be16(buf + OFF_VERSION, IM_VERSION);
	rex_put_be16(buf + OFF_RESERVED, 0);
	rex_put_be64(buf + OFF_ADDR, d->addr);
	rex_put_be32(buf + OFF_RKEY, d->rkey);
	rex_put_be32(buf + OFF_SLOT_SIZE, d->slot_size);
	rex_put_be32(buf + OFF_SLOTS, d->slots);
}

int im_descriptor_decode(const void *buf, size_t len, uint64_t message_size,
                         struct im_descriptor *out, char *why, size_t why_size)
{
	const uint8_t *bytes = buf;
	struct im_descriptor d;
	uint32_t magic;
	uint16_t version, reserved;
	uint64_t ring_bytes;

	/* Size first (nothing else can be read), then the magic (if it is
	 * wrong, no other field means anything), then the version. */
	if (len < IM_DESCRIPTOR_SIZE) {
		snprintf(why, why_size, "too short: %zu bytes", len);
		return -EMSGSIZE;
	}
	magic = rex_get_be32(bytes + OFF_MAGIC);
	if (magic != IM_DESCRIPTOR_MAGIC) {
		snprintf(why, why_size, "bad magic 0x%08x", (unsigned)magic);
		return -EBADMSG;
	}
	version = rex_get_be16(bytes + OFF_VERSION);
	if (version != IM_VERSION) {
		snprintf(why, why_size, "version %u, want %u", (unsigned)version,
		         (unsigned)IM_VERSION);
		return -EPROTONOSUPPORT;
	}
	/* Reserved for later versions: 0 now, or they could not give it a meaning. */
	reserved = rex_get_be16(bytes + OFF_RESERVED);
	if (reserved) {
		snprintf(why, why_size, "reserved field 0x%04x, want 0", (unsigned)reserved);
		return -EBADMSG;
	}
	d.addr = rex_get_be64(bytes + OFF_ADDR);
	d.rkey = rex_get_be32(bytes + OFF_RKEY);
	d.slot_size = rex_get_be32(bytes + OFF_SLOT_SIZE);
	d.slots = rex_get_be32(bytes + OFF_SLOTS);

	/* The immediate can name only IM_MAX_SLOTS slots and say at most
	 * IM_MAX_SLOT_SIZE bytes of one: a ring beyond that cannot be used. */
	if (d.slot_size == 0 || d.slot_size > IM_MAX_SLOT_SIZE) {
		snprintf(why, why_size, "slot size %u, want 1..%u", (unsigned)d.slot_size,
		         (unsigned)IM_MAX_SLOT_SIZE);
		return -ERANGE;
	}
	if (d.slots == 0 || d.slots > IM_MAX_SLOTS) {
		snprintf(why, why_size, "%u slots, want 1..%u", (unsigned)d.slots,
		         (unsigned)IM_MAX_SLOTS);
		return -ERANGE;
	}
	if (message_size > d.slot_size) {
		snprintf(why, why_size, "%u-byte slots cannot hold our %llu-byte messages",
		         (unsigned)d.slot_size, (unsigned long long)message_size);
		return -ERANGE;
	}
	/* The last slot must not run past the end of the address space.
	 * ring_bytes is at most 2^8 * 2^23, so the product cannot overflow. */
	ring_bytes = (uint64_t)d.slots * d.slot_size;
	if (d.addr > UINT64_MAX - ring_bytes) {
		snprintf(why, why_size, "ring at 0x%llx + %llu wraps around",
		         (unsigned long long)d.addr, (unsigned long long)ring_bytes);
		return -EOVERFLOW;
	}
	/* The rkey cannot be checked here: any 32-bit value may be a key. A
	 * wrong one makes the server's device refuse our writes
	 * (IBV_WC_REM_ACCESS_ERR), and no memory is touched. */
	*out = d;
	return 0;
}

/* [imm-codec] */
__be32 im_imm_encode(uint32_t slot, uint32_t length)
{
	uint32_t host = (slot & SLOT_MASK) << SLOT_SHIFT | (length & LENGTH_MASK);

	return htonl(host); /* the only place a slot immediate changes byte order */
}

int im_imm_decode(__be32 imm, uint32_t slots, uint32_t slot_size, struct im_imm *out, char *why,
                  size_t why_size)
{
	uint32_t host = ntohl(imm);

	out->slot = host >> SLOT_SHIFT;
	out->length = host & LENGTH_MASK;
	/* Any 32 bits decode into some slot and some length: whether they
	 * make sense depends on the ring, so the ring is checked here too. */
	if (out->slot >= slots) {
		snprintf(why, why_size, "slot %u is beyond the ring's last slot, %u",
		         (unsigned)out->slot, (unsigned)(slots - 1));
		return -ERANGE;
	}
	if (out->length > slot_size) {
		snprintf(why, why_size, "length %u exceeds the %u-byte slot", (unsigned)out->length,
		         (unsigned)slot_size);
		return -EMSGSIZE;
	}
	return 0;
}
/* [imm-codec] */

void im_ring_init(struct im_ring *r, uint32_t slots)
{
	r->slots = slots;
	r->next = 0;
	r->held = slots;
}

uint32_t im_ring_take(struct im_ring *r)
{
	uint32_t slot = r->next;

	r->next = (r->next + 1) % r->slots;
	r->held--;
	return slot;
}

int im_ring_accept(struct im_ring *r, uint32_t slot, char *why, size_t why_size)
{
	/* How far past `next` the slot is, walking the ring forwards. The
	 * client holds distances 0..held-1; anything further is a slot it
	 * wrote before and we have not given back. */
	uint32_t ahead = (slot + r->slots - r->next) % r->slots;

	if (r->held == 0) {
		snprintf(why, why_size, "slot %u is not the client's: it holds none",
		         (unsigned)slot);
		return -EACCES;
	}
	if (ahead >= r->held) {
		snprintf(why, why_size, "slot %u is not the client's: it holds %u from slot %u on",
		         (unsigned)slot, (unsigned)r->held, (unsigned)r->next);
		return -EACCES;
	}
	if (ahead != 0) {
		snprintf(why, why_size, "slot %u out of order: the next is slot %u", (unsigned)slot,
		         (unsigned)r->next);
		return -EPROTO;
	}
	im_ring_take(r);
	return 0;
}

uint32_t im_ring_out(const struct im_ring *r)
{
	return r->slots - r->held;
}

void im_ring_give(struct im_ring *r, uint32_t n)
{
	r->held += n;
}

__be32 im_credit_encode(uint32_t count)
{
	return htonl(count);
}

int im_credit_decode(__be32 imm, const struct im_ring *r, uint32_t *count, char *why,
                     size_t why_size)
{
	uint32_t n = ntohl(imm);

	if (n == 0) {
		snprintf(why, why_size, "zero slots returned");
		return -EPROTO;
	}
	/* More than we wrote and have not had back would be slots we never
	 * gave up: trusting it would let us overwrite unread messages. */
	if (n > im_ring_out(r)) {
		snprintf(why, why_size, "%u slots returned, but the server has only %u",
		         (unsigned)n, (unsigned)im_ring_out(r));
		return -EPROTO;
	}
	*count = n;
	return 0;
}

__be32 im_done_encode(uint32_t messages)
{
	return htonl(messages);
}

int im_done_decode(__be32 imm, uint32_t arrived, char *why, size_t why_size)
{
	uint32_t said = ntohl(imm);

	if (said != arrived) {
		snprintf(why, why_size, "the client says it wrote %u messages, but %u arrived",
		         (unsigned)said, (unsigned)arrived);
		return -EPROTO;
	}
	return 0;
}

/*
 * Word \p index of message \p seq: the two mixed into 64 bits, then a
 * finaliser (xor-shifts and multiplications by large odd constants, as in
 * MurmurHash3's fmix64) so that each input bit flips about half the output
 * bits. +1 keeps word 0 of message 0 from hashing zeros to zeros, so a slot
 * nobody wrote never passes.
 */
static uint64_t pattern_word(uint64_t seq, uint64_t index)
{
	uint64_t x = (seq + 1) * 0xd6e8feb86659fd93ull ^ (index + 1);

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* Byte i of a word is bits 8i..8i+7: the same on every machine. */
uint8_t im_pattern_byte(uint64_t seq, uint32_t offset)
{
	return (uint8_t)(pattern_word(seq, offset / 8) >> (8 * (offset % 8)));
}

void im_pattern_fill(void *buf, uint32_t len, uint64_t seq)
{
	uint8_t *bytes = buf;
	uint32_t words = len / 8;
	uint32_t i;

	for (i = 0; i < words; i++) {
		uint64_t w = htole64(pattern_word(seq, i));

		memcpy(bytes + 8 * (size_t)i, &w, sizeof(w));
	}
	for (i = 8 * words; i < len; i++)
		bytes[i] = im_pattern_byte(seq, i);
}

bool im_pattern_check(const void *buf, uint32_t len, uint64_t seq, uint32_t *bad)
{
	const uint8_t *bytes = buf;
	uint32_t words = len / 8;
	uint32_t i;

	/* A word at a time; on a mismatch, find the first bad byte in it. */
	for (i = 0; i < words; i++) {
		uint64_t w = htole64(pattern_word(seq, i));

		if (memcmp(bytes + 8 * (size_t)i, &w, sizeof(w)) != 0)
			break;
	}
	for (i *= 8; i < len; i++) {
		if (bytes[i] != im_pattern_byte(seq, i)) {
			*bad = i;
			return false;
		}
	}
	return true;
}

static const char *wc_opcode_name(enum ibv_wc_opcode opcode, char *num, size_t len)
{
	switch (opcode) {
	case IBV_WC_SEND:
		return "IBV_WC_SEND";
	case IBV_WC_RDMA_WRITE:
		return "IBV_WC_RDMA_WRITE";
	case IBV_WC_RECV:
		return "IBV_WC_RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM:
		return "IBV_WC_RECV_RDMA_WITH_IMM";
	default:
		snprintf(num, len, "opcode %d", (int)opcode);
		return num;
	}
}

void im_wc_describe(const struct ibv_wc *wc, char *buf, size_t len)
{
	static const struct {
		unsigned int flag;
		const char *name;
	} names[] = {
	    {IBV_WC_GRH, "IBV_WC_GRH"},
	    {IBV_WC_WITH_IMM, "IBV_WC_WITH_IMM"},
	    {IBV_WC_IP_CSUM_OK, "IBV_WC_IP_CSUM_OK"},
	    {IBV_WC_WITH_INV, "IBV_WC_WITH_INV"},
	};
	char num[24], flags[96] = "";
	unsigned int rest = wc->wc_flags;
	size_t i, used = 0;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!(rest & names[i].flag))
			continue;
		used += (size_t)snprintf(flags + used, sizeof(flags) - used, "%s%s",
		                         used ? "|" : "", names[i].name);
		rest &= ~names[i].flag;
	}
	/* 96 bytes hold every name and a number: nothing is cut. */
	if (rest)
		snprintf(flags + used, sizeof(flags) - used, "%s0x%x", used ? "|" : "", rest);
	else if (!used)
		strcpy(flags, "0");
	/* imm_data belongs to the receiving side's completion, and is valid
	 * only with IBV_WC_WITH_IMM. (The sender's completion of a WRITE or
	 * SEND WITH IMM may carry the flag too, as on Soft-RoCE, but no value.) */
	if ((wc->opcode & IBV_WC_RECV) && (wc->wc_flags & IBV_WC_WITH_IMM))
		snprintf(buf, len, "%s, wc_flags %s, byte_len %u, imm_data 0x%08x",
		         wc_opcode_name(wc->opcode, num, sizeof(num)), flags,
		         (unsigned)wc->byte_len, (unsigned)ntohl(wc->imm_data));
	else
		snprintf(buf, len, "%s, wc_flags %s, byte_len %u",
		         wc_opcode_name(wc->opcode, num, sizeof(num)), flags,
		         (unsigned)wc->byte_len);
}
