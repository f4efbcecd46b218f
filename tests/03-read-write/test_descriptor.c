/* SPDX-License-Identifier: MIT */
/*
 * The descriptor of chapter 03 (03-read-write/wire.h): its bytes on the
 * wire, and rw_descriptor_decode() against short, padded, malformed and
 * hostile input. The client decodes it from the server's accept and uses
 * it to write into the server's memory, so every field is checked before
 * anything is posted.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define ASKED 65536ull /* the client's -s in these tests */

/* A descriptor as an accept carries it: 196 bytes. */
static void make_wire(uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX], uint64_t addr, uint64_t length,
                      uint32_t rkey)
{
	struct rw_descriptor d = {.addr = addr, .length = length, .rkey = rkey};

	memset(buf, 0, RW_ACCEPT_PRIVATE_DATA_MAX);
	rw_descriptor_encode(&d, buf);
}

static int decode(const uint8_t *buf, size_t len, struct rw_descriptor *out, char *why)
{
	return rw_descriptor_decode(buf, len, ASKED, out, why, RW_WHY_SIZE);
}

static void test_encode_bytes(void)
{
	static const uint8_t want[RW_DESCRIPTOR_SIZE] = {
	    'R',  'W',  'D',  'S',  0,    1,    0,    0,    /* magic, version, reserved */
	    0x00, 0x00, 0x7f, 0x12, 0x34, 0x56, 0x78, 0x00, /* addr */
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, /* length */
	    0xca, 0xfe, 0x00, 0x42,                         /* rkey */
	};
	struct rw_descriptor d = {.addr = 0x7f1234567800ull, .length = ASKED, .rkey = 0xcafe0042};
	uint8_t buf[RW_DESCRIPTOR_SIZE];
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	rw_descriptor_encode(&d, buf);
	for (i = 0; i < sizeof(want); i++)
		CHECK_INT_EQ(buf[i], want[i]);
}

static void test_round_trip_with_padding(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE] = "";
	struct rw_descriptor out = {0};

	make_wire(buf, 0x7f0000001000ull, ASKED, 0x1234);
	memset(buf + RW_DESCRIPTOR_SIZE, 0xff, sizeof(buf) - RW_DESCRIPTOR_SIZE);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.addr, 0x7f0000001000ull);
	CHECK_U64_EQ(out.length, ASKED);
	CHECK_U64_EQ(out.rkey, 0x1234);
	CHECK_STR_EQ(why, "");
	/* exactly the descriptor's size is enough */
	CHECK_INT_EQ(decode(buf, RW_DESCRIPTOR_SIZE, &out, why), 0);
}

static void test_truncated(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED, 1);
	CHECK_INT_EQ(decode(buf, RW_DESCRIPTOR_SIZE - 1, &out, why), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 27 bytes");
	/* a request-sized message is not a descriptor */
	CHECK_INT_EQ(decode(buf, RW_REQUEST_SIZE, &out, why), -EMSGSIZE);
	CHECK_INT_EQ(decode(buf, 0, &out, why), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 0 bytes");
}

/* What a server that sends no private data looks like: 196 zero bytes. */
static void test_zeros(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX] = {0};
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
}

static void test_bad_magic(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED, 1);
	memcpy(buf, "\xde\xad\xbe\xef", 4);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0xdeadbeef");
	/* the magic in the wrong byte order */
	memcpy(buf, "SDWR", 4);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x53445752");
	/* another message of this chapter is not a descriptor */
	memcpy(buf, "RWRQ", 4);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x52575251");
}

static void test_version(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED, 1);
	buf[5] = 2;
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 2, want 1");
	buf[5] = 0;
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 0, want 1");
}

static void test_reserved(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED, 1);
	buf[6] = 0x80;
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "reserved field 0x8000, want 0");
}

static void test_zero_length(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, 0, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "zero length");
}

static void test_length_beyond_asked(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED + 1, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 65537 beyond the 65536 bytes asked for");
	make_wire(buf, 0x1000, UINT64_MAX, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 18446744073709551615 beyond the 65536 bytes asked for");
}

static void test_length_short_of_asked(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED - 1, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_STR_EQ(why, "length 65535 short of the 65536 bytes asked for");
}

/* addr + length must not wrap past 2^64; ending just below it is fine. */
static void test_overflow(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, UINT64_MAX - ASKED + 1, ASKED, 1); /* sum is exactly 2^64 */
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EOVERFLOW);
	CHECK_STR_EQ(why, "address 0xffffffffffff0000 + length 65536 overflows");
	make_wire(buf, UINT64_MAX, ASKED, 1);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EOVERFLOW);
	CHECK_STR_EQ(why, "address 0xffffffffffffffff + length 65536 overflows");
	make_wire(buf, UINT64_MAX - ASKED, ASKED, 1); /* sum is 2^64 - 1 */
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.addr, UINT64_MAX - ASKED);
}

/* Every field all ones, after a valid header: the length is refused first,
 * and with a length of 2^64 - 1 asked for, the overflow is caught. */
static void test_hostile_all_ones(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, UINT64_MAX, UINT64_MAX, UINT32_MAX);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -ERANGE);
	CHECK_INT_EQ(rw_descriptor_decode(buf, sizeof(buf), UINT64_MAX, &out, why, sizeof(why)),
	             -EOVERFLOW);
	CHECK_STR_EQ(why, "address 0xffffffffffffffff + length 18446744073709551615 overflows");
	CHECK_TRUE(strlen(why) < RW_WHY_SIZE);
	memset(buf, 0xff, sizeof(buf));
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0xffffffff");
}

/* Any rkey is a possible key: 0 and all ones pass the decoder (the server's
 * device is the one that checks keys). */
static void test_any_rkey(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out;

	make_wire(buf, 0x1000, ASKED, 0);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.rkey, 0);
	make_wire(buf, 0x1000, ASKED, UINT32_MAX);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), 0);
	CHECK_U64_EQ(out.rkey, UINT32_MAX);
}

static void test_out_untouched_on_error(void)
{
	uint8_t buf[RW_ACCEPT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_descriptor out = {.addr = 1, .length = 2, .rkey = 3};

	make_wire(buf, UINT64_MAX, ASKED, 9);
	CHECK_INT_EQ(decode(buf, sizeof(buf), &out, why), -EOVERFLOW);
	CHECK_U64_EQ(out.addr, 1);
	CHECK_U64_EQ(out.length, 2);
	CHECK_U64_EQ(out.rkey, 3);
}

int main(void)
{
	test_encode_bytes();
	test_round_trip_with_padding();
	test_truncated();
	test_zeros();
	test_bad_magic();
	test_version();
	test_reserved();
	test_zero_length();
	test_length_beyond_asked();
	test_length_short_of_asked();
	test_overflow();
	test_hostile_all_ones();
	test_any_rkey();
	test_out_untouched_on_error();
	return check_finish();
}
