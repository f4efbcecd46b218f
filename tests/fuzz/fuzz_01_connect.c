/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: 01-connect's decoders of peer input, the greeting in a
 * connect request's private data and the refusal in a reject's. A greeting
 * accepted must survive its own encoding; a refusal accepted is printable
 * text that ends in the buffer given.
 */
#include <ctype.h>

#include "fuzz.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned which = (unsigned)fuzz_take(&in, 1) % 2;
	char why[GREETING_WHY_SIZE], text[REFUSAL_SIZE_MAX];
	uint8_t again[GREETING_WIRE_SIZE];
	struct greeting g, g2;
	size_t i;

	memset(why, 'x', sizeof(why));
	if (which == 0) {
		if (greeting_decode(in.p, in.n, &g, why, sizeof(why))) {
			fuzz_check_why(why, sizeof(why));
			return 0;
		}
		greeting_encode(&g, again);
		if (greeting_decode(again, sizeof(again), &g2, why, sizeof(why)))
			abort(); /* we would send what we refuse */
		return 0;
	}
	if (refusal_decode(in.p, in.n, text, sizeof(text)) == 0) {
		for (i = 0; text[i]; i++)
			if (i >= sizeof(text) - 1 || !isprint((unsigned char)text[i]))
				abort();
	}
	return 0;
}
