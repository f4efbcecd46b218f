/* SPDX-License-Identifier: MIT */
/*
 * bench_wire.c: encoding and checking of the benchmark's messages (see
 * bench_wire.h). Every field is written big-endian at a fixed offset.
 */
#include "bench_wire.h"
#include "rex_wire.h"

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static const char *const op_names[BENCH_OP_COUNT] = {"send", "write", "write_imm",
                                                     "read", "fadd",  "cas"};

const char *bench_op_name(unsigned op)
{
	return op < BENCH_OP_COUNT ? op_names[op] : "?";
}

const char *bench_mode_name(unsigned mode)
{
	return mode == BENCH_MODE_BW     ? "bw"
	       : mode == BENCH_MODE_LAT  ? "lat"
	       : mode == BENCH_MODE_LOAD ? "load"
	                                 : "?";
}

int bench_op_parse(const char *name)
{
	int i;

	for (i = 0; i < BENCH_OP_COUNT; i++)
		if (strcmp(name, op_names[i]) == 0)
			return i;
	return -1;
}

int bench_ops_parse(const char *list)
{
	char word[16];
	unsigned mask = 0;
	const char *p = list, *end;
	size_t n;
	int op;

	if (strcmp(list, "all") == 0)
		return BENCH_OPS_ALL;
	for (;;) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (n == 0 || n >= sizeof(word))
			return -1;
		memcpy(word, p, n);
		word[n] = '\0';
		op = bench_op_parse(word);
		if (op < 0)
			return -1;
		mask |= 1u << op;
		if (!end)
			return (int)mask;
		p = end + 1;
	}
}

const char *bench_ops_format(unsigned mask, char *buf, size_t len)
{
	size_t used = 0;
	int i;

	if (len)
		buf[0] = '\0';
	for (i = 0; i < BENCH_OP_COUNT; i++)
		if (mask & (1u << i) && used < len)
			used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? "," : "",
			                         op_names[i]);
	return buf;
}

/* Magic and version, common to the three messages. */
static int check_head(const uint8_t *in, size_t len, size_t need, const char *what, char *why,
                      size_t why_len)
{
	if (len < need) {
		snprintf(why, why_len, "%s of %zu bytes, expected %zu", what, len, need);
		return -EPROTO;
	}
	if (rex_get_be32(in) != BENCH_MAGIC) {
		snprintf(why, why_len,
		         "%s with magic 0x%08" PRIx32 ", expected 0x%08x (not a "
		         "06-mr-pool peer)",
		         what, rex_get_be32(in), BENCH_MAGIC);
		return -EPROTO;
	}
	if (rex_get_be16(in + 4) != BENCH_VERSION) {
		snprintf(why, why_len, "%s of version %u, expected %u", what,
		         (unsigned)rex_get_be16(in + 4), (unsigned)BENCH_VERSION);
		return -EPROTO;
	}
	return 0;
}

/* [hello] */
void bench_hello_encode(const struct bench_hello *h, uint8_t *out)
{
	memset(out, 0, BENCH_HELLO_LEN);
	rex_put_be32(out, BENCH_MAGIC);
	rex_put_be16(out + 4, BENCH_VERSION);
	out[6] = h->op;
	out[7] = h->mode;
	rex_put_be32(out + 8, h->max_size);
	rex_put_be32(out + 12, h->depth);
	rex_put_be16(out + 16, h->qp_index);
	rex_put_be16(out + 18, h->qps);
	rex_put_be64(out + 20, h->addr);
	rex_put_be32(out + 28, h->rkey);
}

int bench_hello_decode(const uint8_t *in, size_t len, struct bench_hello *h, char *why,
                       size_t why_len)
{
	int ret = check_head(in, len, BENCH_HELLO_LEN, "hello", why, why_len);

	if (ret)
		return ret;
	h->op = in[6];
	h->mode = in[7];
	h->max_size = rex_get_be32(in + 8);
	h->depth = rex_get_be32(in + 12);
	h->qp_index = rex_get_be16(in + 16);
	h->qps = rex_get_be16(in + 18);
	h->addr = rex_get_be64(in + 20);
	h->rkey = rex_get_be32(in + 28);
	if (h->op >= BENCH_OP_COUNT)
		snprintf(why, why_len, "hello: unknown op %u", h->op);
	else if (h->mode > BENCH_MODE_LAT)
		snprintf(why, why_len, "hello: unknown mode %u", h->mode);
	else if (bench_op_atomic(h->op) && h->max_size != BENCH_ATOMIC_SIZE)
		snprintf(why, why_len, "hello: an atomic's size is %u, not %" PRIu32,
		         BENCH_ATOMIC_SIZE, h->max_size);
	else if (h->max_size < 1 || h->max_size > BENCH_MAX_SIZE)
		snprintf(why, why_len, "hello: size %" PRIu32 " outside 1..%u", h->max_size,
		         BENCH_MAX_SIZE);
	else if (h->depth < 1 || h->depth > BENCH_MAX_DEPTH)
		snprintf(why, why_len, "hello: depth %" PRIu32 " outside 1..%u", h->depth,
		         BENCH_MAX_DEPTH);
	else if (h->qps < 1 || h->qps > BENCH_MAX_QPS || h->qp_index >= h->qps)
		snprintf(why, why_len, "hello: connection %u of %u", h->qp_index, h->qps);
	else
		return 0;
	return -EPROTO;
}
/* [hello] */

