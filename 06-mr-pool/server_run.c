/* SPDX-License-Identifier: MIT */
/*
 * server_run.c: a session's benchmark work in 06's server (see server.h):
 * the control messages (START, DONE), latency answers, the data checked
 * after each run, and which runs the server busy-polls.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rex_error.h"
#include "server.h"

/* WRITE latency watches a byte: the CQ is polled after each answer, and at
 * least every this many rounds. */
#define SERVER_MEMORY_ROUNDS 64
/* Receives taken are posted again in chains of this many (the bandwidth
 * runs' receive queue has room for them: 2 * depth + 8). */
#define REPOST_CHAIN 16
/* --lend: polls of the lent CQ for the last answer's completion at a run's
 * end before giving up on it. */
#define LEND_DRAIN_SPINS 1000000ul
/* Latency answers start on a boundary of this many bytes past the pings:
 * a page on x86 and on the lab, so pings and answers share no page. */
#define ANSWER_ALIGN 4096u

static int run_done(struct session *ss);

/* A run is on (START to DONE). The server busy-polls only the runs that
 * need it: latency answers (SEND and WRITE ping-pong), and receives to
 * repost (SEND, WRITE WITH IMM). A READ, or a WRITE bandwidth run, needs no
 * CPU of ours, and on Soft-RoCE the CPU is the NIC: polling for nothing
 * would take it from the device (perftest's server sleeps then too). */
void session_set_active(struct session *ss, bool active)
{
	const struct bench_hello *h = &ss->hello;
	bool busy =
	    active && h->op != BENCH_OP_READ && !bench_op_atomic(h->op) &&
	    (h->mode == BENCH_MODE_LAT || h->op == BENCH_OP_SEND || h->op == BENCH_OP_WRITE_IMM);

	if (ss->busy != busy) {
		ss->server->active += busy ? 1 : (unsigned)-1;
		ss->server->busy_changed = true;
	}
	ss->busy = busy;
	ss->active = active;
}

static int post_answer(struct session *ss, struct ibv_send_wr *wr);

/* [lent-step] */
/* --lend: a SEND's latency ping, taken perftest's way: its receive posted
 * again as it was, its answer made at the lend posted, and no more. false:
 * not a ping (a control message), for session_recv(). */
static bool lent_ping(struct session *ss, const struct ibv_wc *wc)
{
	int ret;

	if (wc->opcode != IBV_WC_RECV || (wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) ||
	    wc->byte_len != ss->size || ss->hello.op != BENCH_OP_SEND || !ss->active)
		return false;
	ss->heard = true;
	ss->messages++;
	ss->server->messages++;
	ret = rex_svc_post_recv(ss->conn, &ss->ping_recv);
	if (ret && ret != -ENOTCONN)
		fprintf(stderr, "server: %s: rex_svc_post_recv: %s\n", rex_svc_conn_name(ss->conn),
		        strerror(-ret));
	if (ret || post_answer(ss, &ss->ping_answer))
		rex_svc_close(ss->conn, true);
	return true;
}
/* [lent-step] */

/* --lend: one poll of the lent CQ, as perftest's server polls. An answer's
 * completion is ours, and a receive: a ping (lent_ping()), or a control
 * message, taken as the helper's callback would take it; the helper takes
 * anything else, and the CQ again once the connection is closing. */
static inline void lent_step(struct session *ss)
{
	struct ibv_wc wc;
	int n = rex_svc_conn_lent_poll_recvs(ss->conn, &wc);

	if (n == 0)
		return;
	if (n == 2) {
		if (!lent_ping(ss, &wc))
			session_recv(ss->conn, wc.wr_id, &wc);
		return;
	}
	if (n == -ENOTCONN) { /* closing: the lend is over */
		ss->lent = (struct rex_svc_lent){0};
		return;
	}
	if (n < 0) {
		fprintf(stderr, "server: %s: rex_svc_conn_lent_poll_recvs: %s\n",
		        rex_svc_conn_name(ss->conn), strerror(-n));
		rex_svc_close(ss->conn, true);
	} else if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("answer", &wc);
		rex_svc_close(ss->conn, true);
	} else {
		ss->lent_done++;
	}
}

