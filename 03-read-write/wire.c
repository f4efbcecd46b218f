/* SPDX-License-Identifier: MIT */
/*
 * wire.c: encoding and checking the messages of chapter 03, and the data
 * pattern (see wire.h).
 *
 * Everything a peer sends is untrusted input. The descriptor above all: its
 * address, length and key tell the client where to write in another
 * machine's memory, so a wrong one is not a crash but silent damage there.
 */
#include "wire.h"
#include "rex_wire.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Every message starts with the same 8-byte header. */
#define OFF_MAGIC    0
#define OFF_VERSION  4
#define OFF_RESERVED 6 /* the done message's type */
#define HEADER_SIZE  8

/* Offsets of the other fields. */
#define OFF_REQUEST_LENGTH    8
#define OFF_DESCRIPTOR_ADDR   8
#define OFF_DESCRIPTOR_LENGTH 16
#define OFF_DESCRIPTOR_RKEY   24
#define OFF_DONE_SEED         8
#define OFF_DONE_LENGTH       12
#define OFF_REFUSAL_TEXT      8

_Static_assert(OFF_REQUEST_LENGTH + 8 == RW_REQUEST_SIZE, "request fields fill it");
_Static_assert(OFF_DESCRIPTOR_RKEY + 4 == RW_DESCRIPTOR_SIZE, "descriptor fields fill it");
_Static_assert(OFF_DONE_LENGTH + 8 == RW_DONE_SIZE, "done fields fill it");
_Static_assert(OFF_REFUSAL_TEXT + RW_REFUSAL_TEXT_SIZE == RW_REFUSAL_SIZE,
               "refusal fields fill it");

static void put_header(uint8_t *buf, uint32_t magic, uint16_t third)
{
	rex_put_be32(buf + OFF_MAGIC, magic);
	rex_put_be16(buf + OFF_VERSION, RW_VERSION);
	rex_put_be16(buf + OFF_RESERVED, third);
}

/*
 * The checks every message shares, in the order that gives the most useful
 * reason: size first (nothing else can be read), then the magic (if it is
 * wrong, the other fields mean nothing), then the version.
 */
