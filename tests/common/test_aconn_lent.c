/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn's books and the program's own sends on a lent QP (rex_svc.h:
 * rex_svc_conn_lend()): a completion of kind REX_WR_LENT moves no number
 * and is not handed to the program (it polls those itself, and one left
 * behind is done); a failed one closes the connection as any other does;
 * flushed while the connection drains, it is the end expected. And
 * rex_aconn_take() keeps the same books for completions the program
 * polled itself.
 */
#include "aconn_fixture.h"

int main(void)
{
	struct aconn_fixture f;
	struct ibv_wc wc[2] = {
	    {.wr_id = rex_wr_id(REX_WR_RECV, 4), .status = IBV_WC_SUCCESS},
	    {.wr_id = rex_wr_id(REX_WR_LENT, 77), .status = IBV_WC_SUCCESS},
	};

	aconn_fixture_init(&f);
	f.c.state = REX_STATE_ESTABLISHED;
	f.c.sq_posted = 2;
	f.c.recvs_posted = 2;
	/* Left behind by the program: outside the books, nothing to act on. */
	aconn_fixture_push(&f, rex_wr_id(REX_WR_LENT, 1), IBV_WC_SUCCESS);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_SEND, 1), IBV_WC_SUCCESS);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 1);
	CHECK_U64_EQ(f.c.sq_done, 1);

	/* Polled by the program, a receive among its own: the receive is
	 * counted and comes back to act on, at the front. */
	CHECK_INT_EQ(rex_aconn_take(&f.c, wc, 2), 1);
	CHECK_U64_EQ(wc[0].wr_id, rex_wr_id(REX_WR_RECV, 4));
	CHECK_INT_EQ(f.c.recvs_posted, 1);
	CHECK_U64_EQ(f.c.sq_done, 1);
	CHECK_TRUE(f.c.state == REX_STATE_ESTABLISHED);

	/* A failed one of the program's is a failed connection. */
	aconn_fixture_push(&f, rex_wr_id(REX_WR_LENT, 2), IBV_WC_REM_ACCESS_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_TRUE(f.c.state == REX_STATE_DRAINING);
	CHECK_TRUE(f.c.failed);

	/* Draining: its flushes are expected, and the books end as before. */
	aconn_fixture_push(&f, rex_wr_id(REX_WR_LENT, 3), IBV_WC_WR_FLUSH_ERR);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 5), IBV_WC_WR_FLUSH_ERR);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_SEND, 2), IBV_WC_WR_FLUSH_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_U64_EQ(f.c.sq_done, 2);
	CHECK_INT_EQ(f.c.recvs_posted, 0);
	aconn_fixture_fini(&f);
	return check_finish();
}