/* A latency run, busy-polled: with --lend, its QP lent to us. */
static void lend_start(struct session *ss)
{
	int ret;

	if (!ss->server->lend || ss->hello.mode != BENCH_MODE_LAT)
		return;
	ss->lent_posted = ss->lent_done = 0;
	ss->ping_recv = (struct ibv_recv_wr){.sg_list = &ss->recv_sge, .num_sge = 1};
	ss->answer_sge = (struct ibv_sge){
	    .addr = (uintptr_t)ss->answer, .length = ss->size, .lkey = ss->buf->lkey};
	ss->ping_answer = (struct ibv_send_wr){.sg_list = &ss->answer_sge,
	                                       .num_sge = 1,
	                                       .opcode = IBV_WR_SEND,
	                                       .send_flags = IBV_SEND_SIGNALED};
	ret = rex_svc_conn_lend(ss->conn, &ss->lent);
	if (ret) {
		fprintf(stderr, "server: %s: rex_svc_conn_lend: %s\n", rex_svc_conn_name(ss->conn),
		        strerror(-ret));
		rex_svc_close(ss->conn, true);
	}
}

/* The run is over (or its client went quiet): its last answer's completion
 * taken (the client has had the answer, so its acknowledgement has come or
 * is coming), then the QP back. The lend is ours no more before the
 * helper's poll in rex_svc_conn_unlend() runs the callbacks: what they
 * post goes through the helper. */
void session_lend_end(struct session *ss)
{
	unsigned long spins = 0;

	while (ss->lent.qp && ss->lent_done < ss->lent_posted && ++spins < LEND_DRAIN_SPINS)
		lent_step(ss);
	if (!ss->lent.qp)
		return;
	ss->lent = (struct rex_svc_lent){0};
	if (ss->lent_done < ss->lent_posted) {
		fprintf(stderr, "server: %s: %" PRIu64 " answers not completed at the lend's end\n",
		        rex_svc_conn_name(ss->conn), ss->lent_posted - ss->lent_done);
		rex_svc_close(ss->conn, true);
		return;
	}
	rex_svc_conn_unlend(ss->conn);
}

/* [busy-cq] */
/* A busy-polled session's CQ is not armed: an armed CQ raises an event
 * for a completion we poll anyway, and the loop, looked at now and then,
 * would take the session's completions itself, answering pings inside
 * its look (whose receives wait for the next round to go back). */
void session_sync_busy(struct session *ss)
{
	if (ss->cq_busy == ss->busy)
		return;
	if (!ss->busy)
		session_lend_end(ss);
	ss->cq_busy = ss->busy;
	rex_svc_conn_set_busy(ss->conn, ss->busy); /* off: armed, and polled once */
	if (ss->busy)
		lend_start(ss);
	if (ss->done_pending) {
		ss->done_pending = false;
		if (run_done(ss))
			rex_svc_close(ss->conn, true);
	}
}
/* [busy-cq] */

