/* SPDX-License-Identifier: MIT */
/*
 * The shared command line. Every error is one line that names the flag and
 * the problem, followed by the usage, so a typo never gets as far as the CM.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* getopt()'s optind, optarg and optopt under -std=c11 */
#endif
#include "rex_options.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

/* "+" stops at the first non-option (argv is never reordered); ":" makes a
 * missing value come back as ':' so it gets its own message. */
#define OPTSTRING_BASE "+:a:p:vh"
#define OPTSTRING_MAX  sizeof(OPTSTRING_BASE "s:n:w:k:c:q:S:")

/* Room for a size such as "18446744073709551615" or "16G". */
#define SIZE_TEXT_LEN 24

static const char *program_name(const struct rex_options_spec *spec)
{
	return spec->program ? spec->program : "program";
}

/* \p spec with every maximum left at 0 (a zero-initialised spec) read as
 * "no upper limit". */
static struct rex_options_spec with_limits(const struct rex_options_spec *spec)
{
	struct rex_options_spec s = *spec;

	if (s.max_size == 0)
		s.max_size = UINT64_MAX;
	if (s.max_count == 0)
		s.max_count = UINT64_MAX;
	if (s.max_window == 0)
		s.max_window = UINT32_MAX;
	if (s.max_clients == 0)
		s.max_clients = UINT32_MAX;
	if (s.max_slots == 0)
		s.max_slots = UINT32_MAX;
	if (s.max_qps == 0)
		s.max_qps = UINT32_MAX;
	if (s.max_srq == 0)
		s.max_srq = UINT32_MAX;
	return s;
}

static bool enabled(const struct rex_options_spec *spec, enum rex_option_flag flag)
{
	return (spec->flags & flag) != 0;
}

/* Digits only: no sign, no spaces, no hex. Stops at the first non-digit. */
static int parse_digits(const char *text, uint64_t *value, const char **end)
{
	uint64_t v = 0;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned digit = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - digit) / 10)
			return -ERANGE;
		v = v * 10 + digit;
	}
	*value = v;
	*end = p;
	return 0;
}

int rex_parse_uint(const char *text, uint64_t min, uint64_t max, uint64_t *value)
{
	const char *end;
	uint64_t v;
	int ret;

	if (!text || !value)
		return -EINVAL;
	ret = parse_digits(text, &v, &end);
	if (ret == -ERANGE) {
		/* All digits, just too many of them? Then it is a range problem. */
		for (end = text; *end >= '0' && *end <= '9'; end++)
			;
		return *end ? -EINVAL : -ERANGE;
	}
	if (ret)
		return ret;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*value = v;
	return 0;
}

/* log2 of the multiplier for a size suffix, or -1 if \p c is not one. */
static int size_shift(char c)
{
	switch (c) {
	case 'k':
	case 'K':
		return 10;
	case 'm':
	case 'M':
		return 20;
	case 'g':
	case 'G':
		return 30;
	default:
		return -1;
	}
}

/* True if \p text is digits and at most one size suffix: the shape of a size. */
static bool looks_like_size(const char *text)
{
	const char *p = text;

	if (*p < '0' || *p > '9')
		return false;
	while (*p >= '0' && *p <= '9')
		p++;
	if (*p && size_shift(*p) >= 0)
		p++;
	return *p == '\0';
}

int rex_parse_size(const char *text, uint64_t min, uint64_t max, uint64_t *value)
{
	const char *end;
	uint64_t v;
	int shift = 0;
	int ret;

	if (!text || !value)
		return -EINVAL;
	if (!looks_like_size(text))
		return -EINVAL;
	ret = parse_digits(text, &v, &end);
	if (ret)
		return ret; /* only -ERANGE: the shape was checked above */
	if (*end)
		shift = size_shift(*end);
	if (shift > 0) {
		if (v > (UINT64_MAX >> shift))
			return -ERANGE;
		v <<= shift;
	}
	if (v < min || v > max)
		return -ERANGE;
	*value = v;
	return 0;
}

