/* SPDX-License-Identifier: MIT */
/*
 * rex_wire.h: each store writes the most significant byte first, at any
 * offset (unaligned), and each load reads back what the store wrote.
 */
#include "check.h"
#include "rex_wire.h"

int main(void)
{
	uint8_t buf[1 + 8] = {0};
	uint8_t *p = buf + 1; /* odd: not aligned for any of the three */

	rex_put_be16(p, 0x0102);
	CHECK_INT_EQ(p[0], 0x01);
	CHECK_INT_EQ(p[1], 0x02);
	CHECK_INT_EQ(rex_get_be16(p), 0x0102);

	rex_put_be32(p, 0x01020304u);
	CHECK_INT_EQ(p[0], 0x01);
	CHECK_INT_EQ(p[3], 0x04);
	CHECK_U64_EQ(rex_get_be32(p), 0x01020304u);

	rex_put_be64(p, 0x0102030405060708ull);
	CHECK_INT_EQ(p[0], 0x01);
	CHECK_INT_EQ(p[7], 0x08);
	CHECK_U64_EQ(rex_get_be64(p), 0x0102030405060708ull);
	CHECK_INT_EQ(buf[0], 0); /* nothing written before the field */
	return check_finish();
}
