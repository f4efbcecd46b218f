/* SPDX-License-Identifier: MIT */
/*
 * A connection of rex_svc without a device, lent to the program, for the
 * unit tests of rex_svc_conn_lent_poll() and rex_svc_conn_lent_poll_recvs():
 * established, over aconn_fixture.h's fake CQ, four receives posted whose
 * program ids are 11, 22, 33 and 44 (slots 0 to 3), ops.recv() counted.
 */
#ifndef REX_SVC_LENT_FIXTURE_H
#define REX_SVC_LENT_FIXTURE_H

#include "aconn_fixture.h"
#include "rex_svc_priv.h"

struct svc_lent_fixture {
	struct aconn_fixture f;
	struct rex_svc svc;
	struct rex_svc_conn conn;
	uint64_t recv_ids[4];
	uint64_t recv_wr_id; /* the last ops.recv()'s */
	int recvs;           /* ops.recv() calls */
};

static struct svc_lent_fixture *svc_lent_fixture_current;

static void svc_lent_fixture_recv(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc)
{
	(void)c, (void)wc;
	svc_lent_fixture_current->recv_wr_id = wr_id;
	svc_lent_fixture_current->recvs++;
}

/* Not lent yet: the test lends it (s->conn.lent = true). */
static inline void svc_lent_fixture_init(struct svc_lent_fixture *s)
{
	static const struct rex_svc_ops ops = {.recv = svc_lent_fixture_recv};
	uint64_t i;

	memset(s, 0, sizeof(*s));
	svc_lent_fixture_current = s;
	aconn_fixture_init(&s->f);
	s->svc.ops = &ops;
	s->conn.svc = &s->svc;
	rex_aconn_init(&s->conn.ac, &s->f.devs, &s->f.id, REX_STATE_ESTABLISHED, &fake_ops);
	s->conn.ac.cq = &s->f.cq;
	s->conn.ac.lcq.cq = &s->f.cq;
	s->conn.ac.qp = (struct ibv_qp *)&s->f.ctx; /* only looked at, never used */
	s->conn.ac.recvs_posted = 4;
	for (i = 0; i < 4; i++)
		s->recv_ids[i] = 11 * (i + 1);
	s->conn.recv_ids = s->recv_ids;
	s->conn.recv_depth = 4;
}

static inline void svc_lent_fixture_fini(struct svc_lent_fixture *s)
{
	rex_loop_timer_cancel(s->f.loop, &s->conn.ac.deadline);
	aconn_fixture_fini(&s->f);
}

#endif /* REX_SVC_LENT_FIXTURE_H */
