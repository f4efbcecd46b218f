/* SPDX-License-Identifier: MIT */
/*
 * client_lend.c: --lend in 06's client (see client.h): latency pings
 * posted and polled with the verbs alone, as perftest does, on the QP and
 * CQ that the helper lends for a size's runs (rex_svc_conn_lend()), and
 * their answers taken there too, not through the helper's callbacks.
 */
#include <string.h>

#include "client.h"

/* --lend: the latency QP's QP and CQ lent to us for a size's runs. */
int set_lent(struct client *cl, bool lend)
{
	struct qp *q = &cl->qps[0];
	int ret;

	if (!lend) {
		if (q->lent.qp)
			rex_svc_conn_unlend(q->conn);
		q->lent = (struct rex_svc_lent){0};
		return 0;
	}
	q->answer_recv =
	    (struct ibv_recv_wr){.sg_list = &q->recv_sge, .num_sge = q->recv_sge.length ? 1 : 0};
	ret = q->conn ? rex_svc_conn_lend(q->conn, &q->lent) : -ENOTCONN;
	if (ret)
		fprintf(stderr, "client: rex_svc_conn_lend: %s\n", strerror(-ret));
	return ret;
}

/* A ping: through the helper, or with --lend on the lent QP itself. */
int post_ping(struct qp *q, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret;

	if (!q->conn || !rex_svc_conn_open(q->conn))
		return -ENOTCONN;
	if (!q->lent.qp) {
		wr->wr_id = q->seq + 1;
		return rex_svc_post_send(q->conn, wr);
	}
	wr->wr_id = rex_svc_lent_wr_id((uint32_t)(q->seq + 1));
	ret = ibv_post_send(q->lent.qp, wr, &bad);
	if (ret)
		rex_report_errno("ibv_post_send", ret);
	return -ret;
}

/* --lend: a SEND's latency answer, taken perftest's way: counted, its
 * receive posted again as it was, and no more. false: not an answer (a
 * control message), for qp_recv(). */
static bool lent_answer(struct qp *q, const struct ibv_wc *wc)
{
	const struct client *cl = q->cl;
	int ret;

	if (wc->opcode != IBV_WC_RECV || (wc->wc_flags & IBV_WC_WITH_IMM) ||
	    wc->byte_len != cl->size || cl->o.op != BENCH_OP_SEND || cl->o.mode != BENCH_MODE_LAT)
		return false;
	q->answers++;
	ret = rex_svc_post_recv(q->conn, &q->answer_recv);
	if (ret && ret != -ENOTCONN) /* -ENOTCONN: closing, nothing to receive */
		rex_svc_close(q->conn, true);
	return true;
}

/* --lend: one poll of the lent CQ, as perftest polls; a receive (an
 * answer, a control message) is ours too, taken and posted again here,
 * not through the helper's callback (rex_svc_conn_lent_poll_recvs()). A
 * closing connection's CQ is the helper's again: the loop's look sees the
 * close. */
/* [lat-lent] */
void lent_step(struct qp *q)
{
	struct ibv_wc wc;
	int n = rex_svc_conn_lent_poll_recvs(q->conn, &wc);

	if (n == 0 || n == -ENOTCONN)
		return;
	if (n == 2) {
		if (!lent_answer(q, &wc))
			qp_recv(q->conn, wc.wr_id, &wc); /* as the helper would call it */
		return;
	}
	if (n < 0 || wc.status != IBV_WC_SUCCESS) {
		if (n < 0)
			fprintf(stderr, "client: rex_svc_conn_lent_poll_recvs: %s\n", strerror(-n));
		else
			rex_report_wc("send", &wc);
		q->cl->broken = true;
		rex_svc_close(q->conn, true);
		return;
	}
	q->completed = q->seq - (uint32_t)((uint32_t)q->seq - rex_wr_id_slot(wc.wr_id));
}
/* [lat-lent] */
