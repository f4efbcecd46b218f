/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: 02-send-recv's decoders of peer input (also 05's): the
 * hello in private data, and the header in front of every message. A header
 * accepted never announces more payload than arrived or than agreed.
 */
#include "fuzz.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned which = (unsigned)fuzz_take(&in, 1) % 2;
	char why[SR_WHY_SIZE];
	uint8_t again[SR_HELLO_WIRE_SIZE];
	struct sr_hello h, h2;
	struct sr_header hdr;
	uint32_t max_payload;

	memset(why, 'x', sizeof(why));
	if (which == 0) {
		if (sr_hello_decode(in.p, in.n, &h, why, sizeof(why))) {
			fuzz_check_why(why, sizeof(why));
			return 0;
		}
		if (h.max_payload < 1 || h.max_payload > SR_MAX_PAYLOAD)
			abort();
		sr_hello_encode(&h, again);
		if (sr_hello_decode(again, sizeof(again), &h2, why, sizeof(why)) ||
		    h2.credits != h.credits || h2.max_payload != h.max_payload)
			abort();
		return 0;
	}
	max_payload = (uint32_t)fuzz_take(&in, 4);
	if (sr_header_decode(in.p, in.n, max_payload, &hdr, why, sizeof(why))) {
		fuzz_check_why(why, sizeof(why));
		return 0;
	}
	if (hdr.length > max_payload || (size_t)SR_HEADER_SIZE + hdr.length > in.n)
		abort();
	return 0;
}
