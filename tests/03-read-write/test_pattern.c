/* SPDX-License-Identifier: MIT */
/*
 * The data pattern of chapter 03 (03-read-write/wire.h): the client fills
 * its buffer with it, the server checks its memory against it knowing only
 * the seed. It must be the same byte for byte whichever way it is computed,
 * depend on the seed, and catch damage at any offset, including data that
 * is right but in the wrong place.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define LEN 4099 /* not a multiple of 8: the tail is handled byte by byte */

static void test_fill_matches_byte(void)
{
	uint8_t buf[LEN];
	size_t i;
	int mismatches = 0;

	rw_pattern_fill(buf, sizeof(buf), 0xabcdef01);
	for (i = 0; i < sizeof(buf); i++)
		if (buf[i] != rw_pattern_byte(0xabcdef01, i))
			mismatches++;
	CHECK_INT_EQ(mismatches, 0);
}

static void test_check_intact(void)
{
	uint8_t buf[LEN];
	uint64_t bad = 12345;
	size_t len;

	rw_pattern_fill(buf, sizeof(buf), 7);
	CHECK_INT_EQ(rw_pattern_check(buf, sizeof(buf), 7, &bad), 0);
	CHECK_U64_EQ(bad, 12345); /* untouched */
	/* every length, short ones included, is a prefix of the same pattern */
	for (len = 0; len < 20; len++)
		CHECK_INT_EQ(rw_pattern_check(buf, len, 7, &bad), 0);
}

/* One wrong byte anywhere is found, at its offset. */
static void test_check_finds_damage(void)
{
	static const size_t offsets[] = {0, 1, 7, 8, 1023, 1024, 1025, LEN - 3, LEN - 1};
	uint8_t buf[LEN];
	uint64_t bad;
	size_t i;

	for (i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
		rw_pattern_fill(buf, sizeof(buf), 99);
		buf[offsets[i]] ^= 0x01;
		CHECK_INT_EQ(rw_pattern_check(buf, sizeof(buf), 99, &bad), -EBADMSG);
		CHECK_U64_EQ(bad, offsets[i]);
	}
}

/* The first bad byte is reported, not a later one. */
static void test_check_reports_first(void)
{
	uint8_t buf[LEN];
	uint64_t bad;

	rw_pattern_fill(buf, sizeof(buf), 3);
	buf[2000] ^= 0xff;
	buf[17] ^= 0xff;
	CHECK_INT_EQ(rw_pattern_check(buf, sizeof(buf), 3, &bad), -EBADMSG);
	CHECK_U64_EQ(bad, 17);
}

/* Another seed, another pattern: a buffer left by an earlier run fails. */
static void test_seed_matters(void)
{
	uint8_t buf[LEN];
	uint64_t bad;

	rw_pattern_fill(buf, sizeof(buf), 1);
	CHECK_INT_EQ(rw_pattern_check(buf, sizeof(buf), 2, &bad), -EBADMSG);
	CHECK_TRUE(bad < 8);
}

/* Zeros (untouched memory) are not the pattern. */
static void test_zeros_fail(void)
{
	uint8_t buf[LEN] = {0};
	uint64_t bad;

	CHECK_INT_EQ(rw_pattern_check(buf, sizeof(buf), 0, &bad), -EBADMSG);
	CHECK_TRUE(bad < 8);
}

/* A block of the right data at the wrong offset (here shifted by 1024
 * bytes, as a misplaced packet would be) does not pass. */
static void test_shifted_block_fails(void)
{
	uint8_t buf[LEN];
	uint8_t shifted[LEN];
	uint64_t bad;

	rw_pattern_fill(buf, sizeof(buf), 42);
	memcpy(shifted, buf, sizeof(buf));
	memcpy(shifted + 1024, buf, 1024);
	CHECK_INT_EQ(rw_pattern_check(shifted, sizeof(shifted), 42, &bad), -EBADMSG);
	CHECK_TRUE(bad >= 1024 && bad < 1032);
}

/* The pattern is fixed, byte for byte, on every machine: a few known bytes. */
static void test_known_values(void)
{
	uint8_t buf[16];
	uint8_t again[16];

	rw_pattern_fill(buf, sizeof(buf), 0);
	rw_pattern_fill(again, sizeof(again), 0);
	CHECK_INT_EQ(memcmp(buf, again, sizeof(buf)), 0);
	/* byte 8 starts the second word: it differs from the first word's */
	CHECK_TRUE(memcmp(buf, buf + 8, 8) != 0);
}

int main(void)
{
	test_fill_matches_byte();
	test_check_intact();
	test_check_finds_damage();
	test_check_reports_first();
	test_seed_matters();
	test_zeros_fail();
	test_shifted_block_fails();
	test_known_values();
	return check_finish();
}
