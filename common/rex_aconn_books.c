/* SPDX-License-Identifier: MIT */
/*
 * rex_aconn_books.c: the books of a connection's work requests: receives counted,
 * sends numbered, completions taken and judged (see rex_aconn.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* htobe32 under -std=c11 */
#endif
#include "rex_aconn.h"

#include <endian.h>
#include <errno.h>
#include <string.h>

#include "rex_aconn_priv.h"
#include "rex_error.h"

/* --- posting, counted ------------------------------------------------------ */

int rex_aconn_post_recv(struct rex_aconn *c, struct ibv_recv_wr *first)
{
	struct ibv_recv_wr *wr, *bad = NULL;
	int ret;

	if (c->srq)
		return -EINVAL;
	for (wr = first; wr; wr = wr->next)
		wr->wr_id = rex_wr_id(REX_WR_RECV, rex_wr_id_slot(wr->wr_id));
	ret = ibv_post_recv(c->qp, first, &bad); /* an errno value */
	/* What was posted is outstanding: all, or those before bad. */
	for (wr = first; wr && wr != bad; wr = wr->next)
		c->recvs_posted++;
	if (ret) {
		rex_report_errno("ibv_post_recv", ret);
		return -ret;
	}
	return 0;
}

int rex_aconn_post_recvs(struct rex_aconn *c, const struct ibv_sge *sge, unsigned n)
{
	struct ibv_recv_wr wr[REX_ACONN_WC_BATCH];
	struct ibv_sge sges[REX_ACONN_WC_BATCH];
	unsigned i, k;
	int ret;

	while (n > 0) {
		k = n < REX_ACONN_WC_BATCH ? n : REX_ACONN_WC_BATCH;
		for (i = 0; i < k; i++) {
			if (sge)
				sges[i] = *sge;
			wr[i] = (struct ibv_recv_wr){.wr_id = 0,
			                             .sg_list = sge ? &sges[i] : NULL,
			                             .num_sge = sge ? 1 : 0,
			                             .next = i + 1 < k ? &wr[i + 1] : NULL};
		}
		/* One call for the chain: one doorbell, one lock. */
		ret = rex_aconn_post_recv(c, wr);
		if (ret)
			return ret;
		n -= k;
	}
	return 0;
}

int rex_aconn_post_send(struct rex_aconn *c, struct ibv_send_wr *first)
{
	struct ibv_send_wr *wr, *bad = NULL;
	uint64_t n = c->sq_posted;
	int ret;

	for (wr = first; wr; wr = wr->next)
		wr->wr_id = rex_wr_id(REX_WR_SEND, (uint32_t)++n);
	ret = ibv_post_send(c->qp, first, &bad); /* an errno value */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		/* What was not posted is not outstanding. */
		for (wr = first; wr && wr != bad; wr = wr->next)
			c->sq_posted++;
		return -ret;
	}
	c->post_wrs += n - c->sq_posted;
	c->post_calls++;
	c->sq_posted = n;
	return 0;
}

int rex_aconn_post_imm(struct rex_aconn *c, uint32_t imm)
{
	struct ibv_send_wr wr = {
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = htobe32(imm),
	};

	return rex_aconn_post_send(c, &wr);
}

uint64_t rex_aconn_send_number(const struct rex_aconn *c, uint64_t wr_id)
{
	/* The wr_id holds the low 32 bits; the sends outstanding are far fewer
	 * than 2^31, so the number is the one at most that far below sq_posted. */
	uint32_t behind = (uint32_t)c->sq_posted - rex_wr_id_slot(wr_id);

	return c->sq_posted - behind;
}

/* --- completions ----------------------------------------------------------- */

/* [poll] */
/* iWARP ends a connection in the kernel: the peer's close (its TCP FIN or
 * TERMINATE) moves our QP to the error state before rdma_cm reports
 * DISCONNECTED, so our posted work flushes first. InfiniBand and RoCE leave
 * the QP up until our own rdma_disconnect(). Such a flush is the peer
 * leaving, to be judged when its DISCONNECTED comes (disconnected()). */