/* --lend: an answer posted on the lent QP itself. */
static int lent_post(struct session *ss, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int ret;

	if (ss->lent_posted - ss->lent_done >= ss->lent.room)
		return -ENOBUFS; /* a ping-pong has one out: the client broke it */
	wr->wr_id = rex_svc_lent_wr_id((uint32_t)ss->echo);
	ret = ibv_post_send(ss->lent.qp, wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	ss->lent_posted++;
	return 0;
}

/* [answer-at] */
/* Where a session's latency answers come from: the first page boundary
 * past the client's largest message, if the buffer holds both (perftest's
 * layout: pings land in one half, answers leave from the other); else the
 * ping's own bytes, an echo, which cost 4 KiB pings about 5% on the lab's
 * VM (docs: part 3, what is left). */
uint8_t *session_answer_at(uint8_t *mem, uint32_t buf_size, uint32_t max_size)
{
	uint64_t off = ((uint64_t)max_size + ANSWER_ALIGN - 1) & ~(uint64_t)(ANSWER_ALIGN - 1);

	return off + max_size <= buf_size ? mem + off : mem;
}
/* [answer-at] */

/* [answer] */
/* Latency: answer a ping with the run's pattern (the client checks it
 * arrived), a WRITE's with the ping's tag in its last byte. */
static int answer(struct session *ss, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)ss->answer, .length = len, .lkey = ss->buf->lkey};
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .send_flags = IBV_SEND_SIGNALED,
	};

	if (ss->answer != ss->mem && ss->hello.op == BENCH_OP_WRITE)
		ss->answer[len - 1] = bench_tag(ss->echo); /* an echo carries it already */
	if (ss->hello.op == BENCH_OP_SEND) {
		wr.opcode = IBV_WR_SEND;
	} else {
		wr.opcode =
		    ss->hello.op == BENCH_OP_WRITE ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32(bench_ctrl_imm(BENCH_CTRL_DATA, 0));
		wr.wr.rdma.remote_addr = ss->hello.addr;
		wr.wr.rdma.rkey = ss->hello.rkey;
	}
	return post_answer(ss, &wr);
}
/* [answer] */

/* A latency answer posted: on the lent QP, or through the helper. */
static int post_answer(struct session *ss, struct ibv_send_wr *wr)
{
	int ret;

	ss->echo++;
	ret = ss->lent.qp ? lent_post(ss, wr) : rex_svc_post_send(ss->conn, wr);
	if (ret)
		fprintf(stderr, "server: %s: the answer of ping %" PRIu64 " not posted: %s\n",
		        rex_svc_conn_name(ss->conn), ss->echo, strerror(-ret));
	return ret;
}

/* [verify] */
/* DONE: check what the run left in our buffer, after the timed region. */
static uint32_t verify(struct session *ss)
{
	const struct bench_hello *h = &ss->hello;
	size_t len = ss->size, off;

	if (h->op == BENCH_OP_READ || bench_op_atomic(h->op))
		return BENCH_RESULT_NA; /* the client checks what it read, or the counter */
	if (h->op == BENCH_OP_WRITE && h->mode == BENCH_MODE_LAT)
		len--; /* the last byte is the ping's tag */
	off = bench_pattern_check(ss->mem, len, bench_seed(h->qp_index, ss->size, 0));
	if (off == len)
		return 0;
	fprintf(stderr, "server: %s: %s of %" PRIu32 " bytes: data differs at offset %zu\n",
	        rex_svc_conn_name(ss->conn), bench_op_name(h->op), ss->size, off);
	ss->bad_runs++;
	return 1 + (uint32_t)(off < BENCH_CTRL_VALUE_MAX - 2 ? off : BENCH_CTRL_VALUE_MAX - 2);
}
/* [verify] */

/* [cpu] */
/* The process's CPU in us from the run's START to now, for the CPU_*
 * messages; BENCH_CPU_UNKNOWN past 28 bits. With other clients served at
 * the same time, their work counts in it too. */
static uint32_t cpu_us(const struct timeval *t0, const struct timeval *t1)
{
	int64_t us = ((int64_t)t1->tv_sec - t0->tv_sec) * 1000000 + (t1->tv_usec - t0->tv_usec);

	return us < 0 || us >= BENCH_CPU_UNKNOWN ? BENCH_CPU_UNKNOWN : (uint32_t)us;
}

static int send_cpu(struct session *ss)
{
	const struct rusage *t0 = &ss->start_usage;
	struct rusage now;
	uint32_t user = BENCH_CPU_UNKNOWN, sys = BENCH_CPU_UNKNOWN;

	if (t0->ru_utime.tv_sec >= 0 && getrusage(RUSAGE_SELF, &now) == 0) {
		user = cpu_us(&t0->ru_utime, &now.ru_utime);
		sys = cpu_us(&t0->ru_stime, &now.ru_stime);
	}
	if (session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_CPU_USER, user)))
		return -EIO;
	return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_CPU_SYS, sys));
}
/* [cpu] */