static int check_header(const uint8_t *buf, size_t len, size_t size, uint32_t magic, char *why,
                        size_t why_size)
{
	uint32_t got_magic;
	uint16_t version;

	if (len < size) {
		snprintf(why, why_size, "too short: %zu bytes", len);
		return -EMSGSIZE;
	}
	got_magic = rex_get_be32(buf + OFF_MAGIC);
	if (got_magic != magic) {
		snprintf(why, why_size, "bad magic 0x%08x", (unsigned)got_magic);
		return -EBADMSG;
	}
	version = rex_get_be16(buf + OFF_VERSION);
	if (version != RW_VERSION) {
		snprintf(why, why_size, "version %u, want %u", (unsigned)version,
		         (unsigned)RW_VERSION);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

/* A field reserved for later versions must be 0 now, or later versions
 * could not give it a meaning. */
static int check_reserved(const uint8_t *buf, char *why, size_t why_size)
{
	uint16_t reserved = rex_get_be16(buf + OFF_RESERVED);

	if (reserved) {
		snprintf(why, why_size, "reserved field 0x%04x, want 0", (unsigned)reserved);
		return -EBADMSG;
	}
	return 0;
}

void rw_request_encode(const struct rw_request *r, uint8_t buf[RW_REQUEST_SIZE])
{
	put_header(buf, RW_REQUEST_MAGIC, 0);
	rex_put_be64(buf + OFF_REQUEST_LENGTH, r->length);
}

int rw_request_decode(const void *buf, size_t len, uint64_t have, struct rw_request *out, char *why,
                      size_t why_size)
{
	const uint8_t *bytes = buf;
	uint64_t length;
	int ret;

	ret = check_header(bytes, len, RW_REQUEST_SIZE, RW_REQUEST_MAGIC, why, why_size);
	if (ret)
		return ret;
	ret = check_reserved(bytes, why, why_size);
	if (ret)
		return ret;
	length = rex_get_be64(bytes + OFF_REQUEST_LENGTH);
	if (length == 0) {
		snprintf(why, why_size, "zero length");
		return -ERANGE;
	}
	if (length > have) {
		snprintf(why, why_size, "asks for %llu bytes, this server has %llu",
		         (unsigned long long)length, (unsigned long long)have);
		return -ERANGE;
	}
	out->length = length;
	return 0;
}

void rw_descriptor_encode(const struct rw_descriptor *d, uint8_t buf[RW_DESCRIPTOR_SIZE])
{
	put_header(buf, RW_DESCRIPTOR_MAGIC, 0);
	rex_put_be64(buf + OFF_DESCRIPTOR_ADDR, d->addr);
	rex_put_be64(buf + OFF_DESCRIPTOR_LENGTH, d->length);
	rex_put_be32(buf + OFF_DESCRIPTOR_RKEY, d->rkey);
}

int rw_descriptor_decode(const void *buf, size_t len, uint64_t asked, struct rw_descriptor *out,
                         char *why, size_t why_size)
{
	const uint8_t *bytes = buf;
	struct rw_descriptor d;
	int ret;

	ret = check_header(bytes, len, RW_DESCRIPTOR_SIZE, RW_DESCRIPTOR_MAGIC, why, why_size);
	if (ret)
		return ret;
	ret = check_reserved(bytes, why, why_size);
	if (ret)
		return ret;
	/* [descriptor-checks] */
	d.addr = rex_get_be64(bytes + OFF_DESCRIPTOR_ADDR);
	d.length = rex_get_be64(bytes + OFF_DESCRIPTOR_LENGTH);
	d.rkey = rex_get_be32(bytes + OFF_DESCRIPTOR_RKEY);

	if (d.length == 0) {
		snprintf(why, why_size, "zero length");
		return -ERANGE;
	}
	if (d.length > asked) {
		snprintf(why, why_size, "length %llu beyond the %llu bytes asked for",
		         (unsigned long long)d.length, (unsigned long long)asked);
		return -ERANGE;
	}
	if (d.length < asked) {
		snprintf(why, why_size, "length %llu short of the %llu bytes asked for",
		         (unsigned long long)d.length, (unsigned long long)asked);
		return -ERANGE;
	}
	/* addr + length must not wrap around: written without computing the
	 * sum, which is exactly what would overflow. */
	if (d.length > UINT64_MAX - d.addr) {
		snprintf(why, why_size, "address 0x%llx + length %llu overflows",
		         (unsigned long long)d.addr, (unsigned long long)d.length);
		return -EOVERFLOW;
	}
	/* The rkey cannot be checked here: any 32-bit value may be a key. A
	 * wrong one makes the server's device refuse our operations
	 * (IBV_WC_REM_ACCESS_ERR), and no memory is touched. */
	/* [descriptor-checks] */
	*out = d;
	return 0;
}

void rw_done_encode(const struct rw_done *d, uint8_t buf[RW_DONE_SIZE])
{
	put_header(buf, RW_DONE_MAGIC, RW_DONE_TYPE_DONE);
	rex_put_be32(buf + OFF_DONE_SEED, d->seed);
	rex_put_be64(buf + OFF_DONE_LENGTH, d->length);
}

int rw_done_decode(const void *buf, size_t len, uint64_t granted, struct rw_done *out, char *why,
                   size_t why_size)
{
	const uint8_t *bytes = buf;
	struct rw_done d;
	uint16_t type;
	int ret;

	ret = check_header(bytes, len, RW_DONE_SIZE, RW_DONE_MAGIC, why, why_size);
	if (ret)
		return ret;
	type = rex_get_be16(bytes + OFF_RESERVED);
	if (type != RW_DONE_TYPE_DONE) {
		snprintf(why, why_size, "type %u, want %u", (unsigned)type,
		         (unsigned)RW_DONE_TYPE_DONE);
		return -EPROTO;
	}
	d.seed = rex_get_be32(bytes + OFF_DONE_SEED);
	d.length = rex_get_be64(bytes + OFF_DONE_LENGTH);
	/* The server checks exactly the bytes it granted: a length beyond them
	 * would make it read past its buffer, a shorter one check less. */
	if (d.length != granted) {
		snprintf(why, why_size, "length %llu, but %llu bytes were granted",
		         (unsigned long long)d.length, (unsigned long long)granted);
		return -ERANGE;
	}
	*out = d;
	return 0;
}

/* Printable ASCII: space to tilde. Anything else could garble a terminal. */
static int is_printable(char ch)
{
	return ch >= 0x20 && ch <= 0x7e;
}

void rw_refusal_init(struct rw_refusal *r, const char *text)
{
	size_t len = strnlen(text, RW_REFUSAL_TEXT_SIZE - 1);
	size_t i;

	memset(r, 0, sizeof(*r));
	for (i = 0; i < len; i++)
		r->text[i] = is_printable(text[i]) ? text[i] : '?';
}

void rw_refusal_encode(const struct rw_refusal *r, uint8_t buf[RW_REFUSAL_SIZE])
{
	put_header(buf, RW_REFUSAL_MAGIC, 0);
	memcpy(buf + OFF_REFUSAL_TEXT, r->text, RW_REFUSAL_TEXT_SIZE);
}

int rw_refusal_decode(const void *buf, size_t len, struct rw_refusal *out, char *why,
                      size_t why_size)
{
	const uint8_t *bytes = buf;
	struct rw_refusal r;
	size_t text_len;
	size_t i;
	int ret;

	ret = check_header(bytes, len, RW_REFUSAL_SIZE, RW_REFUSAL_MAGIC, why, why_size);
	if (ret)
		return ret;
	ret = check_reserved(bytes, why, why_size);
	if (ret)
		return ret;
	memcpy(r.text, bytes + OFF_REFUSAL_TEXT, RW_REFUSAL_TEXT_SIZE);
	/* The text must end inside its field: never trust a peer's NUL. */
	text_len = strnlen(r.text, RW_REFUSAL_TEXT_SIZE);
	if (text_len == RW_REFUSAL_TEXT_SIZE) {
		snprintf(why, why_size, "text not terminated");
		return -EBADMSG;
	}
	for (i = 0; i < text_len; i++) {
		if (!is_printable(r.text[i])) {
			snprintf(why, why_size, "text not printable");
			return -EBADMSG;
		}
	}
	memset(r.text + text_len, 0, RW_REFUSAL_TEXT_SIZE - text_len);
	*out = r;
	return 0;
}

/*
 * Word \p index of the pattern for \p seed: a 64-bit integer hash
 * (multiply and xor-shift steps; the constants are odd numbers with well
 * mixed bits, as in the finaliser of the splitmix64 generator). Cheap, and
 * every input bit changes about half of the output bits.
 */
static uint64_t pattern_word(uint32_t seed, uint64_t index)
{
	/* index + 1: with seed 0, word 0 would otherwise hash to 0, and an
	 * untouched (zeroed) buffer would start with a correct word. */
	uint64_t x = ((uint64_t)seed << 32 | seed) ^ ((index + 1) * 0x9e3779b97f4a7c15ull);

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	x ^= x >> 31;
	return x;
}

/* Byte i (0..7) of a word is bits 8i..8i+7: the same on every machine. */
uint8_t rw_pattern_byte(uint32_t seed, uint64_t offset)
{
	return (uint8_t)(pattern_word(seed, offset / 8) >> (8 * (offset % 8)));
}

void rw_pattern_fill(void *buf, uint64_t len, uint32_t seed)
{
	uint8_t *bytes = buf;
	uint64_t words = len / 8;
	uint64_t i;

	for (i = 0; i < words; i++) {
		uint64_t w = htole64(pattern_word(seed, i));

		memcpy(bytes + 8 * i, &w, sizeof(w));
	}
	for (i = 8 * words; i < len; i++)
		bytes[i] = rw_pattern_byte(seed, i);
}

int rw_pattern_check(const void *buf, uint64_t len, uint32_t seed, uint64_t *bad_offset)
{
	const uint8_t *bytes = buf;
	uint64_t words = len / 8;
	uint64_t i;

	/* A word at a time; on a mismatch, find the first bad byte in it. */
	for (i = 0; i < words; i++) {
		uint64_t w = htole64(pattern_word(seed, i));

		if (memcmp(bytes + 8 * i, &w, sizeof(w)) != 0)
			break;
	}
	for (i *= 8; i < len; i++) {
		if (bytes[i] != rw_pattern_byte(seed, i)) {
			*bad_offset = i;
			return -EBADMSG;
		}
	}
	return 0;
}