void bench_accept_encode(const struct bench_accept *a, uint8_t *out)
{
	memset(out, 0, BENCH_ACCEPT_LEN);
	rex_put_be32(out, BENCH_MAGIC);
	rex_put_be16(out + 4, BENCH_VERSION);
	rex_put_be64(out + 8, a->addr);
	rex_put_be32(out + 16, a->rkey);
	rex_put_be32(out + 20, a->length);
	rex_put_be32(out + 24, a->recv_depth);
	rex_put_be32(out + 28, a->lease_ms);
	rex_put_be32(out + 32, a->grant);
}

int bench_accept_decode(const uint8_t *in, size_t len, struct bench_accept *a, char *why,
                        size_t why_len)
{
	int ret = check_head(in, len, BENCH_ACCEPT_LEN, "accept", why, why_len);

	if (ret)
		return ret;
	a->addr = rex_get_be64(in + 8);
	a->rkey = rex_get_be32(in + 16);
	a->length = rex_get_be32(in + 20);
	a->recv_depth = rex_get_be32(in + 24);
	a->lease_ms = rex_get_be32(in + 28);
	a->grant = rex_get_be32(in + 32);
	if (a->grant > BENCH_GRANT_NONE)
		snprintf(why, why_len, "accept: grant %" PRIu32 " unknown", a->grant);
	else if (a->length < 1 || a->length > BENCH_MAX_SIZE * 2u)
		snprintf(why, why_len, "accept: buffer of %" PRIu32 " bytes", a->length);
	else if (a->recv_depth < 1 || a->recv_depth > 4 * BENCH_MAX_DEPTH)
		snprintf(why, why_len, "accept: %" PRIu32 " receives", a->recv_depth);
	else if (a->addr + a->length < a->addr)
		snprintf(why, why_len, "accept: buffer wraps around the address space");
	else
		return 0;
	return -EPROTO;
}

void bench_reject_encode(const struct bench_reject *r, uint8_t *out)
{
	memset(out, 0, BENCH_REJECT_LEN);
	rex_put_be32(out, BENCH_MAGIC);
	rex_put_be16(out + 4, BENCH_VERSION);
	rex_put_be16(out + 6, r->reason);
	rex_put_be64(out + 8, r->value);
	rex_put_be64(out + 16, r->limit);
}

int bench_reject_decode(const uint8_t *in, size_t len, struct bench_reject *r)
{
	char why[BENCH_WHY_SIZE];

	if (check_head(in, len, BENCH_REJECT_LEN, "reject", why, sizeof(why)))
		return -EPROTO;
	r->reason = rex_get_be16(in + 6);
	r->value = rex_get_be64(in + 8);
	r->limit = rex_get_be64(in + 16);
	return r->reason >= BENCH_REJECT_HELLO && r->reason <= BENCH_REJECT_SRQ_SIZE ? 0 : -EPROTO;
}

const char *bench_reject_format(const struct bench_reject *r, char *buf, size_t len)
{
	char ops[48];

	switch (r->reason) {
	case BENCH_REJECT_HELLO:
		snprintf(buf, len, "hello: the server could not decode it (version %u?)",
		         (unsigned)BENCH_VERSION);
		break;
	case BENCH_REJECT_OP:
		snprintf(buf, len, "op %s is not served (the server's -o %s)",
		         bench_op_name((unsigned)r->value),
		         bench_ops_format((unsigned)r->limit, ops, sizeof(ops)));
		break;
	case BENCH_REJECT_SIZE:
		snprintf(buf, len, "size %" PRIu64 " is above the server's -s %" PRIu64, r->value,
		         r->limit);
		break;
	case BENCH_REJECT_DEPTH:
		snprintf(buf, len,
		         "depth %" PRIu64 " is above the %" PRIu64 " the server's device allows",
		         r->value, r->limit);
		break;
	case BENCH_REJECT_BUSY:
		snprintf(buf, len, "busy: all %" PRIu64 " buffers of the server's pool are in use",
		         r->limit);
		break;
	case BENCH_REJECT_SRQ_SIZE:
		snprintf(buf, len,
		         "a SEND of %" PRIu64 " bytes is above the %" PRIu64
		         " of the server's shared receive queue (its -S)",
		         r->value, r->limit);
		break;
	default:
		snprintf(buf, len, "reason %u", r->reason);
	}
	return buf;
}

/* [pattern] */
uint32_t bench_seed(uint32_t qp_index, uint32_t size, int from_server)
{
	return qp_index * 2654435761u ^ size * 40503u ^ (from_server ? 0x5a5a5a5au : 0x1234567u);
}

static inline uint8_t pattern_byte(size_t i, uint32_t seed)
{
	return (uint8_t)(i + (i >> 8) * 7 + (i >> 16) * 13 + seed + (seed >> 8));
}

void bench_pattern_fill(uint8_t *buf, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		buf[i] = pattern_byte(i, seed);
}

size_t bench_pattern_check(const uint8_t *buf, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (buf[i] != pattern_byte(i, seed))
			return i;
	return len;
}
/* [pattern] */