/* After DONE: the server's CPU, and the run's result. */
static int run_done(struct session *ss)
{
	if (send_cpu(ss))
		return -EIO;
	return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_RESULT, verify(ss)));
}

/* [control] */
static int control(struct session *ss, uint32_t imm)
{
	const struct bench_hello *h = &ss->hello;
	uint32_t value = bench_ctrl_value(imm);

	switch (bench_ctrl_type(imm)) {
	case BENCH_CTRL_START:
		if (ss->active || ss->revoking || ss->revoked || value < 1 || value > h->max_size)
			break;
		ss->size = value;
		ss->echo = 0;
		/* Outside the timed region: the pattern a READ fetches, the
		 * byte a WRITE ping will change. */
		if (h->op == BENCH_OP_READ)
			bench_pattern_fill(ss->mem, value, bench_seed(h->qp_index, value, 1));
		else
			memset(ss->mem, 0, value);
		if (h->mode == BENCH_MODE_LAT && ss->answer != ss->mem)
			bench_pattern_fill(ss->answer, value, bench_seed(h->qp_index, value, 0));
		session_set_active(ss, true);
		if (getrusage(RUSAGE_SELF, &ss->start_usage))
			ss->start_usage.ru_utime.tv_sec = -1; /* known as not known */
		/* READY once the grant holds (its bind may still be under way). */
		if (!grant_ready(ss))
			return 0;
		return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_READY, 0));
	case BENCH_CTRL_DONE:
		if (!ss->active)
			break;
		session_set_active(ss, false);
		ss->runs++;
		ss->server->runs++;
		if (ss->lent.qp) { /* the helper sends nothing while lent */
			ss->done_pending = true;
			return 0;
		}
		return run_done(ss);
	case BENCH_CTRL_END:
		return grant_end(ss, BENCH_ENDED_ASKED);
	default:
		break;
	}
	fprintf(stderr, "server: %s: unexpected control message 0x%08" PRIx32 "%s\n",
	        rex_svc_conn_name(ss->conn), imm, ss->active ? " during a run" : "");
	return -EPROTO;
}
/* [control] */

/* [handle-completion] */
static int handle_recv(struct session *ss, const struct ibv_wc *wc)
{
	const struct bench_hello *h = &ss->hello;
	uint32_t imm = be32toh(wc->imm_data), rkey;
	bool data;

	if (rex_mw_wc_invalidated(&ss->mw, wc, &rkey)) { /* its SEND WITH INVALIDATE */
		if (wc->byte_len == 0)
			return grant_invalidated(ss, rkey);
		fprintf(stderr,
		        "server: %s: a SEND WITH INVALIDATE that carries %" PRIu32 " bytes\n",
		        rex_svc_conn_name(ss->conn), wc->byte_len);
		return -EPROTO;
	}
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		data = h->op == BENCH_OP_WRITE_IMM && bench_ctrl_type(imm) == BENCH_CTRL_DATA;
	else if (wc->wc_flags & IBV_WC_WITH_IMM)
		return control(ss, imm);
	else
		data = h->op == BENCH_OP_SEND && wc->byte_len == ss->size;
	if (!data || !ss->active) {
		fprintf(stderr, "server: %s: unexpected %s of %" PRIu32 " bytes%s\n",
		        rex_svc_conn_name(ss->conn),
		        wc->opcode == IBV_WC_RECV ? "SEND" : "WRITE WITH IMM", wc->byte_len,
		        ss->active ? "" : " outside a run");
		return -EPROTO;
	}
	ss->messages++;
	ss->server->messages++;
	return h->mode == BENCH_MODE_LAT ? answer(ss, ss->size) : 0;
}