/* "64K" when \p v is an exact multiple of a binary unit, else plain digits. */
static void format_size(char *buf, size_t len, uint64_t v)
{
	static const char units[] = "GMK";
	static const int shifts[] = {30, 20, 10};
	size_t i;

	for (i = 0; v != 0 && i < sizeof(shifts) / sizeof(shifts[0]); i++) {
		uint64_t unit = UINT64_C(1) << shifts[i];

		if (v % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%c", v / unit, units[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, v);
}

/* The long forms every program takes, as the GNU coding standards ask. */
static const struct option long_options[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

void rex_options_version(const char *program, FILE *stream)
{
	fprintf(stream, "%s (RDMA by Example) %s\n", program, REX_VERSION);
}

void rex_options_usage(const struct rex_options_spec *given, FILE *stream)
{
	const struct rex_options_spec limits = with_limits(given);
	const struct rex_options_spec *spec = &limits;
	const struct rex_options *def = &spec->defaults;
	uint16_t port = def->port ? def->port : REX_DEFAULT_PORT;
	char a[SIZE_TEXT_LEN], b[SIZE_TEXT_LEN], c[SIZE_TEXT_LEN];

	fprintf(stream, "usage: %s %s [-p PORT]%s%s%s%s%s%s%s [-v] [-h]\n", program_name(spec),
	        spec->is_server ? "[-a ADDR]" : "-a ADDR",
	        enabled(spec, REX_OPT_SIZE) ? " [-s SIZE]" : "",
	        enabled(spec, REX_OPT_COUNT) ? " [-n COUNT]" : "",
	        enabled(spec, REX_OPT_WINDOW) ? " [-w WINDOW]" : "",
	        enabled(spec, REX_OPT_SLOTS) ? " [-k SLOTS]" : "",
	        enabled(spec, REX_OPT_CLIENTS) ? " [-c CLIENTS]" : "",
	        enabled(spec, REX_OPT_QPS) ? " [-q CONNECTIONS]" : "",
	        enabled(spec, REX_OPT_SRQ) ? " [-S RECVS]" : "");
	if (spec->summary)
		fprintf(stream, "  %s\n", spec->summary);

	if (!spec->is_server)
		fprintf(stream, "  -a ADDR     server address to connect to (required)\n");
	else if (def->addr)
		fprintf(stream, "  -a ADDR     local address to bind (default %s)\n", def->addr);
	else
		fprintf(stream, "  -a ADDR     local address to bind (default: all addresses)\n");
	fprintf(stream, "  -p PORT     port to %s, 1..65535 (default %u)\n",
	        spec->is_server ? "listen on" : "connect to", (unsigned)port);
	if (enabled(spec, REX_OPT_SIZE)) {
		format_size(a, sizeof(a), spec->min_size);
		format_size(b, sizeof(b), spec->max_size);
		format_size(c, sizeof(c), def->size);
		fprintf(stream,
		        "  -s SIZE     size in bytes, K/M/G suffix allowed, %s..%s (default %s)\n",
		        a, b, c);
	}
	if (enabled(spec, REX_OPT_COUNT))
		fprintf(stream,
		        "  -n COUNT    messages or operations, %" PRIu64 "..%" PRIu64
		        " (default %" PRIu64 ")\n",
		        spec->min_count, spec->max_count, def->count);
	if (enabled(spec, REX_OPT_WINDOW))
		fprintf(stream,
		        "  -w WINDOW   messages in flight at once, 1..%" PRIu32 " (default %" PRIu32
		        ")\n",
		        spec->max_window, def->window);
	if (enabled(spec, REX_OPT_SLOTS))
		fprintf(stream,
		        "  -k SLOTS    slots in the ring, %" PRIu32 "..%" PRIu32
		        " (default %" PRIu32 ")\n",
		        spec->min_slots, spec->max_slots, def->slots);
	if (enabled(spec, REX_OPT_CLIENTS))
		fprintf(stream,
		        "  -c CLIENTS  clients to serve, one after another, 0..%" PRIu32
		        ", 0 = no limit (default %" PRIu32 ")\n",
		        spec->max_clients, def->clients);
	if (enabled(spec, REX_OPT_QPS))
		fprintf(stream,
		        "  -q CONNECTIONS  connections (queue pairs) at once, 1..%" PRIu32
		        " (default %" PRIu32 ")\n",
		        spec->max_qps, def->qps);
	if (enabled(spec, REX_OPT_SRQ))
		fprintf(stream,
		        "  -S RECVS    one shared receive queue of RECVS receives for every "
		        "connection,\n"
		        "              0..%" PRIu32
		        ", 0 = each connection its own (default %" PRIu32 ")\n",
		        spec->max_srq, def->srq);
	fprintf(stream, "  -v          verbose: debug lines to stderr\n");
	fprintf(stream, "  -h, --help  print this help and exit\n");
	fprintf(stream, "  --version   print the version and exit\n");
	fprintf(stream, "exit status: %d ok, %d failure, %d bad command line, %d no usable RDMA device\n",
	        REX_EXIT_OK, REX_EXIT_FAILURE, REX_EXIT_USAGE, REX_EXIT_NO_DEVICE);
}

/* Print "program: <message>" as one line, then the usage; always REX_OPTIONS_BAD. */
__attribute__((format(printf, 3, 4))) static enum rex_options_result
complain(const struct rex_options_spec *spec, FILE *err_stream, const char *fmt, ...)
{
	va_list ap;

	fprintf(err_stream, "%s: ", program_name(spec));
	va_start(ap, fmt);
	vfprintf(err_stream, fmt, ap);
	va_end(ap);
	fputc('\n', err_stream);
	rex_options_usage(spec, err_stream);
	return REX_OPTIONS_BAD;
}

/* The value as typed, quoted when it would otherwise be invisible. */
static const char *shown(const char *value, char *buf, size_t len)
{
	if (value[0] != '\0' && !strpbrk(value, " \t"))
		return value;
	snprintf(buf, len, "'%s'", value);
	return buf;
}

/* "-F VALUE: out of range (RANGE)" for -ERANGE, else "-F VALUE: not WHAT". */
static enum rex_options_result bad_value(const struct rex_options_spec *spec, FILE *err_stream,
                                         int flag, const char *value, int ret, const char *what,
                                         const char *range)
{
	char quoted[64];
	const char *v = shown(value, quoted, sizeof(quoted));

	if (ret == -ERANGE)
		return complain(spec, err_stream, "-%c %s: out of range (%s)", flag, v, range);
	return complain(spec, err_stream, "-%c %s: not %s", flag, v, what);
}

/* A number of -opt in lo..hi into *out (REX_OPTIONS_OK), or the error. */
static enum rex_options_result take_number(const struct rex_options_spec *spec, FILE *err_stream,
                                           int opt, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char range[2 * 12];
	uint64_t v;
	int ret = rex_parse_uint(optarg, lo, hi, &v);

	if (ret) {
		snprintf(range, sizeof(range), "%" PRIu32 "..%" PRIu32, lo, hi);
		return bad_value(spec, err_stream, opt, optarg, ret, "a number", range);
	}
	*out = (uint32_t)v;
	return REX_OPTIONS_OK;
}

enum rex_options_result rex_options_parse(const struct rex_options_spec *given, int argc,
                                          char **argv, struct rex_options *out, FILE *out_stream,
                                          FILE *err_stream)
{
	const struct rex_options_spec limits = with_limits(given);
	const struct rex_options_spec *spec = &limits;
	char optstring[OPTSTRING_MAX];
	char range[2 * SIZE_TEXT_LEN + 8];
	char lo[SIZE_TEXT_LEN], hi[SIZE_TEXT_LEN];
	enum rex_options_result res;
	uint64_t v;
	int opt;
	int ret;

	*out = spec->defaults;
	if (out->port == 0)
		out->port = REX_DEFAULT_PORT;

	strcpy(optstring, OPTSTRING_BASE);
	if (enabled(spec, REX_OPT_SIZE))
		strcat(optstring, "s:");
	if (enabled(spec, REX_OPT_COUNT))
		strcat(optstring, "n:");
	if (enabled(spec, REX_OPT_WINDOW))
		strcat(optstring, "w:");
	if (enabled(spec, REX_OPT_SLOTS))
		strcat(optstring, "k:");
	if (enabled(spec, REX_OPT_CLIENTS))
		strcat(optstring, "c:");
	if (enabled(spec, REX_OPT_QPS))
		strcat(optstring, "q:");
	if (enabled(spec, REX_OPT_SRQ))
		strcat(optstring, "S:");

	/* getopt() keeps its position in globals: 0 makes glibc start afresh. */
	optind = 0;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, optstring, long_options, NULL)) != -1) {
		switch (opt) {
		case 'a':
			/* "-a -p 1" would otherwise bind to the address "-p". */
			if (optarg[0] == '\0' || optarg[0] == '-')
				return bad_value(spec, err_stream, opt, optarg, -EINVAL,
				                 "an address", "");
			out->addr = optarg;
			break;
		case 'p':
			ret = rex_parse_uint(optarg, 1, 65535, &v);
			if (ret)
				return bad_value(spec, err_stream, opt, optarg, ret,
				                 "a port number", "1..65535");
			out->port = (uint16_t)v;
			break;
		case 's':
			ret = rex_parse_size(optarg, spec->min_size, spec->max_size, &v);
			if (ret) {
				format_size(lo, sizeof(lo), spec->min_size);
				format_size(hi, sizeof(hi), spec->max_size);
				snprintf(range, sizeof(range), "%s..%s", lo, hi);
				return bad_value(spec, err_stream, opt, optarg, ret,
				                 "a size (digits and an optional K, M or G)",
				                 range);
			}
			out->size = v;
			break;
		case 'n':
			ret = rex_parse_uint(optarg, spec->min_count, spec->max_count, &v);
			if (ret) {
				snprintf(range, sizeof(range), "%" PRIu64 "..%" PRIu64,
				         spec->min_count, spec->max_count);
				return bad_value(spec, err_stream, opt, optarg, ret, "a count",
				                 range);
			}
			out->count = v;
			break;
		case 'w':
			res = take_number(spec, err_stream, opt, 1, spec->max_window, &out->window);
			if (res != REX_OPTIONS_OK)
				return res;
			break;
		case 'k':
			res = take_number(spec, err_stream, opt, spec->min_slots, spec->max_slots,
			                  &out->slots);
			if (res != REX_OPTIONS_OK)
				return res;
			break;
		case 'c':
			res =
			    take_number(spec, err_stream, opt, 0, spec->max_clients, &out->clients);
			if (res != REX_OPTIONS_OK)
				return res;
			break;
		case 'q':
			res = take_number(spec, err_stream, opt, 1, spec->max_qps, &out->qps);
			if (res != REX_OPTIONS_OK)
				return res;
			break;
		case 'S':
			res = take_number(spec, err_stream, opt, 0, spec->max_srq, &out->srq);
			if (res != REX_OPTIONS_OK)
				return res;
			break;
		case 'v':
			out->verbose = true;
			break;
		case 'h':
			rex_options_usage(spec, out_stream);
			return REX_OPTIONS_HELP;
		case 'V':
			rex_options_version(spec->program, out_stream);
			return REX_OPTIONS_HELP;
		case ':':
			return complain(spec, err_stream, "-%c needs a value", optopt);
		default:
			/* An unknown long option leaves optopt 0: name it whole. */
			if (optopt == 0 && optind > 0 && optind <= argc)
				return complain(spec, err_stream, "unknown option %s",
				                argv[optind - 1]);
			if (optopt > ' ' && optopt < 0x7f)
				return complain(spec, err_stream, "unknown option -%c", optopt);
			return complain(spec, err_stream, "unknown option (character code %d)",
			                optopt);
		}
	}

	if (optind < argc)
		return complain(spec, err_stream, "unexpected argument '%s' (flags only)",
		                argv[optind]);
	if (!spec->is_server && !out->addr)
		return complain(spec, err_stream, "missing -a ADDR (the server to connect to)");
	return REX_OPTIONS_OK;
}

