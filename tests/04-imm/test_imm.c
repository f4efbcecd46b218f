/* SPDX-License-Identifier: MIT */
/*
 * The immediate of a WRITE WITH IMM (04-imm/wire.h): slot in bits 31..24,
 * length in bits 23..0, in network byte order. Known values encode to known
 * bytes, every field round-trips at its limits, one field never spills into
 * the other, and the server's decoder refuses what a hostile client could
 * send: a slot beyond the ring, a length beyond the slot.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define SLOTS     16
#define SLOT_SIZE 65536

/* The four bytes of an immediate as they sit in imm_data, first to last:
 * the order they travel in. */
static void bytes_of(__be32 imm, uint8_t out[4])
{
	memcpy(out, &imm, 4);
}

static void check_bytes(__be32 imm, uint8_t b0, uint8_t b1, uint8_t b2, uint8_t b3)
{
	uint8_t b[4];

	bytes_of(imm, b);
	CHECK_INT_EQ(b[0], b0);
	CHECK_INT_EQ(b[1], b1);
	CHECK_INT_EQ(b[2], b2);
	CHECK_INT_EQ(b[3], b3);
}

static void test_known_bytes(void)
{
	/* Slot 3, 64 bytes: the slot is the first byte on the wire, whatever
	 * the byte order of the machine. */
	check_bytes(im_imm_encode(3, 64), 0x03, 0x00, 0x00, 0x40);
	CHECK_U64_EQ(ntohl(im_imm_encode(3, 64)), 0x03000040u);
	check_bytes(im_imm_encode(0, 0), 0, 0, 0, 0);
	check_bytes(im_imm_encode(0xab, 0x123456), 0xab, 0x12, 0x34, 0x56);
	check_bytes(im_imm_encode(IM_MAX_SLOTS - 1, IM_MAX_LENGTH), 0xff, 0xff, 0xff, 0xff);
	/* A doorbell in slot 1: the length is 0. */
	check_bytes(im_imm_encode(1, 0), 0x01, 0x00, 0x00, 0x00);
}

