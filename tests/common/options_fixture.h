/* SPDX-License-Identifier: MIT */
/**
 * \file options_fixture.h
 * \brief Shared setup for the rex_options tests: two specs, and a way to run
 *        rex_options_parse() with both streams captured in memory.
 */
#ifndef REX_OPTIONS_FIXTURE_H
#define REX_OPTIONS_FIXTURE_H

#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rex_options.h"

#define GIB (UINT64_C(1) << 30)

/** A client that enables every optional flag. */
static inline struct rex_options_spec fixture_client_spec(void)
{
	struct rex_options_spec spec = {
	    .program = "prog",
	    .summary = "a test program",
	    .is_server = false,
	    .flags = REX_OPT_SIZE | REX_OPT_COUNT | REX_OPT_WINDOW | REX_OPT_CLIENTS,
	    .defaults = {.size = 4096, .count = 1000, .window = 16, .clients = 0},
	    .min_size = 1,
	    .max_size = GIB,
	    .min_count = 1,
	    .max_count = 1000000,
	    .max_window = 128,
	    .max_clients = 64,
	};
	return spec;
}

/** A server with only the flags that are always on (-a -p -v -h). */
static inline struct rex_options_spec fixture_server_spec(void)
{
	struct rex_options_spec spec = {
	    .program = "srv",
	    .summary = "a test server",
	    .is_server = true,
	};
	return spec;
}

/** One run of rex_options_parse(): its result and everything it printed. */
struct parse_run {
	enum rex_options_result result;
	struct rex_options opts;
	char *out; /**< what went to out_stream (NUL-terminated) */
	char *err; /**< what went to err_stream (NUL-terminated) */
	char first_err_line[256];
	size_t out_len, err_len;
};

/** Parse {"prog", args..., NULL}; the strings are not modified by getopt(). */
static inline void run_parse(const struct rex_options_spec *spec, const char **args,
                             struct parse_run *run)
{
	char *argv[32];
	int argc = 0;
	FILE *out, *err;
	size_t n;

	memset(run, 0, sizeof(*run));
	argv[argc++] = (char *)"prog";
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;

	out = open_memstream(&run->out, &run->out_len);
	err = open_memstream(&run->err, &run->err_len);
	CHECK_TRUE(out != NULL);
	CHECK_TRUE(err != NULL);
	if (!out || !err)
		abort();
	run->result = rex_options_parse(spec, argc, argv, &run->opts, out, err);
	CHECK_INT_EQ(fclose(out), 0);
	CHECK_INT_EQ(fclose(err), 0);

	n = strcspn(run->err, "\n");
	if (n >= sizeof(run->first_err_line))
		n = sizeof(run->first_err_line) - 1;
	memcpy(run->first_err_line, run->err, n);
	run->first_err_line[n] = '\0';
}

static inline void run_free(struct parse_run *run)
{
	free(run->out);
	free(run->err);
	run->out = run->err = NULL;
}

/** RUN_PARSE(&spec, &run, "-p", "7"): the arguments after argv[0]. */
#define RUN_PARSE(spec, run, ...) run_parse((spec), (const char *[]){__VA_ARGS__, NULL}, (run))

/**
 * Expect REX_OPTIONS_BAD with exactly \p line as the first line on err_stream,
 * the usage right after it, and nothing on out_stream.
 */
#define CHECK_BAD(spec, expected_line, ...)                                                        \
	check_bad(__FILE__, __LINE__, (spec), (expected_line), (const char *[]){__VA_ARGS__, NULL})

static inline void check_bad(const char *file, int line, const struct rex_options_spec *spec,
                             const char *expected_line, const char **args)
{
	struct parse_run run;
	const char *second;
	int failed_before = *check_counter(1);

	run_parse(spec, args, &run);
	CHECK_INT_EQ(run.result, REX_OPTIONS_BAD);
	CHECK_STR_EQ(run.first_err_line, expected_line);
	second = strchr(run.err, '\n');
	CHECK_TRUE(second != NULL && strncmp(second + 1, "usage: ", 7) == 0);
	CHECK_STR_EQ(run.out, "");
	if (*check_counter(1) != failed_before)
		printf("  ^ in CHECK_BAD at %s:%d\n", file, line);
	run_free(&run);
}

#endif /* REX_OPTIONS_FIXTURE_H */