static bool flushed_by_peer_close(struct rex_aconn *c, const struct ibv_wc *wc)
{
	/* A server serves from its accept on: a short client may finish and
	 * close before the server reads its ESTABLISHED. */
	bool serving = c->state == REX_STATE_ESTABLISHED ||
	               (c->state == REX_STATE_CONNECTING && !c->active_side);

	if (wc->status != IBV_WC_WR_FLUSH_ERR || !serving ||
	    c->id->verbs->device->transport_type != IBV_TRANSPORT_IWARP)
		return false;
	if (!c->peer_closing) {
		c->peer_closing = true;
		rex_loop_timer_start(c->loop, &c->deadline, c->devs->attr.drain_timeout_ms);
	}
	return true;
}

static void refuse_late(struct rex_aconn *c, const struct ibv_wc *wc)
{
	char what[96];

	rex_format_wc_brief(what, sizeof(what), wc);
	if (!c->failed)
		rex_aconn_say(c, "the peer sent after it disconnected: %s", what);
	c->failed = true;
}

int rex_aconn_poll(struct rex_aconn *c, struct ibv_wc *wc, int max, int *taken)
{
	bool closing = c->state == REX_STATE_DRAINING || c->state == REX_STATE_CLOSED;
	int n;

	*taken = 0;
	if (c->lcq.error && !closing) {
		/* The loop could not arm the CQ again: it will not wake us for
		 * this connection any more. Close it while we are here. */
		rex_aconn_say(c, "its CQ cannot be armed (%s): closing it",
		              strerror(-c->lcq.error));
		rex_aconn_close(c, true);
	}
	n = ibv_poll_cq(c->cq, max, wc);
	if (n <= 0) {
		if (n < 0) {
			rex_aconn_say(c, "ibv_poll_cq failed (%d)", n);
			c->cq_dead = true;
			rex_aconn_close(c, true);
			rex_aconn_check_drained(c);
		}
		return 0;
	}
	*taken = n;
	return rex_aconn_take(c, wc, n);
}

int rex_aconn_take(struct rex_aconn *c, struct ibv_wc *wc, int n)
{
	bool closing = c->state == REX_STATE_DRAINING || c->state == REX_STATE_CLOSED;
	int i, good = 0;
	uint64_t number;
	uint32_t kind;

	c->cq_taken += (uint64_t)n;
	c->heard = true; /* for the idle deadline, which reads the clock */
	for (i = 0; i < n; i++) {
		/* The books: a receive is one; a send's number covers every
		 * send before it, signalled or not. A lent send is the
		 * program's own, outside them (rex_svc_conn_lend()). */
		kind = rex_wr_id_kind(wc[i].wr_id);
		if (kind == REX_WR_RECV) {
			if (!c->srq)
				c->recvs_posted--;
		} else if (kind != REX_WR_LENT) {
			number = rex_aconn_send_number(c, wc[i].wr_id);
			if (number > c->sq_done)
				c->sq_done = number;
			if (kind == REX_WR_MARKER)
				continue; /* ours: nothing for the program */
		}
		if (wc[i].status == IBV_WC_SUCCESS && !closing) {
			if (kind != REX_WR_LENT)    /* a lent one the program left here is done */
				wc[good++] = wc[i]; /* for the program to act on */
			continue;
		}
		/* A message the peer sent after its last word: the session ended
		 * at its disconnect, and this was never read. */
		if (c->srq && kind == REX_WR_RECV && c->ops->srq_recv)
			c->ops->srq_recv(c, &wc[i]); /* its buffer is the queue's */
		if (closing && c->peer_ended && kind == REX_WR_RECV &&
		    wc[i].status == IBV_WC_SUCCESS) {
			refuse_late(c, &wc[i]);
			continue;
		}
		if (!closing && flushed_by_peer_close(c, &wc[i]))
			continue;
		/* A flush is how a stopped QP hands its work requests back: the
		 * expected end of a closing connection, not an error. */
		if (closing &&
		    (wc[i].status == IBV_WC_WR_FLUSH_ERR || wc[i].status == IBV_WC_SUCCESS))
			continue;
		rex_report_wc(kind == REX_WR_RECV ? "receive" : "send", &wc[i]);
		rex_aconn_say(c, "closing it");
		rex_aconn_close(c, true);
		closing = true;
	}
	if (closing)
		rex_aconn_check_drained(c);
	return good;
}
/* [poll] */
