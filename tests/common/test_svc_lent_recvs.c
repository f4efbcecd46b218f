/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_conn_lent_poll_recvs() (rex_svc.h), on a fake CQ: a receive
 * that succeeded is the program's (2, its wr_id the program's id of the
 * slot, the helper's books count it, its ops.recv() does not run); the
 * program's send is still its own (1); receives come in the order
 * polled, one a call; rex_svc_conn_lent_poll() still gives them to the
 * helper. Not lent, or closing: the one path of both functions
 * (test_svc_lent_poll.c).
 */
#include "svc_lent_fixture.h"

int main(void)
{
	struct svc_lent_fixture s;
	struct ibv_wc wc = {0};

	svc_lent_fixture_init(&s);
	s.conn.lent = true;
	aconn_fixture_push(&s.f, rex_wr_id(REX_WR_RECV, 1), IBV_WC_SUCCESS);
	aconn_fixture_push(&s.f, rex_wr_id(REX_WR_LENT, 7), IBV_WC_SUCCESS);
	aconn_fixture_push(&s.f, rex_wr_id(REX_WR_RECV, 2), IBV_WC_SUCCESS);
	/* The receive of slot 1: the program's, by its own id; the books count it. */
	CHECK_INT_EQ(rex_svc_conn_lent_poll_recvs(&s.conn, &wc), 2);
	CHECK_U64_EQ(wc.wr_id, 22);
	CHECK_TRUE(wc.status == IBV_WC_SUCCESS);
	CHECK_INT_EQ(s.f.taken, 1);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 3);
	CHECK_U64_EQ(s.conn.ac.cq_taken, 1);
	CHECK_TRUE(s.conn.ac.heard); /* the peer is alive: the idle deadline sees it */
	CHECK_INT_EQ(s.recvs, 0);

	/* The program's send, as rex_svc_conn_lent_poll() gives it. */
	CHECK_INT_EQ(rex_svc_conn_lent_poll_recvs(&s.conn, &wc), 1);
	CHECK_U64_EQ(rex_wr_id_slot(wc.wr_id), 7);
	CHECK_INT_EQ(s.f.taken, 2);

	/* The receive of slot 2, its id. */
	CHECK_INT_EQ(rex_svc_conn_lent_poll_recvs(&s.conn, &wc), 2);
	CHECK_U64_EQ(wc.wr_id, 33);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 2);
	CHECK_INT_EQ(s.recvs, 0);

	/* Empty. */
	CHECK_INT_EQ(rex_svc_conn_lent_poll_recvs(&s.conn, &wc), 0);

	/* rex_svc_conn_lent_poll() still gives a receive to the helper. */
	aconn_fixture_push(&s.f, rex_wr_id(REX_WR_RECV, 0), IBV_WC_SUCCESS);
	CHECK_INT_EQ(rex_svc_conn_lent_poll(&s.conn, &wc), 0);
	CHECK_INT_EQ(s.recvs, 1);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 1);

	svc_lent_fixture_fini(&s);
	return check_finish();
}
