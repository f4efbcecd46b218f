/* SPDX-License-Identifier: MIT */
/*
 * The client's messages (04-imm/wire.h): the server checks each one in its
 * slot, knowing only its sequence number. Filling and checking must agree
 * byte for byte, and a message in the wrong slot, a stale slot, a zeroed
 * slot or a shifted block must not pass.
 */
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define LEN 4099 /* not a multiple of 8: the tail goes byte by byte */

static void test_fill_matches_byte(void)
{
	static uint8_t buf[LEN];
	uint32_t i, mismatches = 0;

	im_pattern_fill(buf, LEN, 42);
	for (i = 0; i < LEN; i++)
		if (buf[i] != im_pattern_byte(42, i))
			mismatches++;
	CHECK_INT_EQ(mismatches, 0);
}

static void test_intact(void)
{
	static uint8_t buf[LEN];
	uint32_t bad = 999, len;

	for (len = 0; len <= 17; len++) { /* every tail length, and 0 */
		im_pattern_fill(buf, len, 7);
		CHECK_TRUE(im_pattern_check(buf, len, 7, &bad));
	}
	im_pattern_fill(buf, LEN, 7);
	CHECK_TRUE(im_pattern_check(buf, LEN, 7, &bad));
	CHECK_INT_EQ(bad, 999); /* untouched */
}

static void test_damage_found(void)
{
	static uint8_t buf[LEN];
	uint32_t bad = 0;

	im_pattern_fill(buf, LEN, 1);
	buf[1000] ^= 0x01;
	CHECK_TRUE(!im_pattern_check(buf, LEN, 1, &bad));
	CHECK_INT_EQ(bad, 1000);
	buf[1000] ^= 0x01;
	buf[LEN - 1] ^= 0x80; /* in the tail */
	CHECK_TRUE(!im_pattern_check(buf, LEN, 1, &bad));
	CHECK_INT_EQ(bad, LEN - 1);
}

/* The previous message still in the slot, or the next one, is not this one. */
static void test_other_messages(void)
{
	static uint8_t buf[LEN];
	uint32_t bad = 0;

	im_pattern_fill(buf, LEN, 5);
	CHECK_TRUE(!im_pattern_check(buf, LEN, 4, &bad));
	CHECK_TRUE(!im_pattern_check(buf, LEN, 6, &bad));
	/* Even one byte tells two messages apart (most of the time: the
	 * first bytes of messages 0..63 are all different). */
	{
		uint32_t seq, same = 0;

		for (seq = 1; seq < 64; seq++)
			if (im_pattern_byte(seq, 0) == im_pattern_byte(0, 0))
				same++;
		CHECK_TRUE(same < 3);
	}
}

/* A slot nobody wrote (zeros) never passes as message 0. */
static void test_zeros(void)
{
	static uint8_t buf[64];
	uint32_t bad = 99;

	memset(buf, 0, sizeof(buf));
	CHECK_TRUE(!im_pattern_check(buf, 8, 0, &bad));
	CHECK_INT_EQ(bad < 8, 1);
}

/* A block shifted by a word does not pass. */
static void test_shifted(void)
{
	static uint8_t buf[LEN], shifted[LEN];
	uint32_t bad = 0;

	im_pattern_fill(buf, LEN, 3);
	memcpy(shifted + 8, buf, LEN - 8);
	memcpy(shifted, buf, 8);
	CHECK_TRUE(!im_pattern_check(shifted, LEN, 3, &bad));
	CHECK_INT_EQ(bad / 8, 1); /* the first shifted word */
}

int main(void)
{
	test_fill_matches_byte();
	test_intact();
	test_damage_found();
	test_other_messages();
	test_zeros();
	test_shifted();
	return check_finish();
}
