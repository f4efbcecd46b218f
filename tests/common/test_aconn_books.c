/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn's books: a receive counts one; a send's number covers every
 * send before it, signalled or not; the completions handed to the program
 * are the good ones of a connection that is not closing; and a closing
 * connection is released only once its last flushed work request is in
 * (the marker's included), not before.
 */
#include "aconn_fixture.h"

int main(void)
{
	struct aconn_fixture f;

	aconn_fixture_init(&f);
	/* Five sends posted (only 3 and 5 signalled), three receives. */
	f.c.sq_posted = 5;
	f.c.recvs_posted = 3;
	aconn_fixture_push(&f, rex_wr_id(REX_WR_SEND, 3), IBV_WC_SUCCESS);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 7), IBV_WC_SUCCESS);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 2);
	CHECK_U64_EQ(f.c.sq_done, 3); /* sends 1 and 2 done with it */
	CHECK_INT_EQ(f.c.recvs_posted, 2);
	CHECK_TRUE(f.c.heard); /* for the idle deadline: a flag, no clock read */

	/* Closing: the rest flushes; nothing of it is the program's. */
	rex_aconn_close(&f.c, false);
	CHECK_INT_EQ(f.c.state, REX_STATE_DRAINING);
	CHECK_TRUE(!f.c.release.queued);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 1), IBV_WC_WR_FLUSH_ERR);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_SEND, 5), IBV_WC_WR_FLUSH_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_TRUE(!f.c.release.queued); /* one receive still out */
	/* A marker (send 6) stands for sends that left no completion. */
	f.c.sq_posted = 6;
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 2), IBV_WC_WR_FLUSH_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_TRUE(!f.c.release.queued); /* the marker is not in */
	aconn_fixture_push(&f, rex_wr_id(REX_WR_MARKER, 6), IBV_WC_WR_FLUSH_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_U64_EQ(f.c.sq_done, 6);
	CHECK_INT_EQ(f.c.recvs_posted, 0);
	CHECK_TRUE(f.c.release.queued); /* drained: the release is posted */
	CHECK_TRUE(!f.c.failed);
	aconn_fixture_fini(&f);
	return check_finish();
}
