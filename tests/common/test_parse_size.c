/* SPDX-License-Identifier: MIT */
/* rex_parse_size(): decimal digits with an optional binary K, M or G; nothing else. */
#include <errno.h>

#include "check.h"
#include "rex_options.h"

static uint64_t parsed(const char *text)
{
	uint64_t v = 12345;

	CHECK_INT_EQ(rex_parse_size(text, 0, UINT64_MAX, &v), 0);
	return v;
}

int main(void)
{
	uint64_t v;

	CHECK_U64_EQ(parsed("0"), 0);
	CHECK_U64_EQ(parsed("1"), 1);
	CHECK_U64_EQ(parsed("4096"), 4096);
	CHECK_U64_EQ(parsed("64K"), 65536);
	CHECK_U64_EQ(parsed("64k"), 65536);
	CHECK_U64_EQ(parsed("1M"), 1048576);
	CHECK_U64_EQ(parsed("1m"), 1048576);
	CHECK_U64_EQ(parsed("1G"), 1073741824);
	CHECK_U64_EQ(parsed("3g"), UINT64_C(3) << 30);
	CHECK_U64_EQ(parsed("007"), 7);
	CHECK_U64_EQ(parsed("18446744073709551615"), UINT64_MAX);
	CHECK_U64_EQ(parsed("17179869183G"), UINT64_C(17179869183) << 30);

	/* The bounds are inclusive. */
	CHECK_INT_EQ(rex_parse_size("64", 64, 1024, &v), 0);
	CHECK_U64_EQ(v, 64);
	CHECK_INT_EQ(rex_parse_size("1K", 64, 1024, &v), 0);
	CHECK_U64_EQ(v, 1024);
	CHECK_INT_EQ(rex_parse_size("63", 64, 1024, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_size("1025", 64, 1024, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_size("2K", 64, 1024, &v), -ERANGE);

	/* Overflow, of the digits or of the multiplication, is out of range. */
	v = 99;
	CHECK_INT_EQ(rex_parse_size("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_size("99999999999G", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_size("17179869184G", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_size("18014398509481984K", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_size("99999999999999999999999999M", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_U64_EQ(v, 99); /* untouched on failure */

	/* Not sizes at all. */
	CHECK_INT_EQ(rex_parse_size("", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("-1", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("+1", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size(" 1", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("1 ", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("1 K", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("0x10", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("1Q", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("1KB", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("1KK", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("K", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("1.5K", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size("99999999999999999999999Q", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_size(NULL, 0, UINT64_MAX, &v), -EINVAL);
	CHECK_U64_EQ(v, 99);

	return check_finish();
}
