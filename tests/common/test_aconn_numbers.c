/* SPDX-License-Identifier: MIT */
/*
 * A send's number survives the 32 bits a wr_id has room for: the full
 * number is the one at most 2^31 below the last posted, across the wrap.
 */
#include "check.h"
#include "rex_aconn.h"

int main(void)
{
	struct rex_aconn c = {0};

	c.sq_posted = 10;
	CHECK_U64_EQ(rex_aconn_send_number(&c, rex_wr_id(REX_WR_SEND, 10)), 10);
	CHECK_U64_EQ(rex_aconn_send_number(&c, rex_wr_id(REX_WR_SEND, 4)), 4);
	/* Past 2^32: the low bits wrapped, the number did not. */
	c.sq_posted = 0x100000002ull;
	CHECK_U64_EQ(rex_aconn_send_number(&c, rex_wr_id(REX_WR_SEND, 2)), 0x100000002ull);
	CHECK_U64_EQ(rex_aconn_send_number(&c, rex_wr_id(REX_WR_SEND, 0xffffffffu)), 0xffffffffull);
	CHECK_U64_EQ(rex_aconn_send_number(&c, rex_wr_id(REX_WR_MARKER, 1)), 0x100000001ull);
	return check_finish();
}
