/* SPDX-License-Identifier: MIT */
/*
 * What the fuzz targets share: a reader over the fuzzer's bytes (the first
 * picks a decoder, the next ones its parameters, the rest is the peer's
 * message), and the checks every decoder owes its caller.
 */
#ifndef REX_FUZZ_H
#define REX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

/* The next \p len bytes as a number (little-endian), 0 past the end. */
static inline uint64_t fuzz_take(struct fuzz_in *in, size_t len)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < len && in->n > 0; i++, in->p++, in->n--)
		v |= (uint64_t)in->p[0] << (8 * i);
	return v;
}

/* A failed decode wrote a reason that ends within \p size bytes: a caller
 * prints it with %s. Anything else is a bug worth a crash. */
static inline void fuzz_check_why(const char *why, size_t size)
{
	if (memchr(why, '\0', size) == NULL)
		abort();
}

#endif /* REX_FUZZ_H */
