/* SPDX-License-Identifier: MIT */
/*
 * The ring's descriptor (04-imm/wire.h), which the client decodes from the
 * server's accept and then writes by: its bytes on the wire, a round trip
 * through the CM's padding, every field at its limits, and what a hostile
 * or broken server could send.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define MESSAGE 4096u /* the client's -s in most of these tests */

/* A descriptor as an accept carries it: 196 bytes, the rest padding. */
static void make_wire(uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX], uint64_t addr, uint32_t rkey,
                      uint32_t slot_size, uint32_t slots)
{
	struct im_descriptor d = {
	    .addr = addr, .rkey = rkey, .slot_size = slot_size, .slots = slots};

	memset(buf, 0, IM_ACCEPT_PRIVATE_DATA_MAX);
	im_descriptor_encode(&d, buf);
}

static int decode(const uint8_t *buf, size_t len, uint64_t message, struct im_descriptor *out,
                  char *why)
{
	return im_descriptor_decode(buf, len, message, out, why, IM_WHY_SIZE);
}

static void test_encode_bytes(void)
{
	static const uint8_t want[IM_DESCRIPTOR_SIZE] = {
	    'I',  'M',  'R',  'G',  0,    1,    0,    0,    /* magic, version, reserved */
	    0x00, 0x00, 0x7f, 0x12, 0x34, 0x56, 0x70, 0x00, /* addr */
	    0xca, 0xfe, 0x00, 0x42,                         /* rkey */
	    0x00, 0x01, 0x00, 0x00,                         /* slot size 65536 */
	    0x00, 0x00, 0x00, 0x10,                         /* 16 slots */
	};
	struct im_descriptor d = {
	    .addr = 0x7f1234567000ull, .rkey = 0xcafe0042, .slot_size = 65536, .slots = 16};
	uint8_t buf[IM_DESCRIPTOR_SIZE];
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	im_descriptor_encode(&d, buf);
	for (i = 0; i < sizeof(want); i++)
		CHECK_INT_EQ(buf[i], want[i]);
}

static void test_round_trip_with_padding(void)
{
	uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX];
	char why[IM_WHY_SIZE] = "";
	struct im_descriptor out = {0};

	make_wire(buf, 0x7f0000001000ull, 0x1234, 65536, 16);
	memset(buf + IM_DESCRIPTOR_SIZE, 0xff, sizeof(buf) - IM_DESCRIPTOR_SIZE);
	CHECK_INT_EQ(decode(buf, sizeof(buf), MESSAGE, &out, why), 0);
	CHECK_U64_EQ(out.addr, 0x7f0000001000ull);
	CHECK_U64_EQ(out.rkey, 0x1234);
	CHECK_U64_EQ(out.slot_size, 65536);
	CHECK_U64_EQ(out.slots, 16);
	CHECK_STR_EQ(why, "");
	/* Exactly the descriptor's size is enough. */
	CHECK_INT_EQ(decode(buf, IM_DESCRIPTOR_SIZE, MESSAGE, &out, why), 0);
}

static void test_limits(void)
{
	uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX];
	char why[IM_WHY_SIZE];
	struct im_descriptor out;

	/* The smallest ring: one slot of one byte; doorbells or 1-byte messages. */
	make_wire(buf, 0x1000, 0, 1, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 0, &out, why), 0);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 1, &out, why), 0);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 2, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "1-byte slots cannot hold our 2-byte messages");
	/* The largest: 256 slots of 8 MiB, every rkey and address bit set
	 * that still leaves room for the ring. */
	make_wire(buf, UINT64_MAX - (uint64_t)IM_MAX_SLOTS * IM_MAX_SLOT_SIZE, UINT32_MAX,
	          IM_MAX_SLOT_SIZE, IM_MAX_SLOTS);
	CHECK_INT_EQ(decode(buf, sizeof(buf), IM_MAX_SLOT_SIZE, &out, why), 0);
	CHECK_U64_EQ(out.rkey, UINT32_MAX);
	CHECK_U64_EQ(out.slots, IM_MAX_SLOTS);
	CHECK_U64_EQ(out.slot_size, IM_MAX_SLOT_SIZE);
	/* Messages exactly the slot size fit; one byte more does not. */
	make_wire(buf, 0x1000, 7, 4096, 4);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 4096, &out, why), 0);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 4097, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "4096-byte slots cannot hold our 4097-byte messages");
}

