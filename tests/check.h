/* SPDX-License-Identifier: MIT */
/**
 * \file check.h
 * \brief Tiny assertions for the unit tests: each failure prints file:line,
 *        the expression and both values, and is counted; nothing returns early.
 *
 *     int main(void)
 *     {
 *             CHECK_INT_EQ(rex_parse_uint("7", 1, 9, &v), 0);
 *             return check_finish();
 *     }
 *
 * check_finish() prints a summary and returns 1 if any check failed, so a
 * test's main() returns it and ctest sees the failure.
 */
#ifndef REX_CHECK_H
#define REX_CHECK_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The counters live in a function so every test gets its own, without a global. */
static inline int *check_counter(int which)
{
	static int counts[2]; /* [0] checks run, [1] checks failed */

	return &counts[which];
}

static inline bool check_record(bool ok)
{
	(*check_counter(0))++;
	if (!ok)
		(*check_counter(1))++;
	return ok;
}

/** Print the summary; the value for main() to return (0 all passed, 1 otherwise). */
static inline int check_finish(void)
{
	int run = *check_counter(0), failed = *check_counter(1);

	if (failed)
		printf("FAILED: %d of %d checks\n", failed, run);
	else
		printf("ok: %d checks\n", run);
	return failed ? 1 : 0;
}

static inline void check_int_eq(const char *file, int line, const char *a_text, const char *b_text,
                                long long a, long long b)
{
	if (!check_record(a == b))
		printf("%s:%d: CHECK_INT_EQ(%s, %s) failed:\n  %s = %lld\n  %s = %lld\n", file,
		       line, a_text, b_text, a_text, a, b_text, b);
}

static inline void check_u64_eq(const char *file, int line, const char *a_text, const char *b_text,
                                uint64_t a, uint64_t b)
{
	if (!check_record(a == b))
		printf("%s:%d: CHECK_U64_EQ(%s, %s) failed:\n  %s = %" PRIu64 "\n  %s = %" PRIu64
		       "\n",
		       file, line, a_text, b_text, a_text, a, b_text, b);
}

static inline void check_str_eq(const char *file, int line, const char *a_text, const char *b_text,
                                const char *a, const char *b)
{
	bool ok = (a && b) ? strcmp(a, b) == 0 : a == b;

	if (!check_record(ok))
		printf("%s:%d: CHECK_STR_EQ(%s, %s) failed:\n  %s = \"%s\"\n  %s = \"%s\"\n", file,
		       line, a_text, b_text, a_text, a ? a : "(null)", b_text, b ? b : "(null)");
}

static inline void check_str_contains(const char *file, int line, const char *h_text,
                                      const char *n_text, const char *haystack, const char *needle,
                                      bool want)
{
	bool found = haystack && needle && strstr(haystack, needle) != NULL;

	if (!check_record(found == want))
		printf("%s:%d: %s(%s, %s) failed:\n  %s = \"%s\"\n  %s = \"%s\"\n", file, line,
		       want ? "CHECK_STR_CONTAINS" : "CHECK_STR_LACKS", h_text, n_text, h_text,
		       haystack ? haystack : "(null)", n_text, needle ? needle : "(null)");
}

static inline void check_true(const char *file, int line, const char *text, bool ok)
{
	if (!check_record(ok))
		printf("%s:%d: CHECK_TRUE(%s) failed\n", file, line, text);
}

/** a == b as integers (long long); prints both on failure. */
#define CHECK_INT_EQ(a, b) check_int_eq(__FILE__, __LINE__, #a, #b, (long long)(a), (long long)(b))
/** a == b as uint64_t; prints both on failure. */
#define CHECK_U64_EQ(a, b) check_u64_eq(__FILE__, __LINE__, #a, #b, (uint64_t)(a), (uint64_t)(b))
/** strcmp(a, b) == 0 (NULL equals only NULL); prints both on failure. */
#define CHECK_STR_EQ(a, b) check_str_eq(__FILE__, __LINE__, #a, #b, (a), (b))
/** \p needle occurs in \p haystack; prints both on failure. */
#define CHECK_STR_CONTAINS(haystack, needle)                                                       \
	check_str_contains(__FILE__, __LINE__, #haystack, #needle, (haystack), (needle), true)
/** \p needle does not occur in \p haystack; prints both on failure. */
#define CHECK_STR_LACKS(haystack, needle)                                                          \
	check_str_contains(__FILE__, __LINE__, #haystack, #needle, (haystack), (needle), false)
/** \p cond is true; prints the expression on failure. */
#define CHECK_TRUE(cond) check_true(__FILE__, __LINE__, #cond, (cond) ? true : false)

#endif /* REX_CHECK_H */
