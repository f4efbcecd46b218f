/* SPDX-License-Identifier: MIT */
/*
 * The greeting and the refusal of chapter 01 (01-connect/wire.h): their
 * exact bytes on the wire, and the decoders against short, padded, malformed
 * and hostile input, since every byte of them comes from a peer.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

/* A valid greeting "hello", encoded, in a buffer as big as a REP's private data. */
static void make_wire(uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX])
{
	struct greeting g;

	memset(buf, 0, CM_ACCEPT_PRIVATE_DATA_MAX);
	CHECK_INT_EQ(greeting_init(&g, "hello"), 0);
	greeting_encode(&g, buf);
}

/* The wire format is fixed, byte for byte, in network byte order. */
static void test_encode_bytes(void)
{
	static const uint8_t want_head[8] = { 'R', 'E', 'X', 'G', 0x00, 0x01, 0x00, 0x00 };
	uint8_t buf[GREETING_WIRE_SIZE];
	struct greeting g;
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	CHECK_INT_EQ(greeting_init(&g, "01-connect-client"), 0);
	greeting_encode(&g, buf);
	for (i = 0; i < sizeof(want_head); i++)
		CHECK_INT_EQ(buf[i], want_head[i]);
	CHECK_INT_EQ(memcmp(buf + 8, "01-connect-client", 17), 0);
	/* the rest of the text field is NUL padding, not leftovers */
	for (i = 8 + 17; i < GREETING_WIRE_SIZE; i++)
		CHECK_INT_EQ(buf[i], 0);
}

static void test_round_trip(void)
{
	uint8_t buf[GREETING_WIRE_SIZE];
	struct greeting in, out;
	char why[GREETING_WHY_SIZE] = "";

	CHECK_INT_EQ(greeting_init(&in, "01-connect-server"), 0);
	greeting_encode(&in, buf);
	CHECK_INT_EQ(greeting_decode(buf, sizeof(buf), &out, why, sizeof(why)), 0);
	CHECK_INT_EQ(out.magic, GREETING_MAGIC);
	CHECK_INT_EQ(out.version, GREETING_VERSION);
	CHECK_INT_EQ(out.flags, 0);
	CHECK_STR_EQ(out.text, "01-connect-server");
	CHECK_STR_EQ(why, "");
}

/* The CM pads private data (56 bytes in a REQ, 196 in a REP): the extra
 * bytes, whatever they hold, are ignored. */
static void test_padding_ignored(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	memset(buf + GREETING_WIRE_SIZE, 0xff, sizeof(buf) - GREETING_WIRE_SIZE);
	CHECK_INT_EQ(greeting_decode(buf, CM_CONNECT_PRIVATE_DATA_MAX, &out, why, sizeof(why)), 0);
	CHECK_STR_EQ(out.text, "hello");
	CHECK_INT_EQ(greeting_decode(buf, sizeof(buf), &out, why, sizeof(why)), 0);
	CHECK_STR_EQ(out.text, "hello");
}

static void test_too_short(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE - 1, &out, why, sizeof(why)),
		     -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 31 bytes");
	CHECK_INT_EQ(greeting_decode(buf, 0, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 0 bytes");
}

/* What a peer that sends no private data at all looks like: 56 zero bytes. */
static void test_zeros_bad_magic(void)
{
	uint8_t buf[CM_CONNECT_PRIVATE_DATA_MAX] = { 0 };
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	CHECK_INT_EQ(greeting_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
}

/* A magic in the wrong byte order is a wrong magic. */
static void test_byte_swapped_magic(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	buf[0] = 'G';
	buf[1] = 'X';
	buf[2] = 'E';
	buf[3] = 'R';
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x47584552");
}

static void test_wrong_version(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	buf[4] = 0x00;
	buf[5] = 0x02;
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)),
		     -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 2, want 1");
	buf[4] = 0xff;
	buf[5] = 0xff;
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)),
		     -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 65535, want 1");
}

static void test_unknown_flags(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	buf[6] = 0x80;
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)),
		     -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "unknown flags 0x8000");
}

/* 24 printable bytes and no NUL: the decoder must not read past the field. */
static void test_text_not_terminated(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	memset(buf + 8, 'A', GREETING_TEXT_SIZE);
	memset(buf + GREETING_WIRE_SIZE, 'B', sizeof(buf) - GREETING_WIRE_SIZE);
	CHECK_INT_EQ(greeting_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "text not terminated");
}

/* A terminal escape sequence in the text would reach the user's screen. */
static void test_text_not_printable(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	memcpy(buf + 8, "\x1b[2J", 4);
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "text not printable");
	make_wire(buf);
	buf[9] = (uint8_t)0xc3; /* not ASCII */
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)), -EBADMSG);
}

/* Bytes after the text's NUL are padding; they do not reach the caller. */
static void test_garbage_after_nul_dropped(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	buf[8 + 10] = 0x07;
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)), 0);
	CHECK_STR_EQ(out.text, "hello");
	CHECK_INT_EQ(out.text[10], 0);
}

/* A failed decode leaves *out untouched. */
static void test_out_untouched_on_error(void)
{
	uint8_t buf[CM_CONNECT_PRIVATE_DATA_MAX] = { 0 };
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	memset(&out, 0x5a, sizeof(out));
	CHECK_INT_EQ(greeting_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_INT_EQ(out.magic, 0x5a5a5a5a);
}

/* Every reason is short: it fits a log line and a refusal whole. */
static void test_reasons_are_short(void)
{
	uint8_t buf[CM_ACCEPT_PRIVATE_DATA_MAX];
	char why[GREETING_WHY_SIZE];
	struct greeting out;

	make_wire(buf);
	buf[4] = buf[5] = 0xff;
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, sizeof(why)),
		     -EPROTONOSUPPORT);
	CHECK_TRUE(strlen(why) < GREETING_WHY_SIZE - 1);
	/* a small buffer gets a cut, terminated reason */
	CHECK_INT_EQ(greeting_decode(buf, GREETING_WIRE_SIZE, &out, why, 8), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version");
}

