/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn's firm end: once the peer has ended the connection (its
 * disconnect came, and the program expected it), a receive that completes
 * with a message arrived after the peer's last word: nothing will read it,
 * so the connection counts as failed. A flush then is the expected end; a
 * successful send of ours is too; and a connection the program closed
 * itself is not judged by this rule.
 */
#include "aconn_fixture.h"

int main(void)
{
	struct aconn_fixture f;

	/* The peer ended it; only flushes and a send of ours come: a clean end. */
	aconn_fixture_init(&f);
	f.c.sq_posted = 1;
	f.c.recvs_posted = 2;
	rex_aconn_close(&f.c, false);
	f.c.peer_ended = true;
	aconn_fixture_push(&f, rex_wr_id(REX_WR_SEND, 1), IBV_WC_SUCCESS);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 0), IBV_WC_WR_FLUSH_ERR);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 1), IBV_WC_WR_FLUSH_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_TRUE(!f.c.failed);
	CHECK_TRUE(f.c.release.queued);
	aconn_fixture_fini(&f);

	/* The peer ended it, and a receive took a message: failed, and not
	 * handed to the program. */
	aconn_fixture_init(&f);
	f.c.recvs_posted = 2;
	rex_aconn_close(&f.c, false);
	f.c.peer_ended = true;
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 0), IBV_WC_SUCCESS);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 1), IBV_WC_WR_FLUSH_ERR);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_TRUE(f.c.failed);
	CHECK_TRUE(f.c.release.queued); /* still drained and released */
	aconn_fixture_fini(&f);

	/* Closed by the program itself: a late message is not the peer's fault. */
	aconn_fixture_init(&f);
	f.c.recvs_posted = 1;
	rex_aconn_close(&f.c, false);
	aconn_fixture_push(&f, rex_wr_id(REX_WR_RECV, 0), IBV_WC_SUCCESS);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	CHECK_TRUE(!f.c.failed);
	aconn_fixture_fini(&f);
	return check_finish();
}
