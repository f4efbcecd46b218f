/* SPDX-License-Identifier: MIT */
/*
 * wire.c: encoding and checking the greeting and the refusal of chapter 01
 * (see wire.h).
 *
 * Everything a peer sends is untrusted input: greeting_decode() checks the
 * length, the magic, the version, the flags and every byte of the text
 * before a caller gets to use any of it; refusal_decode() checks every byte.
 */
#include "wire.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Byte offsets of the fields in the wire format. */
#define OFF_MAGIC 0
#define OFF_VERSION 4
#define OFF_FLAGS 6
#define OFF_TEXT 8

_Static_assert(OFF_TEXT + GREETING_TEXT_SIZE == GREETING_WIRE_SIZE,
	       "the fields must fill the wire format exactly");

/* Printable ASCII: space to tilde. Anything else could garble a terminal. */
static int is_printable(char ch)
{
	return ch >= 0x20 && ch <= 0x7e;
}

int greeting_init(struct greeting *g, const char *text)
{
	size_t len = strnlen(text, GREETING_TEXT_MAX);
	size_t i;

	for (i = 0; i < len; i++)
		if (!is_printable(text[i]))
			return -EINVAL;
	memset(g, 0, sizeof(*g));
	g->magic = GREETING_MAGIC;
	g->version = GREETING_VERSION;
	g->flags = 0;
	memcpy(g->text, text, len); /* the rest stays NUL: the padding */
	return 0;
}

/* [greeting-encode] */
void greeting_encode(const struct greeting *g, uint8_t buf[GREETING_WIRE_SIZE])
{
	uint32_t magic = htobe32(g->magic);
	uint16_t version = htobe16(g->version);
	uint16_t flags = htobe16(g->flags);

	/* memcpy, not a cast: buf need not be aligned for a uint32_t. */
	memcpy(buf + OFF_MAGIC, &magic, sizeof(magic));
	memcpy(buf + OFF_VERSION, &version, sizeof(version));
	memcpy(buf + OFF_FLAGS, &flags, sizeof(flags));
	memcpy(buf + OFF_TEXT, g->text, GREETING_TEXT_SIZE);
}
/* [greeting-encode] */

int greeting_decode(const void *buf, size_t len, struct greeting *out, char *why,
		    size_t why_size)
{
	const uint8_t *bytes = buf;
	struct greeting g;
	size_t text_len;
	size_t i;

	if (len < GREETING_WIRE_SIZE) {
		snprintf(why, why_size, "too short: %zu bytes", len);
		return -EMSGSIZE;
	}
	memcpy(&g.magic, bytes + OFF_MAGIC, sizeof(g.magic));
	memcpy(&g.version, bytes + OFF_VERSION, sizeof(g.version));
	memcpy(&g.flags, bytes + OFF_FLAGS, sizeof(g.flags));
	memcpy(g.text, bytes + OFF_TEXT, GREETING_TEXT_SIZE);
	g.magic = be32toh(g.magic);
	g.version = be16toh(g.version);
	g.flags = be16toh(g.flags);

	/* [greeting-decode] */
	/* The magic first: if it is wrong, the other fields mean nothing. */
	if (g.magic != GREETING_MAGIC) {
		snprintf(why, why_size, "bad magic 0x%08x", (unsigned)g.magic);
		return -EBADMSG;
	}
	if (g.version != GREETING_VERSION) {
		snprintf(why, why_size, "version %u, want %u", (unsigned)g.version,
			 (unsigned)GREETING_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (g.flags & ~GREETING_FLAGS_KNOWN) {
		snprintf(why, why_size, "unknown flags 0x%04x", (unsigned)g.flags);
		return -EPROTONOSUPPORT;
	}
	/* The text must end inside its field: never trust a peer's NUL. */
	text_len = strnlen(g.text, GREETING_TEXT_SIZE);
	if (text_len == GREETING_TEXT_SIZE) {
		snprintf(why, why_size, "text not terminated");
		return -EBADMSG;
	}
	for (i = 0; i < text_len; i++) {
		if (!is_printable(g.text[i])) {
			snprintf(why, why_size, "text not printable");
			return -EBADMSG;
		}
	}
	/* Whatever followed the NUL is not ours to keep. */
	memset(g.text + text_len, 0, GREETING_TEXT_SIZE - text_len);
	*out = g;
	return 0;
	/* [greeting-decode] */
}

size_t refusal_encode(const char *reason, uint8_t *buf, size_t size)
{
	size_t len;
	size_t i;

	if (size == 0)
		return 0;
	if (size > REFUSAL_SIZE_MAX)
		size = REFUSAL_SIZE_MAX;
	len = strnlen(reason, size - 1);
	for (i = 0; i < len; i++)
		buf[i] = is_printable(reason[i]) ? (uint8_t)reason[i] : '?';
	buf[len] = '\0';
	return len + 1;
}

int refusal_decode(const void *buf, size_t len, char *text, size_t text_size)
{
	const char *chars = buf;
	size_t text_len;
	size_t i;

	if (len > REFUSAL_SIZE_MAX)
		len = REFUSAL_SIZE_MAX; /* the rest is padding, or not ours */
	text_len = strnlen(chars, len);
	if (text_len == 0)
		return -ENODATA;
	if (text_len == len)
		return -EBADMSG; /* no NUL where one must be */
	for (i = 0; i < text_len; i++)
		if (!is_printable(chars[i]))
			return -EBADMSG;
	if (text_size == 0)
		return 0;
	if (text_len >= text_size)
		text_len = text_size - 1;
	memcpy(text, chars, text_len);
	text[text_len] = '\0';
	return 0;
}
