/* SPDX-License-Identifier: MIT */
/*
 * The done message of chapter 03 (03-read-write/wire.h): its bytes on the
 * wire, and rw_done_decode() against short, malformed and hostile input.
 * The server decodes it from the client's SEND, then reads as many bytes of
 * its own buffer as the message says: a length it did not grant must never
 * get through.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define GRANTED 1048576ull /* what the server granted in these tests */

static void make_wire(uint8_t buf[RW_DONE_SIZE], uint32_t seed, uint64_t length)
{
	struct rw_done d = {.seed = seed, .length = length};

	rw_done_encode(&d, buf);
}

static int decode(const uint8_t *buf, size_t len, struct rw_done *out, char *why)
{
	return rw_done_decode(buf, len, GRANTED, out, why, RW_WHY_SIZE);
}

static void test_encode_bytes(void)
{
	static const uint8_t want[RW_DONE_SIZE] = {
	    'R',  'W',  'D',  'N',  0,    1,    0,    1,    /* magic, version, type */
	    0x12, 0x34, 0xab, 0xcd,                         /* seed */
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x00, /* length */
	};
	uint8_t buf[RW_DONE_SIZE];
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	make_wire(buf, 0x1234abcd, GRANTED);
	for (i = 0; i < sizeof(want); i++)
		CHECK_INT_EQ(buf[i], want[i]);
}

static void test_round_trip(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE] = "";
	struct rw_done out = {0};

	make_wire(buf, 0xfedcba98, GRANTED);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.seed, 0xfedcba98);
	CHECK_U64_EQ(out.length, GRANTED);
	CHECK_STR_EQ(why, "");
	/* seeds 0 and all ones are seeds like any other */
	make_wire(buf, 0, GRANTED);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.seed, 0);
	make_wire(buf, UINT32_MAX, GRANTED);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.seed, UINT32_MAX);
}

/* A SEND shorter than the message: byte_len says how much really came. */
static void test_truncated(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	make_wire(buf, 1, GRANTED);
	CHECK_INT_EQ(decode(buf, RW_DONE_SIZE - 1, &out, why), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 19 bytes");
	CHECK_INT_EQ(decode(buf, 8, &out, why), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 8 bytes");
	CHECK_INT_EQ(decode(buf, 0, &out, why), -EMSGSIZE);
}

static void test_bad_magic(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	memset(buf, 0, sizeof(buf));
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
	make_wire(buf, 1, GRANTED);
	memcpy(buf, "RWRQ", 4); /* a request is not a done message */
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x52575251");
}

static void test_version(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	make_wire(buf, 1, GRANTED);
	buf[4] = 1;
	buf[5] = 0;
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 256, want 1");
}

static void test_type(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	make_wire(buf, 1, GRANTED);
	buf[7] = 0;
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EPROTO);
	CHECK_STR_EQ(why, "type 0, want 1");
	buf[6] = buf[7] = 0xff;
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EPROTO);
	CHECK_STR_EQ(why, "type 65535, want 1");
}

static void test_zero_length(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	make_wire(buf, 1, 0);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 0, but 1048576 bytes were granted");
}

/* A length beyond the grant would have the server read past its buffer. */
static void test_length_beyond_granted(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	make_wire(buf, 1, GRANTED + 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 1048577, but 1048576 bytes were granted");
	make_wire(buf, 1, UINT64_MAX);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 18446744073709551615, but 1048576 bytes were granted");
}

static void test_length_short_of_granted(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	make_wire(buf, 1, GRANTED - 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 1048575, but 1048576 bytes were granted");
}

static void test_all_ones(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out;

	memset(buf, 0xff, sizeof(buf));
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0xffffffff");
}

static void test_out_untouched_on_error(void)
{
	uint8_t buf[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct rw_done out = {.seed = 5, .length = 6};

	make_wire(buf, 1, UINT64_MAX);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_U64_EQ(out.seed, 5);
	CHECK_U64_EQ(out.length, 6);
}

int main(void)
{
	test_encode_bytes();
	test_round_trip();
	test_truncated();
	test_bad_magic();
	test_version();
	test_type();
	test_zero_length();
	test_length_beyond_granted();
	test_length_short_of_granted();
	test_all_ones();
	test_out_untouched_on_error();
	return check_finish();
}
