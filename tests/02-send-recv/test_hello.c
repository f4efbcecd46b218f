/* SPDX-License-Identifier: MIT */
/*
 * The hello of chapter 02 (02-send-recv/wire.h): its exact bytes on the
 * wire, and sr_hello_decode() against short, padded, malformed and hostile
 * private data, since every byte of it comes from a peer.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

/* As big as an accept's private data (196 bytes), the largest a hello comes in. */
#define PRIVATE_DATA_MAX 196

/* A valid hello, encoded at the start of a zeroed private-data buffer. */
static void make_wire(uint8_t buf[PRIVATE_DATA_MAX], uint16_t credits, uint32_t max_payload)
{
	struct sr_hello h;

	memset(buf, 0, PRIVATE_DATA_MAX);
	sr_hello_init(&h, credits, max_payload);
	sr_hello_encode(&h, buf);
}

/* Overwrite a big-endian field of an encoded hello. */
static void poke16(uint8_t *buf, size_t off, uint16_t v)
{
	buf[off] = (uint8_t)(v >> 8);
	buf[off + 1] = (uint8_t)v;
}

static void poke32(uint8_t *buf, size_t off, uint32_t v)
{
	poke16(buf, off, (uint16_t)(v >> 16));
	poke16(buf, off + 2, (uint16_t)v);
}

/* The wire format is fixed, byte for byte, in network byte order. */
static void test_encode_bytes(void)
{
	static const uint8_t want[SR_HELLO_WIRE_SIZE] = {
	    'R',  'E',  'X',  'S',  0x00, 0x01, 0x00, 0x00, /* magic, version, reserved */
	    0x00, 0x11, 0x00, 0x00,                         /* credits 17, reserved */
	    0x00, 0x10, 0x00, 0x00,                         /* max payload 1 MiB */
	};
	uint8_t buf[SR_HELLO_WIRE_SIZE];
	struct sr_hello h;
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	sr_hello_init(&h, 17, SR_MAX_PAYLOAD);
	sr_hello_encode(&h, buf);
	for (i = 0; i < sizeof(want); i++)
		CHECK_INT_EQ(buf[i], want[i]);
}

static void test_round_trip(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE] = "";

	make_wire(buf, 16, 64);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), 0);
	CHECK_U64_EQ(out.magic, SR_HELLO_MAGIC);
	CHECK_INT_EQ(out.version, SR_VERSION);
	CHECK_INT_EQ(out.credits, 16);
	CHECK_U64_EQ(out.max_payload, 64);
	CHECK_STR_EQ(why, "");
}

/* The CM pads private data (56 bytes in a connect request, 196 in an
 * accept): the extra bytes, whatever they hold, are ignored. */
static void test_padding_ignored(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE];

	make_wire(buf, 65, SR_MAX_PAYLOAD);
	memset(buf + SR_HELLO_WIRE_SIZE, 0xff, PRIVATE_DATA_MAX - SR_HELLO_WIRE_SIZE);
	CHECK_INT_EQ(sr_hello_decode(buf, 56, &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.credits, 65);
	CHECK_INT_EQ(sr_hello_decode(buf, PRIVATE_DATA_MAX, &out, why, sizeof(why)), 0);
	CHECK_U64_EQ(out.max_payload, SR_MAX_PAYLOAD);
}

static void test_truncated(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out = {0};
	char why[SR_WHY_SIZE];

	make_wire(buf, 16, 64);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE - 1, &out, why, sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 15 bytes");
	CHECK_INT_EQ(sr_hello_decode(buf, 0, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 0 bytes");
	/* *out is untouched on failure */
	CHECK_INT_EQ(out.magic, 0);
}

/* A client of chapter 01 sends its greeting ("REXG"): not a hello. */
static void test_bad_magic(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE];

	make_wire(buf, 16, 64);
	poke32(buf, 0, 0x52455847u);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x52455847");
	/* no private data at all arrives as zeros */
	memset(buf, 0, sizeof(buf));
	CHECK_INT_EQ(sr_hello_decode(buf, 56, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
}

static void test_bad_version(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE];

	make_wire(buf, 16, 64);
	poke16(buf, 4, 2);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 2, want 1");
	poke16(buf, 4, 0xffff);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 65535, want 1");
}

static void test_reserved_not_zero(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE];

	make_wire(buf, 16, 64);
	poke16(buf, 6, 0x0100);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "reserved field 0x0100 not zero");
	make_wire(buf, 16, 64);
	poke16(buf, 10, 0x0001);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
}

/* A peer with no receive posted could never be sent anything. */
static void test_no_credits(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE];

	make_wire(buf, 0, 64);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), -EINVAL);
	CHECK_STR_EQ(why, "no credits: the sender posted no receive");
	make_wire(buf, 0xffff, 64); /* many credits are the peer's problem, not ours */
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.credits, 0xffff);
}

/* The max payload sizes our receives: 1 byte .. 1 MiB, nothing else. */
static void test_max_payload_range(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[SR_WHY_SIZE];

	make_wire(buf, 16, 1);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), 0);
	make_wire(buf, 16, SR_MAX_PAYLOAD);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), 0);
	make_wire(buf, 16, SR_MAX_PAYLOAD + 1);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "max payload 1048577, want 1..1048576");
	make_wire(buf, 16, 0);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "max payload 0, want 1..1048576");
	make_wire(buf, 16, 0xffffffffu);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "max payload 4294967295, want 1..1048576");
}

/* All bytes 0xff: magic fails first, nothing else is believed. */
static void test_all_ones(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out = {0};
	char why[SR_WHY_SIZE];

	memset(buf, 0xff, sizeof(buf));
	CHECK_INT_EQ(sr_hello_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0xffffffff");
	CHECK_INT_EQ(out.credits, 0);
}

/* A reason is cut to fit a small buffer, always NUL-terminated. */
static void test_why_truncated(void)
{
	uint8_t buf[PRIVATE_DATA_MAX];
	struct sr_hello out;
	char why[8];

	make_wire(buf, 0, 64);
	CHECK_INT_EQ(sr_hello_decode(buf, SR_HELLO_WIRE_SIZE, &out, why, sizeof(why)), -EINVAL);
	CHECK_STR_EQ(why, "no cred");
}

int main(void)
{
	test_encode_bytes();
	test_round_trip();
	test_padding_ignored();
	test_truncated();
	test_bad_magic();
	test_bad_version();
	test_reserved_not_zero();
	test_no_credits();
	test_max_payload_range();
	test_all_ones();
	test_why_truncated();
	return check_finish();
}