static void test_init_checks_text(void)
{
	struct greeting g;

	CHECK_INT_EQ(greeting_init(&g, "tab\there"), -EINVAL);
	/* longer than the field: cut to GREETING_TEXT_MAX characters */
	CHECK_INT_EQ(greeting_init(&g, "abcdefghijklmnopqrstuvwxyz"), 0);
	CHECK_STR_EQ(g.text, "abcdefghijklmnopqrstuvw");
	CHECK_INT_EQ(strlen(g.text), GREETING_TEXT_MAX);
	CHECK_INT_EQ(g.flags, 0);
}

/* A refusal travels in a reject's 148 bytes of private data, padded. */
static void test_refusal_round_trip(void)
{
	uint8_t buf[CM_REJECT_PRIVATE_DATA_MAX] = { 0 };
	char text[REFUSAL_SIZE_MAX] = "";

	CHECK_INT_EQ(refusal_encode("bad greeting: version 2, want 1", buf, sizeof(buf)), 32);
	CHECK_INT_EQ(buf[31], 0);
	CHECK_INT_EQ(refusal_decode(buf, sizeof(buf), text, sizeof(text)), 0);
	CHECK_STR_EQ(text, "bad greeting: version 2, want 1");
}

static void test_refusal_cut_to_fit(void)
{
	uint8_t buf[CM_REJECT_PRIVATE_DATA_MAX];
	char long_reason[100];
	char text[REFUSAL_SIZE_MAX];
	char small[6];

	memset(long_reason, 'x', sizeof(long_reason) - 1);
	long_reason[sizeof(long_reason) - 1] = '\0';
	CHECK_INT_EQ(refusal_encode(long_reason, buf, sizeof(buf)), REFUSAL_SIZE_MAX);
	CHECK_INT_EQ(buf[REFUSAL_SIZE_MAX - 1], 0);
	CHECK_INT_EQ(refusal_decode(buf, sizeof(buf), text, sizeof(text)), 0);
	CHECK_INT_EQ(strlen(text), REFUSAL_SIZE_MAX - 1);
	CHECK_INT_EQ(refusal_decode(buf, sizeof(buf), small, sizeof(small)), 0);
	CHECK_STR_EQ(small, "xxxxx");
	CHECK_INT_EQ(refusal_encode("abc", buf, 2), 2);
	CHECK_STR_EQ((char *)buf, "a");
	CHECK_INT_EQ(refusal_encode("abc", buf, 0), 0);
}

/* Our own reasons never carry control characters onto the wire. */
static void test_refusal_encode_replaces_unprintable(void)
{
	uint8_t buf[REFUSAL_SIZE_MAX];

	CHECK_INT_EQ(refusal_encode("a\nb\x1b", buf, sizeof(buf)), 5);
	CHECK_STR_EQ((char *)buf, "a?b?");
}

/* A reject without a reason (the CM's own, for example) is all zeros. */
static void test_refusal_empty(void)
{
	uint8_t buf[CM_REJECT_PRIVATE_DATA_MAX] = { 0 };
	char text[REFUSAL_SIZE_MAX] = "untouched";

	CHECK_INT_EQ(refusal_decode(buf, sizeof(buf), text, sizeof(text)), -ENODATA);
	CHECK_INT_EQ(refusal_decode(buf, 0, text, sizeof(text)), -ENODATA);
	CHECK_STR_EQ(text, "untouched");
}

static void test_refusal_not_terminated(void)
{
	uint8_t buf[CM_REJECT_PRIVATE_DATA_MAX];
	char text[REFUSAL_SIZE_MAX] = "untouched";

	/* no NUL within the first REFUSAL_SIZE_MAX bytes, though one comes later */
	memset(buf, 'A', sizeof(buf));
	buf[sizeof(buf) - 1] = 0;
	CHECK_INT_EQ(refusal_decode(buf, sizeof(buf), text, sizeof(text)), -EBADMSG);
	/* no NUL within a short field */
	CHECK_INT_EQ(refusal_decode(buf, 10, text, sizeof(text)), -EBADMSG);
	CHECK_STR_EQ(text, "untouched");
}

static void test_refusal_not_printable(void)
{
	static const uint8_t escape[] = "\x1b[2Jgone";
	char text[REFUSAL_SIZE_MAX] = "untouched";

	CHECK_INT_EQ(refusal_decode(escape, sizeof(escape), text, sizeof(text)), -EBADMSG);
	CHECK_STR_EQ(text, "untouched");
}

int main(void)
{
	test_encode_bytes();
	test_round_trip();
	test_padding_ignored();
	test_too_short();
	test_zeros_bad_magic();
	test_byte_swapped_magic();
	test_wrong_version();
	test_unknown_flags();
	test_text_not_terminated();
	test_text_not_printable();
	test_garbage_after_nul_dropped();
	test_out_untouched_on_error();
	test_reasons_are_short();
	test_init_checks_text();
	test_refusal_round_trip();
	test_refusal_cut_to_fit();
	test_refusal_encode_replaces_unprintable();
	test_refusal_empty();
	test_refusal_not_terminated();
	test_refusal_not_printable();
	return check_finish();
}