static void test_slot_size_out_of_range(void)
{
	uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX];
	char why[IM_WHY_SIZE];
	struct im_descriptor out = {.slots = 99};

	make_wire(buf, 0x1000, 1, 0, 16);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 0, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "slot size 0, want 1..8388608");
	CHECK_INT_EQ(out.slots, 99); /* untouched on failure */
	make_wire(buf, 0x1000, 1, IM_MAX_SLOT_SIZE + 1, 16);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 0, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "slot size 8388609, want 1..8388608");
	make_wire(buf, 0x1000, 1, UINT32_MAX, 16);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 0, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "slot size 4294967295, want 1..8388608");
}

static void test_slots_out_of_range(void)
{
	uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX];
	char why[IM_WHY_SIZE];
	struct im_descriptor out;

	make_wire(buf, 0x1000, 1, 64, 0);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "0 slots, want 1..256");
	/* 257 slots: more than the immediate's 8 bits can name. */
	make_wire(buf, 0x1000, 1, 64, IM_MAX_SLOTS + 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "257 slots, want 1..256");
	make_wire(buf, 0x1000, 1, 64, UINT32_MAX);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -ERANGE);
	CHECK_STR_EQ(why, "4294967295 slots, want 1..256");
}

static void test_wraps_around(void)
{
	uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX];
	char why[IM_WHY_SIZE];
	struct im_descriptor out;

	/* One byte too high: the ring's end (one past its last byte) would
	 * be 2^64, which does not exist. */
	make_wire(buf, UINT64_MAX - 65535, 1, 4096, 16);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -EOVERFLOW);
	CHECK_STR_EQ(why, "ring at 0xffffffffffff0000 + 65536 wraps around");
	/* Exactly fitting: the end is 2^64 - 1. */
	make_wire(buf, UINT64_MAX - 65536, 1, 4096, 16);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), 0);
	make_wire(buf, UINT64_MAX, 1, 1, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 1, &out, why), -EOVERFLOW);
	CHECK_STR_EQ(why, "ring at 0xffffffffffffffff + 1 wraps around");
}

static void test_header(void)
{
	uint8_t buf[IM_ACCEPT_PRIVATE_DATA_MAX];
	uint8_t zeros[IM_ACCEPT_PRIVATE_DATA_MAX] = {0};
	char why[IM_WHY_SIZE];
	struct im_descriptor out;

	/* Too short, down to nothing. */
	make_wire(buf, 0x1000, 1, 64, 16);
	CHECK_INT_EQ(decode(buf, IM_DESCRIPTOR_SIZE - 1, 64, &out, why), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 27 bytes");
	CHECK_INT_EQ(decode(buf, 0, 64, &out, why), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 0 bytes");
	/* A server that sent no private data: zeros. */
	CHECK_INT_EQ(decode(zeros, sizeof(zeros), 64, &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
	/* Chapter 03's descriptor is not this one. */
	memcpy(buf, "RWDS", 4);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x52574453");
	/* The magic in the wrong byte order. */
	memcpy(buf, "GRMI", 4);
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x47524d49");
	make_wire(buf, 0x1000, 1, 64, 16);
	buf[5] = 2;
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 2, want 1");
	buf[4] = 1;
	buf[5] = 1;
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 257, want 1");
	make_wire(buf, 0x1000, 1, 64, 16);
	buf[7] = 1;
	CHECK_INT_EQ(decode(buf, sizeof(buf), 64, &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "reserved field 0x0001, want 0");
}

int main(void)
{
	test_encode_bytes();
	test_round_trip_with_padding();
	test_limits();
	test_slot_size_out_of_range();
	test_slots_out_of_range();
	test_wraps_around();
	test_header();
	return check_finish();
}
