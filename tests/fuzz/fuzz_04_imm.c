/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: 04-imm's decoders of peer input: the ring's descriptor, the
 * 32-bit immediate of a WRITE WITH IMM (slot and length), a credit's
 * immediate, and "done". An immediate accepted names a slot of the ring and
 * no more bytes than a slot holds; a credit accepted returns no more slots
 * than the writer holds.
 */
#include "fuzz.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned which = (unsigned)fuzz_take(&in, 1) % 4;
	uint32_t a = (uint32_t)fuzz_take(&in, 4), b = (uint32_t)fuzz_take(&in, 4);
	__be32 imm = (__be32)fuzz_take(&in, 4);
	char why[IM_WHY_SIZE];
	struct im_descriptor d;
	struct im_imm m;
	struct im_ring r;
	uint32_t count;
	int ret = 0;

	memset(why, 'x', sizeof(why));
	switch (which) {
	case 0:
		ret = im_descriptor_decode(in.p, in.n, a, &d, why, sizeof(why));
		if (ret == 0 && (d.slots < 1 || d.slots > IM_MAX_SLOTS || d.slot_size < a))
			abort();
		break;
	case 1:
		ret = im_imm_decode(imm, a, b, &m, why, sizeof(why));
		if (ret == 0 && (m.slot >= a || m.length > b))
			abort();
		break;
	case 2:
		/* A ring of 1..IM_MAX_SLOTS slots, some of them taken by the writer. */
		im_ring_init(&r, 1 + a % IM_MAX_SLOTS);
		for (b %= r.slots + 1; b > 0; b--)
			im_ring_take(&r);
		ret = im_credit_decode(imm, &r, &count, why, sizeof(why));
		if (ret == 0 && (count < 1 || count > im_ring_out(&r)))
			abort();
		break;
	default:
		ret = im_done_decode(imm, a, why, sizeof(why));
		break;
	}
	if (ret)
		fuzz_check_why(why, sizeof(why));
	return 0;
}
