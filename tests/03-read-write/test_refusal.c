/* SPDX-License-Identifier: MIT */
/*
 * The refusal of chapter 03 (03-read-write/wire.h): the reason a server
 * sends in a reject's private data, which the client prints. Its text comes
 * from a peer and goes to a terminal, so it must be terminated and printable.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

/* A refusal as a reject carries it: 148 bytes. */
static void make_wire(uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX], const char *text)
{
	struct rw_refusal r;

	memset(buf, 0, RW_REJECT_PRIVATE_DATA_MAX);
	rw_refusal_init(&r, text);
	rw_refusal_encode(&r, buf);
}

static void test_encode_bytes(void)
{
	static const uint8_t head[8] = {'R', 'W', 'N', 'O', 0, 1, 0, 0};
	uint8_t buf[RW_REFUSAL_SIZE];
	struct rw_refusal r;
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	rw_refusal_init(&r, "no");
	rw_refusal_encode(&r, buf);
	for (i = 0; i < sizeof(head); i++)
		CHECK_INT_EQ(buf[i], head[i]);
	CHECK_INT_EQ(buf[8], 'n');
	CHECK_INT_EQ(buf[9], 'o');
	for (i = 10; i < RW_REFUSAL_SIZE; i++) /* NUL padding, not leftovers */
		CHECK_INT_EQ(buf[i], 0);
}

static void test_round_trip(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE] = "";
	struct rw_refusal out;

	make_wire(buf, "asks for 131072 bytes, this server has 65536");
	memset(buf + RW_REFUSAL_SIZE, 0xff, sizeof(buf) - RW_REFUSAL_SIZE); /* CM padding */
	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), 0);
	CHECK_STR_EQ(out.text, "asks for 131072 bytes, this server has 65536");
	CHECK_STR_EQ(why, "");
}

static void test_init_cuts_and_cleans(void)
{
	char long_text[200];
	struct rw_refusal r;

	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	rw_refusal_init(&r, long_text);
	CHECK_INT_EQ(strlen(r.text), RW_REFUSAL_TEXT_SIZE - 1);
	rw_refusal_init(&r, "tab\there\x1b");
	CHECK_STR_EQ(r.text, "tab?here?");
}

static void test_truncated(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_refusal out;

	make_wire(buf, "no");
	CHECK_INT_EQ(rw_refusal_decode(buf, RW_REFUSAL_SIZE - 1, &out, why, sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 95 bytes");
}

/* A reject with no private data (e.g. from the CM itself): 148 zero bytes. */
static void test_zeros(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX] = {0};
	char why[RW_WHY_SIZE];
	struct rw_refusal out;

	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
}

static void test_version_and_reserved(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_refusal out;

	make_wire(buf, "no");
	buf[5] = 9;
	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 9, want 1");
	make_wire(buf, "no");
	buf[7] = 1;
	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "reserved field 0x0001, want 0");
}

/* 88 bytes of text and no NUL: the decoder must not read past the field. */
static void test_not_terminated(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_refusal out;

	make_wire(buf, "no");
	memset(buf + 8, 'A', sizeof(buf) - 8);
	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "text not terminated");
}

/* A terminal escape sequence would reach the user's screen. */
static void test_not_printable(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_refusal out;

	make_wire(buf, "no");
	memcpy(buf + 8, "\x1b[2J", 4);
	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "text not printable");
}

/* Bytes after the NUL are padding; they do not reach the caller. */
static void test_garbage_after_nul(void)
{
	uint8_t buf[RW_REJECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_refusal out;

	make_wire(buf, "no");
	buf[8 + 5] = 0x07;
	CHECK_INT_EQ(rw_refusal_decode(buf, sizeof(buf), &out, why, sizeof(why)), 0);
	CHECK_STR_EQ(out.text, "no");
	CHECK_INT_EQ(out.text[5], 0);
}

int main(void)
{
	test_encode_bytes();
	test_round_trip();
	test_init_cuts_and_cleans();
	test_truncated();
	test_zeros();
	test_version_and_reserved();
	test_not_terminated();
	test_not_printable();
	test_garbage_after_nul();
	return check_finish();
}