int session_post_recvs(struct session *ss, uint32_t n)
{
	struct ibv_recv_wr wr[REPOST_CHAIN];
	uint32_t i, chain;
	int ret;

	for (; n; n -= chain) {
		chain = n < REPOST_CHAIN ? n : REPOST_CHAIN;
		for (i = 0; i < chain; i++)
			wr[i] = (struct ibv_recv_wr){
			    .next = i + 1 < chain ? &wr[i + 1] : NULL,
			    .sg_list = ss->hello.op == BENCH_OP_SEND ? &ss->recv_sge : NULL,
			    .num_sge = ss->hello.op == BENCH_OP_SEND,
			};
		ret = rex_svc_post_recv(ss->conn, wr);
		if (ret)
			return ret;
	}
	return 0;
}

/* The receives taken go back in chains: at once between runs, after each
 * round of busy-polling during one. */
static void repost(struct session *ss)
{
	int ret = ss->reposts ? session_post_recvs(ss, ss->reposts) : 0;

	ss->reposts = 0;
	if (ret && ret != -ENOTCONN) /* -ENOTCONN: it is closing anyway */
		rex_svc_close(ss->conn, true);
}

/* A session serves from its accept on (the helper delivers from then): the
 * client's first message may come before our ESTABLISHED event, and our
 * QP takes it. */
void session_recv(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc)
{
	struct session *ss = rex_svc_conn_user(c);

	ss->heard = true;
	if (ss->server->srq_recvs) {
		/* A shared receive queue's buffer (its address in wr_id), posted
		 * again by the helper: a SEND's bytes into ours, to verify. */
		if (wc->opcode == IBV_WC_RECV && wc->byte_len <= ss->hello.max_size)
			memcpy(ss->mem, (const void *)(uintptr_t)wr_id, wc->byte_len);
		if (handle_recv(ss, wc))
			rex_svc_close(c, true);
		return;
	}
	/* [repost-first] */
	/* A latency ping's receive goes back before its answer: the client's
	 * next ping can come as soon as the answer lands, and must find one. */
	ss->reposts++;
	if (!ss->busy || ss->reposts >= REPOST_CHAIN || ss->hello.mode == BENCH_MODE_LAT)
		repost(ss);
	if (handle_recv(ss, wc))
		rex_svc_close(c, true);
	/* [repost-first] */
}

void session_done(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc)
{
	(void)wr_id;
	if (grant_completion(rex_svc_conn_user(c), wc)) /* a bind or an invalidate */
		rex_svc_close(c, true);
}

/* Busy-polling: the session's completions now, and its receives back. */
static void session_poll(struct session *ss)
{
	if (ss->lent.qp)
		lent_step(ss);
	else
		rex_svc_conn_poll(ss->conn);
	repost(ss);
}
/* [handle-completion] */

/* [write-latency] */
/* WRITE latency, as perftest: the ping is seen by its last byte changing
 * in memory, not by a completion; the answer is a WRITE back. */
static bool session_poll_memory(struct session *ss)
{
	const volatile uint8_t *last = ss->mem + ss->size - 1;

	if (*last != bench_tag(ss->echo))
		return false;
	if (answer(ss, ss->size))
		rex_svc_close(ss->conn, true);
	return true;
}

/* A round of busy polling: the helper (completions, receives posted
 * again); for WRITE latency the byte first, and the helper only after an
 * answer (its completion taken, as perftest does) or every
 * SERVER_MEMORY_ROUNDS rounds. 1 when the helper was polled. */
unsigned session_round(struct session *ss, unsigned round)
{
	bool memory = ss->active && ss->hello.op == BENCH_OP_WRITE &&
	              ss->hello.mode == BENCH_MODE_LAT;
	bool poll = !memory || session_poll_memory(ss) || round % SERVER_MEMORY_ROUNDS == 0;

	if (poll)
		session_poll(ss);
	return poll;
}
/* [write-latency] */

int session_post_imm(struct session *ss, uint32_t imm)
{
	struct ibv_send_wr wr = {
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = htobe32(imm),
	};

	return rex_svc_post_send(ss->conn, &wr);
}
