/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target: 03-read-write's decoders of peer input: the client's
 * request, the server's buffer descriptor (the rkey a client will write
 * through), the done message, a refusal. A descriptor accepted grants
 * exactly what was asked, and its range does not wrap.
 */
#include <ctype.h>

#include "fuzz.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned which = (unsigned)fuzz_take(&in, 1) % 4;
	uint64_t limit = fuzz_take(&in, 8);
	char why[RW_WHY_SIZE];
	struct rw_request req;
	struct rw_descriptor d;
	struct rw_done done;
	struct rw_refusal ref;
	int ret = 0;
	size_t i;

	memset(why, 'x', sizeof(why));
	switch (which) {
	case 0:
		ret = rw_request_decode(in.p, in.n, limit, &req, why, sizeof(why));
		break;
	case 1:
		ret = rw_descriptor_decode(in.p, in.n, limit, &d, why, sizeof(why));
		if (ret == 0 && (d.length != limit || d.addr + d.length < d.addr))
			abort();
		break;
	case 2:
		ret = rw_done_decode(in.p, in.n, limit, &done, why, sizeof(why));
		break;
	default:
		ret = rw_refusal_decode(in.p, in.n, &ref, why, sizeof(why));
		for (i = 0; ret == 0 && ref.text[i]; i++)
			if (i >= sizeof(ref.text) - 1 || !isprint((unsigned char)ref.text[i]))
				abort();
		break;
	}
	if (ret)
		fuzz_check_why(why, sizeof(why));
	return 0;
}
