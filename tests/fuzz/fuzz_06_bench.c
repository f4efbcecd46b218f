/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: 06-mr-pool's decoders of peer input: the client's hello
 * (which decides what the server registers and posts), the server's accept
 * (the buffer a client writes through), a reject, and the control
 * immediates. What is accepted survives its own encoding.
 */
#include "bench_wire.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned which = (unsigned)fuzz_take(&in, 1) % 4;
	char why[BENCH_WHY_SIZE], text[128];
	uint8_t again[BENCH_HELLO_LEN > BENCH_ACCEPT_LEN ? BENCH_HELLO_LEN : BENCH_ACCEPT_LEN];
	struct bench_hello h, h2;
	struct bench_accept a, a2;
	struct bench_reject r;
	uint32_t imm;
	int ret = 0;

	memset(why, 'x', sizeof(why));
	switch (which) {
	case 0:
		ret = bench_hello_decode(in.p, in.n, &h, why, sizeof(why));
		if (ret == 0) {
			bench_hello_encode(&h, again);
			if (bench_hello_decode(again, BENCH_HELLO_LEN, &h2, why, sizeof(why)) ||
			    memcmp(again, in.p, BENCH_HELLO_LEN) != 0)
				abort();
		}
		break;
	case 1:
		ret = bench_accept_decode(in.p, in.n, &a, why, sizeof(why));
		if (ret == 0) {
			bench_accept_encode(&a, again);
			if (bench_accept_decode(again, BENCH_ACCEPT_LEN, &a2, why, sizeof(why)))
				abort();
		}
		break;
	case 2:
		/* No reason text: it returns only 0 or an error. */
		if (bench_reject_decode(in.p, in.n, &r) == 0)
			bench_reject_format(&r, text, sizeof(text));
		return 0;
	default:
		imm = (uint32_t)fuzz_take(&in, 4);
		if (bench_ctrl_imm((enum bench_ctrl)bench_ctrl_type(imm), bench_ctrl_value(imm)) != imm)
			abort();
		return 0;
	}
	if (ret)
		fuzz_check_why(why, sizeof(why));
	return 0;
}
