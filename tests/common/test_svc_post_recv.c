/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_post_recv() (rex_svc.h), over a fake QP that records what it is
 * given: receives take slots in turn, each posted with rex_wr_id(RECV,
 * slot) and the program's id kept for the slot; the program's ids are back
 * in its chain when the call returns; the books count what was posted; no
 * room is -ENOBUFS and posts nothing; a post that fails counts what went
 * before the bad one. One receive (a ping's) and a chain alike.
 */
#include "svc_lent_fixture.h"

static uint64_t posted[8];
static int nposted, fail_at = -1;

static int fake_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	(void)qp;
	for (; wr; wr = wr->next) {
		if (nposted == fail_at) {
			*bad = wr;
			return ENOMEM;
		}
		posted[nposted++] = wr->wr_id;
	}
	return 0;
}

int main(void)
{
	struct svc_lent_fixture s;
	struct ibv_qp qp = {0};
	struct ibv_recv_wr one = {.wr_id = 77},
	                   two[2] = {{.wr_id = 5, .next = &two[1]}, {.wr_id = 6}};

	svc_lent_fixture_init(&s);
	s.f.ctx.ops.post_recv = fake_post_recv;
	qp.context = &s.f.ctx;
	s.conn.ac.qp = &qp;
	s.conn.ac.recvs_posted = 2; /* of 4 */
	s.conn.recv_next = 5;       /* slot 1 next */

	/* One receive: slot 1, the program's id kept for it and back in its WR. */
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, &one), 0);
	CHECK_INT_EQ(nposted, 1);
	CHECK_U64_EQ(posted[0], rex_wr_id(REX_WR_RECV, 1));
	CHECK_U64_EQ(s.recv_ids[1], 77);
	CHECK_U64_EQ(one.wr_id, 77);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 3);
	CHECK_INT_EQ(s.conn.recv_next, 6);

	/* Two with room for one: nothing posted. */
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, two), -ENOBUFS);
	CHECK_INT_EQ(nposted, 1);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 3);

	/* Two with room: slots 2 and 3, ids back. */
	s.conn.ac.recvs_posted = 2;
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, two), 0);
	CHECK_INT_EQ(nposted, 3);
	CHECK_U64_EQ(posted[1], rex_wr_id(REX_WR_RECV, 2));
	CHECK_U64_EQ(posted[2], rex_wr_id(REX_WR_RECV, 3));
	CHECK_U64_EQ(s.recv_ids[2], 5);
	CHECK_U64_EQ(s.recv_ids[3], 6);
	CHECK_U64_EQ(two[0].wr_id, 5);
	CHECK_U64_EQ(two[1].wr_id, 6);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 4);

	/* Full: one receive is -ENOBUFS too. */
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, &one), -ENOBUFS);
	CHECK_INT_EQ(nposted, 3);

	/* The post fails: the error, nothing counted, the id back. */
	s.conn.ac.recvs_posted = 3;
	fail_at = 3;
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, &one), -ENOMEM);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 3);
	CHECK_U64_EQ(one.wr_id, 77);

	/* A chain whose second fails: the first counted. */
	s.conn.ac.recvs_posted = 1;
	fail_at = 4;
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, two), -ENOMEM);
	CHECK_INT_EQ(nposted, 4);
	CHECK_INT_EQ(s.conn.ac.recvs_posted, 2);
	CHECK_U64_EQ(two[0].wr_id, 5);
	CHECK_U64_EQ(two[1].wr_id, 6);

	/* Closing: nothing posted. */
	s.conn.ac.state = REX_STATE_DRAINING;
	CHECK_INT_EQ(rex_svc_post_recv(&s.conn, &one), -ENOTCONN);
	CHECK_INT_EQ(nposted, 4);

	s.conn.ac.qp = NULL;
	svc_lent_fixture_fini(&s);
	return check_finish();
}
