/* SPDX-License-Identifier: MIT */
/*
 * bench_wire: hello, accept and reject survive a round trip; the decoders
 * refuse a wrong magic, a wrong version, short messages and out-of-range
 * fields; control immediates split into type and value; the pattern
 * check finds the first differing byte; op lists parse and print.
 */
#include <errno.h>
#include <string.h>

#include "bench_wire.h"
#include "check.h"

int main(void)
{
	struct bench_hello h = {.op = BENCH_OP_READ,
	                        .mode = BENCH_MODE_LAT,
	                        .max_size = 4096,
	                        .depth = 1,
	                        .qp_index = 2,
	                        .qps = 3,
	                        .addr = 0x1122334455667788ull,
	                        .rkey = 0xabcdef01};
	struct bench_hello g;
	struct bench_accept a = {.addr = 0x1000,
	                         .rkey = 7,
	                         .length = 65536,
	                         .recv_depth = 264,
	                         .lease_ms = 1500,
	                         .grant = BENCH_GRANT_WINDOW},
	                    b;
	struct bench_reject r = {BENCH_REJECT_SIZE, 1 << 20, 65536}, s;
	uint8_t buf[64], pat[1000];
	char why[BENCH_WHY_SIZE], text[128];

	/* Round trips, with CM padding after the message. */
	memset(buf, 0xee, sizeof(buf));
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), 0);
	CHECK_INT_EQ(g.op, BENCH_OP_READ);
	CHECK_INT_EQ(g.mode, BENCH_MODE_LAT);
	CHECK_U64_EQ(g.max_size, 4096);
	CHECK_U64_EQ(g.addr, 0x1122334455667788ull);
	CHECK_U64_EQ(g.rkey, 0xabcdef01);
	CHECK_INT_EQ(g.qp_index, 2);
	CHECK_INT_EQ(buf[0], 0x52); /* big-endian magic "RXB6" */

	/* Too short, bad magic, bad version. */
	CHECK_INT_EQ(bench_hello_decode(buf, BENCH_HELLO_LEN - 1, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "hello of 31 bytes, expected 32");
	buf[0] ^= 1;
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "not a 06-mr-pool peer");
	buf[0] ^= 1;
	buf[5] = 9;
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "version 9, expected 3");

	/* Fields out of range. */
	h.op = 6;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "unknown op 6");
	/* An atomic's size is 8, and nothing else. */
	h.op = BENCH_OP_FADD;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "an atomic's size is 8, not ");
	h.max_size = BENCH_ATOMIC_SIZE;
	h.op = BENCH_OP_CAS;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), 0);
	CHECK_INT_EQ(g.op, BENCH_OP_CAS);
	h.op = BENCH_OP_SEND;
	h.max_size = BENCH_MAX_SIZE + 1;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "size 134217729 outside");
	h.max_size = 0;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	h.max_size = 8;
	h.depth = 0;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "depth 0");
	h.depth = 1;
	h.qp_index = 3;
	bench_hello_encode(&h, buf);
	CHECK_INT_EQ(bench_hello_decode(buf, 56, &g, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "connection 3 of 3");

	/* Accept. */
	bench_accept_encode(&a, buf);
	CHECK_INT_EQ(bench_accept_decode(buf, BENCH_ACCEPT_LEN, &b, why, sizeof(why)), 0);
	CHECK_U64_EQ(b.addr, 0x1000);
	CHECK_U64_EQ(b.length, 65536);
	CHECK_U64_EQ(b.recv_depth, 264);
	CHECK_U64_EQ(b.lease_ms, 1500);
	CHECK_U64_EQ(b.grant, BENCH_GRANT_WINDOW);
	CHECK_INT_EQ(bench_accept_decode(buf, 10, &b, why, sizeof(why)), -EPROTO);
	a.grant = 3; /* no such grant */
	bench_accept_encode(&a, buf);
	CHECK_INT_EQ(bench_accept_decode(buf, BENCH_ACCEPT_LEN, &b, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "grant 3 unknown");
	a.grant = BENCH_GRANT_POOL;
	a.length = 0;
	bench_accept_encode(&a, buf);
	CHECK_INT_EQ(bench_accept_decode(buf, BENCH_ACCEPT_LEN, &b, why, sizeof(why)), -EPROTO);
	a.length = 4096;
	a.addr = UINT64_MAX - 10;
	bench_accept_encode(&a, buf);
	CHECK_INT_EQ(bench_accept_decode(buf, BENCH_ACCEPT_LEN, &b, why, sizeof(why)), -EPROTO);
	CHECK_STR_CONTAINS(why, "wraps");

	/* Reject, and what it says. */
	bench_reject_encode(&r, buf);
	CHECK_INT_EQ(bench_reject_decode(buf, BENCH_REJECT_LEN, &s), 0);
	CHECK_STR_EQ(bench_reject_format(&s, text, sizeof(text)),
	             "size 1048576 is above the server's -s 65536");
	r = (struct bench_reject){BENCH_REJECT_OP, BENCH_OP_READ, 1u << BENCH_OP_WRITE | 1u};
	bench_reject_encode(&r, buf);
	CHECK_INT_EQ(bench_reject_decode(buf, BENCH_REJECT_LEN, &s), 0);
	CHECK_STR_EQ(bench_reject_format(&s, text, sizeof(text)),
	             "op read is not served (the server's -o send,write)");
	r = (struct bench_reject){BENCH_REJECT_SRQ_SIZE, 8192, 4096};
	bench_reject_encode(&r, buf);
	CHECK_INT_EQ(bench_reject_decode(buf, BENCH_REJECT_LEN, &s), 0);
	CHECK_STR_EQ(bench_reject_format(&s, text, sizeof(text)),
	             "a SEND of 8192 bytes is above the 4096 of the server's shared receive queue "
	             "(its -S)");
	buf[7] = 7; /* the first reason past the last */
	CHECK_INT_EQ(bench_reject_decode(buf, BENCH_REJECT_LEN, &s), -EPROTO);
	buf[7] = 99; /* unknown reason */
	CHECK_INT_EQ(bench_reject_decode(buf, BENCH_REJECT_LEN, &s), -EPROTO);
	CHECK_INT_EQ(bench_reject_decode(buf, 8, &s), -EPROTO);

	/* Control immediates. */
	CHECK_INT_EQ(bench_ctrl_type(bench_ctrl_imm(BENCH_CTRL_START, 8u << 20)), BENCH_CTRL_START);
	CHECK_U64_EQ(bench_ctrl_value(bench_ctrl_imm(BENCH_CTRL_START, 8u << 20)), 8u << 20);
	CHECK_U64_EQ(bench_ctrl_value(bench_ctrl_imm(BENCH_CTRL_RESULT, BENCH_RESULT_NA)),
	             BENCH_RESULT_NA);

	/* Ops. */
	CHECK_INT_EQ(bench_ops_parse("all"), 0x3f);
	CHECK_INT_EQ(bench_ops_parse("fadd,cas"), 0x30);
	CHECK_INT_EQ(bench_ops_parse("write,read"), 0xa);
	CHECK_INT_EQ(bench_ops_parse("write,"), -1);
	CHECK_INT_EQ(bench_ops_parse("atomic"), -1);
	CHECK_STR_EQ(bench_ops_format(0xf, text, sizeof(text)), "send,write,write_imm,read");
	CHECK_STR_EQ(bench_ops_format(0x30, text, sizeof(text)), "fadd,cas");

	/* The pattern and its check; tags never 0 and never repeat at once. */
	bench_pattern_fill(pat, sizeof(pat), 42);
	CHECK_U64_EQ(bench_pattern_check(pat, sizeof(pat), 42), sizeof(pat));
	pat[700] ^= 0x10;
	CHECK_U64_EQ(bench_pattern_check(pat, sizeof(pat), 42), 700);
	CHECK_TRUE(bench_pattern_check(pat, 600, 43) < 600);
	CHECK_TRUE(bench_seed(0, 64, 0) != bench_seed(0, 64, 1));
	CHECK_INT_EQ(bench_tag(0), 1);
	CHECK_INT_EQ(bench_tag(254), 255);
	CHECK_INT_EQ(bench_tag(255), 1);
	return check_finish();
}
