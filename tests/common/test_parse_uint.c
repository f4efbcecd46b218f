/* SPDX-License-Identifier: MIT */
/* rex_parse_uint(): plain decimal digits within an inclusive range. */
#include <errno.h>

#include "check.h"
#include "rex_options.h"

int main(void)
{
	uint64_t v = 0;

	CHECK_INT_EQ(rex_parse_uint("0", 0, 10, &v), 0);
	CHECK_U64_EQ(v, 0);
	CHECK_INT_EQ(rex_parse_uint("10", 0, 10, &v), 0);
	CHECK_U64_EQ(v, 10);
	CHECK_INT_EQ(rex_parse_uint("5", 5, 5, &v), 0);
	CHECK_U64_EQ(v, 5);
	CHECK_INT_EQ(rex_parse_uint("18446744073709551615", 0, UINT64_MAX, &v), 0);
	CHECK_U64_EQ(v, UINT64_MAX);

	v = 77;
	CHECK_INT_EQ(rex_parse_uint("11", 0, 10, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_uint("4", 5, 10, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_uint("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	CHECK_INT_EQ(rex_parse_uint("", 0, 10, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint("-0", 0, 10, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint("+3", 0, 10, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint("3 ", 0, 10, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint("3K", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint("0x3", 0, 10, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint("99999999999999999999x", 0, UINT64_MAX, &v), -EINVAL);
	CHECK_INT_EQ(rex_parse_uint(NULL, 0, 10, &v), -EINVAL);
	CHECK_U64_EQ(v, 77); /* untouched on failure */

	return check_finish();
}
