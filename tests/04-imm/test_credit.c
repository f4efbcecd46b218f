/* SPDX-License-Identifier: MIT */
/*
 * The immediates of the SEND WITH IMMs (04-imm/wire.h): a credit (server to
 * client, how many slots come back) and "done" (client to server, how many
 * messages were written). Known bytes, round trips, and the values a hostile
 * or broken peer could send.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

static void test_credit_bytes(void)
{
	__be32 imm = im_credit_encode(4);
	uint8_t b[4];

	memcpy(b, &imm, 4);
	CHECK_INT_EQ(b[0], 0);
	CHECK_INT_EQ(b[1], 0);
	CHECK_INT_EQ(b[2], 0);
	CHECK_INT_EQ(b[3], 4);
	imm = im_credit_encode(IM_MAX_SLOTS);
	memcpy(b, &imm, 4);
	CHECK_INT_EQ(b[2], 1);
	CHECK_INT_EQ(b[3], 0);
}

static void test_credit_limits(void)
{
	struct im_ring r;
	char why[IM_WHY_SIZE] = "";
	uint32_t n = 12345;

	/* Five of 16 slots written: 1..5 may come back. */
	im_ring_init(&r, 16);
	r.next = 5;
	r.held = 11;
	CHECK_INT_EQ(im_credit_decode(im_credit_encode(1), &r, &n, why, sizeof(why)), 0);
	CHECK_INT_EQ(n, 1);
	CHECK_INT_EQ(im_credit_decode(im_credit_encode(5), &r, &n, why, sizeof(why)), 0);
	CHECK_INT_EQ(n, 5);
	CHECK_STR_EQ(why, "");
	/* The whole largest ring. */
	im_ring_init(&r, IM_MAX_SLOTS);
	r.held = 0;
	CHECK_INT_EQ(im_credit_decode(im_credit_encode(IM_MAX_SLOTS), &r, &n, why, sizeof(why)), 0);
	CHECK_INT_EQ(n, IM_MAX_SLOTS);
}

static void test_credit_hostile(void)
{
	struct im_ring r;
	char why[IM_WHY_SIZE];
	uint32_t n = 777;

	im_ring_init(&r, 16);
	r.held = 11;
	CHECK_INT_EQ(im_credit_decode(im_credit_encode(0), &r, &n, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "zero slots returned");
	/* One more than we wrote: a slot we never gave up. */
	CHECK_INT_EQ(im_credit_decode(im_credit_encode(6), &r, &n, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "6 slots returned, but the server has only 5");
	CHECK_INT_EQ(im_credit_decode(htonl(0xffffffffu), &r, &n, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "4294967295 slots returned, but the server has only 5");
	/* Credits before we wrote anything. */
	im_ring_init(&r, 16);
	CHECK_INT_EQ(im_credit_decode(im_credit_encode(1), &r, &n, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "1 slots returned, but the server has only 0");
	/* The wrong byte order: 4 read as 0x04000000. */
	r.held = 12;
	CHECK_INT_EQ(im_credit_decode((__be32)__builtin_bswap32((uint32_t)im_credit_encode(4)), &r,
	                              &n, why, sizeof(why)),
	             -EPROTO);
	CHECK_STR_EQ(why, "67108864 slots returned, but the server has only 4");
	CHECK_INT_EQ(n, 777); /* untouched on every failure */
}

static void test_done(void)
{
	char why[IM_WHY_SIZE] = "";
	__be32 imm = im_done_encode(0x01020304u);
	uint8_t b[4];

	memcpy(b, &imm, 4);
	CHECK_INT_EQ(b[0], 1);
	CHECK_INT_EQ(b[1], 2);
	CHECK_INT_EQ(b[2], 3);
	CHECK_INT_EQ(b[3], 4);
	CHECK_INT_EQ(im_done_decode(im_done_encode(10000), 10000, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_done_decode(im_done_encode(0), 0, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_done_decode(im_done_encode(UINT32_MAX), UINT32_MAX, why, sizeof(why)), 0);
	CHECK_STR_EQ(why, "");
	CHECK_INT_EQ(im_done_decode(im_done_encode(10001), 10000, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "the client says it wrote 10001 messages, but 10000 arrived");
	CHECK_INT_EQ(im_done_decode(im_done_encode(3), 4, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "the client says it wrote 3 messages, but 4 arrived");
}

int main(void)
{
	test_credit_bytes();
	test_credit_limits();
	test_credit_hostile();
	test_done();
	return check_finish();
}