static void test_known_bytes_decode(void)
{
	static const uint8_t wire[4] = {0x05, 0x00, 0x10, 0x01}; /* slot 5, 4097 bytes */
	struct im_imm out;
	char why[IM_WHY_SIZE] = "";
	__be32 imm;

	memcpy(&imm, wire, 4);
	CHECK_INT_EQ(im_imm_decode(imm, SLOTS, SLOT_SIZE, &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.slot, 5);
	CHECK_INT_EQ(out.length, 4097);
	CHECK_STR_EQ(why, "");
}

static void round_trip(uint32_t slot, uint32_t length, uint32_t slots, uint32_t slot_size)
{
	struct im_imm out = {0xffffffff, 0xffffffff};
	char why[IM_WHY_SIZE] = "";

	CHECK_INT_EQ(
	    im_imm_decode(im_imm_encode(slot, length), slots, slot_size, &out, why, sizeof(why)),
	    0);
	CHECK_U64_EQ(out.slot, slot);
	CHECK_U64_EQ(out.length, length);
	CHECK_STR_EQ(why, "");
}

static void test_round_trip_limits(void)
{
	round_trip(0, 0, 1, 1);                      /* a doorbell into a one-slot ring */
	round_trip(0, 1, 1, 1);                      /* one byte, a one-byte slot */
	round_trip(15, SLOT_SIZE, SLOTS, SLOT_SIZE); /* the last slot, full */
	round_trip(7, 1025, SLOTS, SLOT_SIZE);
	/* The largest ring: 256 slots of 8 MiB; the last slot, full. */
	round_trip(IM_MAX_SLOTS - 1, IM_MAX_SLOT_SIZE, IM_MAX_SLOTS, IM_MAX_SLOT_SIZE);
	round_trip(IM_MAX_SLOTS - 1, 0, IM_MAX_SLOTS, IM_MAX_SLOT_SIZE);
	/* The length field's own largest value, in a slot that large. */
	round_trip(0, IM_MAX_LENGTH, 1, IM_MAX_LENGTH);
}

static void test_fields_do_not_spill(void)
{
	/* A length one past its field is cut to the field: it cannot add
	 * to the slot number. The same for a slot one past its field. */
	CHECK_U64_EQ(ntohl(im_imm_encode(0, IM_MAX_LENGTH + 1)), 0);
	CHECK_U64_EQ(ntohl(im_imm_encode(2, IM_MAX_LENGTH + 2)), 0x02000001u);
	CHECK_U64_EQ(ntohl(im_imm_encode(IM_MAX_SLOTS, 5)), 5);
	CHECK_U64_EQ(ntohl(im_imm_encode(IM_MAX_SLOTS + 1, 5)), 0x01000005u);
}

static void test_slot_beyond_ring(void)
{
	struct im_imm out;
	char why[IM_WHY_SIZE];

	/* One past the last slot, and the largest slot the field can say. */
	CHECK_INT_EQ(
	    im_imm_decode(im_imm_encode(SLOTS, 8), SLOTS, SLOT_SIZE, &out, why, sizeof(why)),
	    -ERANGE);
	CHECK_STR_EQ(why, "slot 16 is beyond the ring's last slot, 15");
	CHECK_INT_EQ(out.slot, 16); /* the raw fields, for the message */
	CHECK_INT_EQ(out.length, 8);
	CHECK_INT_EQ(im_imm_decode(htonl(0xff000000u), SLOTS, SLOT_SIZE, &out, why, sizeof(why)),
	             -ERANGE);
	CHECK_STR_EQ(why, "slot 255 is beyond the ring's last slot, 15");
	/* A one-slot ring has only slot 0. */
	CHECK_INT_EQ(im_imm_decode(im_imm_encode(1, 0), 1, 1, &out, why, sizeof(why)), -ERANGE);
	CHECK_STR_EQ(why, "slot 1 is beyond the ring's last slot, 0");
}

static void test_length_beyond_slot(void)
{
	struct im_imm out;
	char why[IM_WHY_SIZE];

	CHECK_INT_EQ(im_imm_decode(im_imm_encode(0, SLOT_SIZE + 1), SLOTS, SLOT_SIZE, &out, why,
	                           sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "length 65537 exceeds the 65536-byte slot");
	CHECK_INT_EQ(out.length, SLOT_SIZE + 1);
	/* All ones: slot 255 is checked first. With a large ring, the length. */
	CHECK_INT_EQ(im_imm_decode(htonl(0xffffffffu), IM_MAX_SLOTS, IM_MAX_SLOT_SIZE, &out, why,
	                           sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "length 16777215 exceeds the 8388608-byte slot");
	/* A one-byte slot holds one byte, not two. */
	CHECK_INT_EQ(im_imm_decode(im_imm_encode(0, 2), 1, 1, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "length 2 exceeds the 1-byte slot");
}

/* The immediate read in the wrong byte order is caught, not misread as
 * another valid slot: slot 3, 64 bytes, byte-swapped, names slot 64. */
static void test_wrong_byte_order(void)
{
	struct im_imm out;
	char why[IM_WHY_SIZE];
	__be32 swapped = (__be32)__builtin_bswap32((uint32_t)im_imm_encode(3, 64));

	CHECK_INT_EQ(im_imm_decode(swapped, SLOTS, SLOT_SIZE, &out, why, sizeof(why)), -ERANGE);
	CHECK_STR_EQ(why, "slot 64 is beyond the ring's last slot, 15");
}

int main(void)
{
	test_known_bytes();
	test_known_bytes_decode();
	test_round_trip_limits();
	test_fields_do_not_spill();
	test_slot_beyond_ring();
	test_length_beyond_slot();
	test_wrong_byte_order();
	return check_finish();
}
