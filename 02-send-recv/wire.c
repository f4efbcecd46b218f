/* SPDX-License-Identifier: MIT */
/*
 * wire.c: encoding and checking chapter 02's hello and message header (see
 * wire.h), and the client's test pattern.
 *
 * Everything a peer sends is untrusted input. The decoders check every field
 * before a caller may use any of it; in particular a header's length must
 * match the bytes that really arrived, so a payload is never read past what
 * the device wrote.
 */
#include "wire.h"
#include "rex_wire.h"

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Byte offsets of the hello's fields. */
#define HELLO_OFF_MAGIC       0
#define HELLO_OFF_VERSION     4
#define HELLO_OFF_RESERVED    6
#define HELLO_OFF_CREDITS     8
#define HELLO_OFF_RESERVED2   10
#define HELLO_OFF_MAX_PAYLOAD 12

/* Byte offsets of the header's fields. */
#define HDR_OFF_TYPE    0
#define HDR_OFF_FLAGS   1
#define HDR_OFF_CREDITS 2
#define HDR_OFF_LENGTH  4

_Static_assert(HELLO_OFF_MAX_PAYLOAD + 4 == SR_HELLO_WIRE_SIZE,
               "the hello's fields must fill its wire format exactly");
_Static_assert(HDR_OFF_LENGTH + 4 == SR_HEADER_SIZE,
               "the header's fields must fill its wire format exactly");

void sr_hello_init(struct sr_hello *h, uint16_t credits, uint32_t max_payload)
{
	memset(h, 0, sizeof(*h));
	h->magic = SR_HELLO_MAGIC;
	h->version = SR_VERSION;
	h->credits = credits;
	h->max_payload = max_payload;
}

void sr_hello_encode(const struct sr_hello *h, uint8_t buf[SR_HELLO_WIRE_SIZE])
{
	rex_put_be32(buf + HELLO_OFF_MAGIC, h->magic);
	rex_put_be16(buf + HELLO_OFF_VERSION, h->version);
	rex_put_be16(buf + HELLO_OFF_RESERVED, 0);
	rex_put_be16(buf + HELLO_OFF_CREDITS, h->credits);
	rex_put_be16(buf + HELLO_OFF_RESERVED2, 0);
	rex_put_be32(buf + HELLO_OFF_MAX_PAYLOAD, h->max_payload);
}

int sr_hello_decode(const void *buf, size_t len, struct sr_hello *out, char *why, size_t why_size)
{
	const uint8_t *bytes = buf;
	struct sr_hello h;
	uint16_t reserved;

	if (len < SR_HELLO_WIRE_SIZE) {
		snprintf(why, why_size, "too short: %zu bytes", len);
		return -EMSGSIZE;
	}
	h.magic = rex_get_be32(bytes + HELLO_OFF_MAGIC);
	h.version = rex_get_be16(bytes + HELLO_OFF_VERSION);
	h.credits = rex_get_be16(bytes + HELLO_OFF_CREDITS);
	h.max_payload = rex_get_be32(bytes + HELLO_OFF_MAX_PAYLOAD);

	/* The magic first: if it is wrong, the other fields mean nothing. */
	if (h.magic != SR_HELLO_MAGIC) {
		snprintf(why, why_size, "bad magic 0x%08x", (unsigned)h.magic);
		return -EBADMSG;
	}
	if (h.version != SR_VERSION) {
		snprintf(why, why_size, "version %u, want %u", (unsigned)h.version,
		         (unsigned)SR_VERSION);
		return -EPROTONOSUPPORT;
	}
	/* Reserved fields are zero in version 1; a later version may use them,
	 * and must then say so with a new version number. */
	reserved = rex_get_be16(bytes + HELLO_OFF_RESERVED) | rex_get_be16(bytes + HELLO_OFF_RESERVED2);
	if (reserved) {
		snprintf(why, why_size, "reserved field 0x%04x not zero", (unsigned)reserved);
		return -EPROTONOSUPPORT;
	}
	/* A peer that posted no receive could never be sent anything. */
	if (h.credits == 0) {
		snprintf(why, why_size, "no credits: the sender posted no receive");
		return -EINVAL;
	}
	/* Each side posts receives of this size: a peer may not make us
	 * register unbounded memory, nor buffers too small for any payload. */
	if (h.max_payload == 0 || h.max_payload > SR_MAX_PAYLOAD) {
		snprintf(why, why_size, "max payload %u, want 1..%u", (unsigned)h.max_payload,
		         (unsigned)SR_MAX_PAYLOAD);
		return -EMSGSIZE;
	}
	*out = h;
	return 0;
}

