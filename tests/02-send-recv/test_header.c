/* SPDX-License-Identifier: MIT */
/*
 * The message header of chapter 02 (02-send-recv/wire.h): its exact bytes,
 * and sr_header_decode() against every way a received message can be wrong,
 * since the peer writes it and only the device's byte count is trustworthy.
 * Also the client's test pattern, which must differ between messages.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define MAX_PAYLOAD 64 /* what a pair of hellos agreed on, in these tests */

/* A message as a receive buffer would hold it: header, then payload. */
static size_t make_message(uint8_t *buf, uint8_t type, uint16_t credits, uint32_t length)
{
	struct sr_header h = {.type = type, .flags = 0, .credits = credits, .length = length};

	sr_header_encode(&h, buf);
	memset(buf + SR_HEADER_SIZE, 0x5a, length);
	return SR_HEADER_SIZE + length;
}

static void test_encode_bytes(void)
{
	static const uint8_t want[SR_HEADER_SIZE] = {0x02, 0x00, 0x01, 0x02,
	                                             0x00, 0x10, 0x00, 0x00};
	struct sr_header h = {.type = SR_ECHO, .flags = 0, .credits = 0x0102, .length = 1u << 20};
	uint8_t buf[SR_HEADER_SIZE];
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	sr_header_encode(&h, buf);
	for (i = 0; i < sizeof(want); i++)
		CHECK_INT_EQ(buf[i], want[i]);
}

static void test_good(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header out;
	char why[SR_WHY_SIZE] = "";
	size_t n;

	n = make_message(buf, SR_DATA, 3, MAX_PAYLOAD);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.type, SR_DATA);
	CHECK_INT_EQ(out.flags, 0);
	CHECK_INT_EQ(out.credits, 3);
	CHECK_U64_EQ(out.length, MAX_PAYLOAD);
	CHECK_STR_EQ(why, "");

	n = make_message(buf, SR_ECHO, 0, 1);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.type, SR_ECHO);
	CHECK_U64_EQ(out.length, 1);

	n = make_message(buf, SR_BYE, 0xffff, 0);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.type, SR_BYE);
	CHECK_INT_EQ(out.credits, 0xffff);
}

static void test_truncated(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header out = {0};
	char why[SR_WHY_SIZE];

	make_message(buf, SR_DATA, 1, 0);
	CHECK_INT_EQ(sr_header_decode(buf, SR_HEADER_SIZE - 1, MAX_PAYLOAD, &out, why, sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 7 bytes");
	/* a zero-length SEND is legal RDMA: it completes with byte_len 0 */
	CHECK_INT_EQ(sr_header_decode(buf, 0, MAX_PAYLOAD, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 0 bytes");
	CHECK_INT_EQ(out.type, 0); /* untouched */
}

static void test_unknown_type(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header out;
	char why[SR_WHY_SIZE];
	size_t n;

	n = make_message(buf, 0, 0, 4);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "unknown type 0");
	n = make_message(buf, 4, 0, 4);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "unknown type 4");
	n = make_message(buf, 0xff, 0, 4);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "unknown type 255");
}

static void test_unknown_flags(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header out;
	char why[SR_WHY_SIZE];
	size_t n;

	n = make_message(buf, SR_DATA, 0, 4);
	buf[1] = 0x80;
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "unknown flags 0x80");
}

/* The claimed length may not exceed what the hellos agreed on, even if
 * that many bytes did arrive (a receive buffer can be larger). */
static void test_length_beyond_max(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD + 1];
	struct sr_header out;
	char why[SR_WHY_SIZE];
	size_t n;

	n = make_message(buf, SR_DATA, 0, MAX_PAYLOAD + 1);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "length 65 exceeds the max payload 64");
}

/* The header must agree with the device's byte count, both ways. */
static void test_length_mismatch(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header out;
	char why[SR_WHY_SIZE];
	size_t n;

	n = make_message(buf, SR_DATA, 0, 32);
	CHECK_INT_EQ(sr_header_decode(buf, n - 1, MAX_PAYLOAD, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "length 32, but 31 bytes of payload arrived");
	CHECK_INT_EQ(sr_header_decode(buf, n + 1, MAX_PAYLOAD, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "length 32, but 33 bytes of payload arrived");
	/* a header alone that claims a payload */
	CHECK_INT_EQ(sr_header_decode(buf, SR_HEADER_SIZE, MAX_PAYLOAD, &out, why, sizeof(why)),
	             -EBADMSG);
	CHECK_STR_EQ(why, "length 32, but 0 bytes of payload arrived");
}

/* Hostile lengths: the largest values must fail cleanly, not wrap around. */
static void test_hostile_length(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header h = {.type = SR_DATA, .length = 0xffffffffu};
	struct sr_header out = {0};
	char why[SR_WHY_SIZE];

	sr_header_encode(&h, buf);
	CHECK_INT_EQ(sr_header_decode(buf, sizeof(buf), MAX_PAYLOAD, &out, why, sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "length 4294967295 exceeds the max payload 64");
	/* even with the largest max payload allowed */
	CHECK_INT_EQ(sr_header_decode(buf, sizeof(buf), 0xffffffffu, &out, why, sizeof(why)),
	             -EBADMSG);
	CHECK_STR_EQ(why, "length 4294967295, but 64 bytes of payload arrived");
	CHECK_INT_EQ(out.type, 0);
}

static void test_bye_with_payload(void)
{
	uint8_t buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	struct sr_header out;
	char why[SR_WHY_SIZE];
	size_t n;

	n = make_message(buf, SR_BYE, 0, 5);
	CHECK_INT_EQ(sr_header_decode(buf, n, MAX_PAYLOAD, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "BYE with 5 bytes of payload");
}

static void test_type_names(void)
{
	CHECK_STR_EQ(sr_type_name(SR_DATA), "DATA");
	CHECK_STR_EQ(sr_type_name(SR_ECHO), "ECHO");
	CHECK_STR_EQ(sr_type_name(SR_BYE), "BYE");
	CHECK_STR_EQ(sr_type_name(0), "unknown");
}

/* Each message has its own pattern; a check names the first bad offset. */
static void test_pattern(void)
{
	uint8_t a[2048], b[2048];
	size_t offset = 12345;

	sr_pattern_fill(a, sizeof(a), 7);
	sr_pattern_fill(b, sizeof(b), 8);
	CHECK_TRUE(memcmp(a, b, sizeof(a)) != 0);
	CHECK_TRUE(sr_pattern_check(a, sizeof(a), 7, &offset));
	CHECK_INT_EQ(offset, 12345); /* untouched on success */
	CHECK_TRUE(!sr_pattern_check(a, sizeof(a), 8, &offset));
	CHECK_INT_EQ(offset, 0);
	a[1500] ^= 1;
	CHECK_TRUE(!sr_pattern_check(a, sizeof(a), 7, &offset));
	CHECK_INT_EQ(offset, 1500);
	/* messages 256 apart must still differ somewhere in the first bytes */
	sr_pattern_fill(b, 16, 7 + 256);
	CHECK_TRUE(memcmp(a, b, 16) != 0);
}

int main(void)
{
	test_encode_bytes();
	test_good();
	test_truncated();
	test_unknown_type();
	test_unknown_flags();
	test_length_beyond_max();
	test_length_mismatch();
	test_hostile_length();
	test_bye_with_payload();
	test_type_names();
	test_pattern();
	return check_finish();
}
