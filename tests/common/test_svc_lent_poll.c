/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_conn_lent_poll() (rex_svc.h), on a fake CQ: one completion a
 * call; the program's own send comes back to it (1, its wr_id and status
 * as polled, a failed one too: the program checks it); a receive goes to
 * the helper, whose books count it and whose ops.recv() gets the
 * program's wr_id of its slot (0); an empty CQ is 0; a CQ that fails is
 * -EIO; a connection not lent is -EINVAL, one closing -ENOTCONN, and
 * neither is polled.
 */
#include "svc_lent_fixture.h"

static int failing_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc)
{
	(void)cq, (void)num, (void)wc;
	return -1;
}

int main(void)
{
	struct svc_lent_fixture s;
	struct aconn_fixture *f = &s.f;
	struct rex_svc_conn *conn = &s.conn;
	struct ibv_wc wc = {0};

	svc_lent_fixture_init(&s);

	/* Not lent: nothing polled. */
	aconn_fixture_push(f, rex_wr_id(REX_WR_LENT, 7), IBV_WC_SUCCESS);
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), -EINVAL);
	CHECK_INT_EQ(f->taken, 0);

	conn->lent = true;
	/* The program's send, and nothing more a call. */
	aconn_fixture_push(f, rex_wr_id(REX_WR_RECV, 2), IBV_WC_SUCCESS);
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), 1);
	CHECK_U64_EQ(wc.wr_id, rex_wr_id(REX_WR_LENT, 7));
	CHECK_INT_EQ(f->taken, 1);
	CHECK_INT_EQ(s.recvs, 0);

	/* A receive: the helper's books and callback. */
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), 0);
	CHECK_INT_EQ(s.recvs, 1);
	CHECK_U64_EQ(s.recv_wr_id, 33);
	CHECK_INT_EQ(conn->ac.recvs_posted, 3);

	/* Empty. */
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), 0);

	/* A failed send of the program's is the program's to judge. */
	aconn_fixture_push(f, rex_wr_id(REX_WR_LENT, 8), IBV_WC_RETRY_EXC_ERR);
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), 1);
	CHECK_TRUE(wc.status == IBV_WC_RETRY_EXC_ERR);
	CHECK_U64_EQ(rex_wr_id_slot(wc.wr_id), 8);

	/* The CQ fails. */
	f->ctx.ops.poll_cq = failing_poll_cq;
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), -EIO);
	f->ctx.ops.poll_cq = fake_poll_cq;

	/* Closing: the CQ is the helper's again, and left to it. */
	aconn_fixture_push(f, rex_wr_id(REX_WR_RECV, 3), IBV_WC_WR_FLUSH_ERR);
	conn->ac.state = REX_STATE_DRAINING;
	CHECK_INT_EQ(rex_svc_conn_lent_poll(conn, &wc), -ENOTCONN);
	CHECK_INT_EQ(f->taken, 3);
	CHECK_INT_EQ(s.recvs, 1);

	svc_lent_fixture_fini(&s);
	return check_finish();
}