void sr_header_encode(const struct sr_header *h, uint8_t buf[SR_HEADER_SIZE])
{
	buf[HDR_OFF_TYPE] = h->type;
	buf[HDR_OFF_FLAGS] = h->flags;
	rex_put_be16(buf + HDR_OFF_CREDITS, h->credits);
	rex_put_be32(buf + HDR_OFF_LENGTH, h->length);
}

/* [header-decode] */
int sr_header_decode(const void *buf, size_t received, uint32_t max_payload, struct sr_header *out,
                     char *why, size_t why_size)
{
	const uint8_t *bytes = buf;
	struct sr_header h;

	if (received < SR_HEADER_SIZE) {
		snprintf(why, why_size, "too short: %zu bytes", received);
		return -EMSGSIZE;
	}
	h.type = bytes[HDR_OFF_TYPE];
	h.flags = bytes[HDR_OFF_FLAGS];
	h.credits = rex_get_be16(bytes + HDR_OFF_CREDITS);
	h.length = rex_get_be32(bytes + HDR_OFF_LENGTH);

	if (h.type != SR_DATA && h.type != SR_ECHO && h.type != SR_BYE) {
		snprintf(why, why_size, "unknown type %u", (unsigned)h.type);
		return -EBADMSG;
	}
	if (h.flags) {
		snprintf(why, why_size, "unknown flags 0x%02x", (unsigned)h.flags);
		return -EPROTONOSUPPORT;
	}
	if (h.length > max_payload) {
		snprintf(why, why_size, "length %u exceeds the max payload %u", (unsigned)h.length,
		         (unsigned)max_payload);
		return -EMSGSIZE;
	}
	/* The device says how many bytes arrived; the header only claims. */
	if ((size_t)h.length != received - SR_HEADER_SIZE) {
		snprintf(why, why_size, "length %u, but %zu bytes of payload arrived",
		         (unsigned)h.length, received - SR_HEADER_SIZE);
		return -EBADMSG;
	}
	if (h.type == SR_BYE && h.length != 0) {
		snprintf(why, why_size, "BYE with %u bytes of payload", (unsigned)h.length);
		return -EBADMSG;
	}
	*out = h;
	return 0;
}
/* [header-decode] */

const char *sr_type_name(uint8_t type)
{
	switch (type) {
	case SR_DATA:
		return "DATA";
	case SR_ECHO:
		return "ECHO";
	case SR_BYE:
		return "BYE";
	default:
		return "unknown";
	}
}

uint8_t sr_pattern_byte(uint64_t seq, size_t offset)
{
	/* Mix the message number (a multiplicative hash), so messages 1, 257
	 * and 65537 start differently, then step through the bytes with an odd
	 * stride that shifts at each 256-byte and 1 KiB (MTU) boundary. */
	uint64_t mix = (seq + 1) * 0x9e3779b97f4a7c15u;
	uint8_t base = (uint8_t)(mix >> 56);
	uint8_t stride = (uint8_t)(mix >> 48) | 1;

	return (uint8_t)(base + offset * stride + (offset >> 8) * 13 + (offset >> 10));
}

void sr_pattern_fill(void *buf, size_t len, uint64_t seq)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = sr_pattern_byte(seq, i);
}

bool sr_pattern_check(const void *buf, size_t len, uint64_t seq, size_t *offset)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++) {
		if (p[i] != sr_pattern_byte(seq, i)) {
			*offset = i;
			return false;
		}
	}
	return true;
}
