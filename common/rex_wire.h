/* SPDX-License-Identifier: MIT */
/**
 * \file rex_wire.h
 * \brief Big-endian stores and loads for wire formats: what a peer sends and
 *        receives (private data, message headers, buffer descriptors) has a
 *        fixed layout in network byte order, whatever this CPU's order.
 *
 * Each goes through memcpy(): a field inside a wire buffer need not be
 * aligned for its integer type, and a cast would be undefined behaviour
 * there (and a bus error on some CPUs). Compilers turn each into one load or
 * store and, on little-endian machines, one byte swap.
 *
 *     uint8_t buf[16];
 *     rex_put_be32(buf + 0, MAGIC);
 *     rex_put_be64(buf + 4, addr);
 *     ... uint64_t a = rex_get_be64(buf + 4);
 *
 * Header only: copy rex_wire.h alone. Needs <endian.h> (glibc, musl, the BSDs).
 */
#ifndef REX_WIRE_H
#define REX_WIRE_H

#ifndef _DEFAULT_SOURCE
#define _DEFAULT_SOURCE /* htobe16() and friends under -std=c11 */
#endif
#include <endian.h>
#include <stdint.h>
#include <string.h>

/** \brief Store \p v at \p p as 2 bytes, most significant first. */
static inline void rex_put_be16(uint8_t *p, uint16_t v)
{
	v = htobe16(v);
	memcpy(p, &v, sizeof(v));
}

/** \brief Store \p v at \p p as 4 bytes, most significant first. */
static inline void rex_put_be32(uint8_t *p, uint32_t v)
{
	v = htobe32(v);
	memcpy(p, &v, sizeof(v));
}

/** \brief Store \p v at \p p as 8 bytes, most significant first. */
static inline void rex_put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, sizeof(v));
}

/** \brief The 2 bytes at \p p, most significant first. */
static inline uint16_t rex_get_be16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return be16toh(v);
}

/** \brief The 4 bytes at \p p, most significant first. */
static inline uint32_t rex_get_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

/** \brief The 8 bytes at \p p, most significant first. */
static inline uint64_t rex_get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

#endif /* REX_WIRE_H */