void rex_debug(bool verbose, const char *who, const char *fmt, ...)
{
	char text[1024]; /* a longer line is cut */
	va_list ap;

	if (!verbose)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* One call, so one write() of the whole line: stderr has no buffer,
	 * and a line written in pieces can be cut by another program's line
	 * in the same pipe (scripts/pair runs a server and a client so). */
	fprintf(stderr, "%s: debug: %s\n", who, text);
}

const char *rex_options_hint(const char *call, int err)
{
	bool binding = call && (strcmp(call, "rdma_bind_addr") == 0 || strcmp(call, "rdma_listen") == 0);

	switch (err) {
	case ENODEV:
		return "no RDMA on this machine? run the program in this project's Soft-RoCE lab: "
		       "scripts/lab run -- COMMAND";
	case ECONNREFUSED:
		return "compare -a and -p with the address and port in the server's "
		       "\"listening\" line";
	case EADDRINUSE:
		return "choose another port with -p";
	case EADDRNOTAVAIL:
		if (binding)
			return "choose another port with -p, or leave -a out to listen on all "
			       "addresses";
		return "in the Soft-RoCE lab (scripts/lab), the server's address is "
		       "$RDMA_LAB_ADDR";
	case EHOSTUNREACH:
	case ENETUNREACH:
	case ETIMEDOUT:
		return "in the Soft-RoCE lab (scripts/lab), the server's address is "
		       "$RDMA_LAB_ADDR";
	default:
		return NULL;
	}
}
