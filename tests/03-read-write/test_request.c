/* SPDX-License-Identifier: MIT */
/*
 * The request of chapter 03 (03-read-write/wire.h): its bytes on the wire,
 * and rw_request_decode() against short, padded, malformed and hostile input.
 * The server decodes it from a client's connect request, before it has
 * registered anything.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "wire.h"

#define HAVE (1ull << 20) /* the server's -s in these tests */

/* A request for \p length bytes, as a connect request carries it: 56 bytes. */
static void make_wire(uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX], uint64_t length)
{
	struct rw_request r = {.length = length};

	memset(buf, 0, RW_CONNECT_PRIVATE_DATA_MAX);
	rw_request_encode(&r, buf);
}

static void test_encode_bytes(void)
{
	static const uint8_t want[RW_REQUEST_SIZE] = {'R', 'W', 'R', 'Q', 0, 1, 0, 0,
	                                              0,   0,   0,   0,   0, 1, 0, 2};
	struct rw_request r = {.length = 0x10002};
	uint8_t buf[RW_REQUEST_SIZE];
	size_t i;

	memset(buf, 0xaa, sizeof(buf));
	rw_request_encode(&r, buf);
	for (i = 0; i < sizeof(want); i++)
		CHECK_INT_EQ(buf[i], want[i]);
}

static void test_round_trip_with_padding(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE] = "";
	struct rw_request out = {0};

	make_wire(buf, 4096);
	/* The CM pads to 56 bytes; whatever is there is ignored. */
	memset(buf + RW_REQUEST_SIZE, 0xff, sizeof(buf) - RW_REQUEST_SIZE);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), 0);
	CHECK_U64_EQ(out.length, 4096);
	CHECK_STR_EQ(why, "");
}

static void test_limits(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, 1);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), 0);
	CHECK_U64_EQ(out.length, 1);
	make_wire(buf, HAVE);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), 0);
	CHECK_U64_EQ(out.length, HAVE);
}

static void test_truncated(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, 4096);
	CHECK_INT_EQ(rw_request_decode(buf, RW_REQUEST_SIZE - 1, HAVE, &out, why, sizeof(why)),
	             -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 15 bytes");
	CHECK_INT_EQ(rw_request_decode(buf, 0, HAVE, &out, why, sizeof(why)), -EMSGSIZE);
	CHECK_STR_EQ(why, "too short: 0 bytes");
}

/* A client that sends no private data: 56 zero bytes. */
static void test_zeros(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX] = {0};
	char why[RW_WHY_SIZE];
	struct rw_request out;

	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x00000000");
}

/* Another message's magic is a bad magic: a descriptor is not a request. */
static void test_other_magic(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, 4096);
	memcpy(buf, "RWDS", 4);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0x52574453");
}

static void test_version(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, 4096);
	buf[5] = 2;
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 2, want 1");
	buf[4] = buf[5] = 0xff;
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)),
	             -EPROTONOSUPPORT);
	CHECK_STR_EQ(why, "version 65535, want 1");
}

static void test_reserved(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, 4096);
	buf[7] = 1;
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "reserved field 0x0001, want 0");
}

static void test_zero_length(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, 0);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -ERANGE);
	CHECK_STR_EQ(why, "zero length");
}

static void test_more_than_the_server_has(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, HAVE + 1);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -ERANGE);
	CHECK_STR_EQ(why, "asks for 1048577 bytes, this server has 1048576");
}

/* The largest length there is: refused, and the reason still fits a refusal. */
static void test_hostile_length(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	make_wire(buf, UINT64_MAX);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), UINT64_MAX - 1, &out, why, sizeof(why)),
	             -ERANGE);
	CHECK_STR_EQ(why, "asks for 18446744073709551615 bytes, this server has "
	                  "18446744073709551614");
	CHECK_TRUE(strlen(why) < RW_REFUSAL_TEXT_SIZE);
}

/* All 0xff: a bad magic, and nothing else is looked at. */
static void test_all_ones(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out;

	memset(buf, 0xff, sizeof(buf));
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad magic 0xffffffff");
}

static void test_out_untouched_on_error(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX];
	char why[RW_WHY_SIZE];
	struct rw_request out = {.length = 77};

	make_wire(buf, 0);
	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -ERANGE);
	CHECK_U64_EQ(out.length, 77);
}

/* A tiny why buffer is cut, never overrun. */
static void test_small_why(void)
{
	uint8_t buf[RW_CONNECT_PRIVATE_DATA_MAX] = {0};
	char why[8];
	struct rw_request out;

	CHECK_INT_EQ(rw_request_decode(buf, sizeof(buf), HAVE, &out, why, sizeof(why)), -EBADMSG);
	CHECK_STR_EQ(why, "bad mag");
}

int main(void)
{
	test_encode_bytes();
	test_round_trip_with_padding();
	test_limits();
	test_truncated();
	test_zeros();
	test_other_magic();
	test_version();
	test_reserved();
	test_zero_length();
	test_more_than_the_server_has();
	test_hostile_length();
	test_all_ones();
	test_out_untouched_on_error();
	test_small_why();
	return check_finish();
}
