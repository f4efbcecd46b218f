/* SPDX-License-Identifier: MIT */
/*
 * hostile.h: the command line the hostile peers of chapter 04 share
 * (tamper-client.c, tamper-server.c):
 *
 *     PROGRAM -a ADDR [-p PORT] [-s SIZE] [-k SLOTS] --tamper WHAT
 *
 * -s and -k are the ring's slot size and slot count (the server's), or the
 * message size (the client's). Exit 2 on a bad command line, as everywhere.
 */
#ifndef IMM_HOSTILE_H
#define IMM_HOSTILE_H

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_options.h"
#include "wire.h"

struct hostile_options {
	const char *addr;
	uint16_t port;
	uint64_t size;  /* -s: bytes */
	uint32_t slots; /* -k */
	int tamper;     /* index into the program's names */
};

static inline void hostile_usage(FILE *stream, const char *program, const char *const *names,
                                 size_t n)
{
	size_t i;

	fprintf(stream, "usage: %s -a ADDR [-p PORT] [-s SIZE] [-k SLOTS] --tamper ", program);
	for (i = 0; i < n; i++)
		fprintf(stream, "%s%s", i ? "|" : "", names[i]);
	fputc('\n', stream);
}

/* 0 with \p o filled in; -EINVAL after printing why and the usage (exit
 * 2); 1 after printing the usage for -h (exit 0). */
static inline int hostile_parse(int argc, char **argv, const char *program,
                                const char *const *names, size_t n, struct hostile_options *o)
{
	static const struct option longopts[] = {
	    {"tamper", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	bool have_tamper = false;
	uint64_t value;
	size_t i;
	int opt;

	o->port = REX_DEFAULT_PORT;
	o->size = 64;
	o->slots = 16;
	while ((opt = getopt_long(argc, argv, "a:p:s:k:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (rex_parse_uint(optarg, 1, 65535, &value))
				goto bad_value;
			o->port = (uint16_t)value;
			break;
		case 's':
			if (rex_parse_size(optarg, 1, IM_MAX_SLOT_SIZE, &o->size))
				goto bad_value;
			break;
		case 'k':
			if (rex_parse_uint(optarg, 1, IM_MAX_SLOTS, &value))
				goto bad_value;
			o->slots = (uint32_t)value;
			break;
		case 't':
			for (i = 0; i < n; i++)
				if (strcmp(optarg, names[i]) == 0)
					break;
			if (i == n) {
				fprintf(stderr, "%s: --tamper %s: unknown\n", program, optarg);
				goto bad;
			}
			o->tamper = (int)i;
			have_tamper = true;
			break;
		case 'h':
			hostile_usage(stdout, program, names, n);
			return 1;
		default:
			goto bad;
		}
	}
	if (optind != argc || !have_tamper || !o->addr) {
		fprintf(stderr, "%s: -a and --tamper are required; no positional arguments\n",
		        program);
		goto bad;
	}
	return 0;

bad_value:
	fprintf(stderr, "%s: -%c %s: out of range or not a number\n", program, opt, optarg);
bad:
	hostile_usage(stderr, program, names, n);
	return -EINVAL;
}

#endif /* IMM_HOSTILE_H */
