/* SPDX-License-Identifier: MIT */
/*
 * server_grant.c: what a session's rkey opens in 06's server (see
 * server.h), and for how long.
 *
 * With -g window (the default) the pool grants nothing remote by itself:
 * each session gets a type 2 memory window (common/rex_mw.h) over exactly
 * its buffer's first max_size bytes (8 for atomics), with exactly the right
 * its operation needs, tied to its QP. The grant ends by the client's END
 * (we post a local invalidate), by its SEND WITH INVALIDATE (its own QP's
 * responder revokes it), by its lease running out (-L: a local invalidate
 * again), or, for a session that fails, by freeing the window before the
 * QP goes. Only then does the buffer go back to the pool.
 *
 * With -g pool every session gets the pool region's rkey: every buffer of
 * every session, for as long as the server runs. It is there to measure
 * what the windows cost, and to show what they prevent.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>

#include "server.h"

/* [grant-access] */
int grant_pool_access(unsigned ops, unsigned grant)
{
	int access = 0;

	if (grant == BENCH_GRANT_WINDOW) {
		/* The InfiniBand specification (compliance statement C10-74):
		 * a window granting remote write or atomic needs local write on
		 * its region; receives land in it for SEND too. */
		if (ops & (1u << BENCH_OP_SEND | 1u << BENCH_OP_WRITE | 1u << BENCH_OP_WRITE_IMM |
		           1u << BENCH_OP_FADD | 1u << BENCH_OP_CAS))
			access |= IBV_ACCESS_LOCAL_WRITE;
		return access | IBV_ACCESS_MW_BIND;
	}
	/* The pool's own rkey: the rights of every op served, on every buffer. */
	if (ops & (1u << BENCH_OP_SEND))
		access |= IBV_ACCESS_LOCAL_WRITE; /* receives land in it */
	if (ops & (1u << BENCH_OP_WRITE | 1u << BENCH_OP_WRITE_IMM))
		access |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (ops & (1u << BENCH_OP_READ))
		access |= IBV_ACCESS_REMOTE_READ;
	/* An atomic writes the counter it returns: local write comes with it. */
	if (ops & (1u << BENCH_OP_FADD | 1u << BENCH_OP_CAS))
		access |= IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC;
	return access;
}
/* [grant-access] */

static const char *right_name(unsigned access)
{
	return access == IBV_ACCESS_REMOTE_WRITE  ? "remote write only"
	       : access == IBV_ACCESS_REMOTE_READ ? "remote read only"
	                                          : "remote atomic only";
}

/* A local invalidate: the device revokes the key when it reaches this work
 * request; ENDED(why) goes when it has completed (grant_completion()). */
static int revoke(struct session *ss, uint32_t why)
{
	struct ibv_send_wr wr;

	rex_mw_invalidate_wr(&ss->mw, &wr);
	ss->revoking = true;
	ss->end_why = why;
	return rex_svc_post_send(ss->conn, &wr);
}

/* The lease ran out: revoke, in the middle of a run or not. */
static void lease_ran_out(struct rex_loop *loop, void *arg)
{
	struct session *ss = arg;
	int ret;

	(void)loop;
	if (!ss->granted || ss->revoking || ss->revoked)
		return;
	printf("server: %s: lease of %" PRIu32 " ms ran out: revoking rkey 0x%08" PRIx32 "\n",
	       rex_svc_conn_name(ss->conn), ss->server->lease_ms, ss->mw.rkey);
	ret = revoke(ss, BENCH_ENDED_LEASE);
	if (ret && ret != -ENOTCONN) /* -ENOTCONN: closing, the window goes with it */
		rex_svc_close(ss->conn, true);
}

int grant_prepare(struct session *ss, struct ibv_pd *pd, struct rex_pool *pool,
                  struct bench_accept *acc)
{
	const struct bench_hello *h = &ss->hello;
	unsigned access = h->op == BENCH_OP_READ   ? IBV_ACCESS_REMOTE_READ
	                  : bench_op_atomic(h->op) ? IBV_ACCESS_REMOTE_ATOMIC
	                                           : IBV_ACCESS_REMOTE_WRITE;
	int ret;

	rex_loop_timer_init(&ss->lease, lease_ran_out, ss);
	acc->addr = (uintptr_t)ss->mem;
	acc->length = h->max_size;
	ss->grant = h->op == BENCH_OP_SEND ? BENCH_GRANT_NONE : ss->server->grant;
	acc->grant = ss->grant;
	if (ss->grant == BENCH_GRANT_POOL) {
		acc->rkey = ss->buf->rkey; /* the region's: every buffer */
		acc->length = ss->server->max_size;
		ss->granted = true;
		if (ss->server->verbose)
			fprintf(stderr,
			        "server: %s: pool rkey 0x%08" PRIx32 " over 0x%" PRIx64 ", %" PRIu32
			        " bytes, and every other buffer of the pool\n",
			        rex_svc_conn_name(ss->conn), acc->rkey, acc->addr, acc->length);
		return 0;
	}
	if (ss->grant == BENCH_GRANT_NONE) {
		acc->rkey = 0;
		ss->granted = true;
		return 0;
	}
	/* [grant-prepare] */
	ret = rex_mw_create(&ss->mw, pd);
	if (ret)
		return ret;
	/* Exactly this session's bytes, exactly its right; the key is known
	 * now, and opens the window once the bind (posted after the accept,
	 * when the QP can send) has completed. */
	acc->rkey =
	    rex_mw_bind_wr(&ss->mw, rex_pool_mr(pool), ss->mem, h->max_size, access, &ss->bind_wr);
	acc->lease_ms = ss->server->lease_ms;
	if (ss->server->verbose)
		fprintf(stderr,
		        "server: %s: window rkey 0x%08" PRIx32 " over 0x%" PRIx64 ", %" PRIu32
		        " bytes, %s\n",
		        rex_svc_conn_name(ss->conn), acc->rkey, acc->addr, acc->length,
		        right_name(access));
	return 0;
}
/* [grant-prepare] */

int grant_post(struct session *ss)
{
	return ss->grant == BENCH_GRANT_WINDOW ? rex_svc_post_send(ss->conn, &ss->bind_wr) : 0;
}

bool grant_ready(struct session *ss)
{
	if (!ss->granted)
		ss->ready_pending = true;
	return ss->granted;
}

/* [grant-completion] */
int grant_completion(struct session *ss, const struct ibv_wc *wc)
{
	uint32_t why;

	if (wc->opcode == IBV_WC_BIND_MW) {
		ss->granted = true;
		if (ss->server->lease_ms &&
		    rex_loop_timer_start(ss->server->loop, &ss->lease, ss->server->lease_ms))
			return -EIO;
		if (!ss->ready_pending)
			return 0;
		ss->ready_pending = false;
		return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_READY, 0));
	}
	if (wc->opcode != IBV_WC_LOCAL_INV)
		return 0;
	/* The window is revoked: from here on its key opens nothing. */
	ss->revoking = false;
	ss->revoked = true;
	rex_loop_timer_cancel(ss->server->loop, &ss->lease);
	why = ss->end_why;
	return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_ENDED, why));
}
/* [grant-completion] */

/* [grant-end] */
int grant_end(struct session *ss, uint32_t why)
{
	/* Its lease ended it first: ENDED has gone already, or goes when the
	 * invalidate completes. */
	if ((ss->revoked || ss->revoking) && ss->end_why == BENCH_ENDED_LEASE && !ss->end_asked) {
		ss->end_asked = true;
		return 0;
	}
	if (ss->revoking || ss->revoked || ss->active) {
		fprintf(stderr, "server: %s: END %s\n", rex_svc_conn_name(ss->conn),
		        ss->active ? "in the middle of a run" : "twice");
		return -EPROTO;
	}
	if (ss->grant != BENCH_GRANT_WINDOW) {
		ss->revoked = true; /* nothing of its own to revoke */
		ss->end_why = why;
		return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_ENDED, why));
	}
	if (!ss->granted) {
		fprintf(stderr, "server: %s: END before its grant was made\n",
		        rex_svc_conn_name(ss->conn));
		return -EPROTO;
	}
	return revoke(ss, why);
}
/* [grant-end] */

/* [grant-invalidated] */
int grant_invalidated(struct session *ss, uint32_t rkey)
{
	if (ss->grant != BENCH_GRANT_WINDOW || rkey != ss->mw.rkey) {
		/* Another key: the device revoked something that was not this
		 * client's to revoke (by its source, Soft-RoCE lets a SEND WITH
		 * INVALIDATE name any window of the device; not tried). */
		fprintf(stderr,
		        "server: %s: a SEND WITH INVALIDATE of rkey 0x%08" PRIx32
		        ", which is not its grant\n",
		        rex_svc_conn_name(ss->conn), rkey);
		return -EPROTO;
	}
	if (ss->revoking || ss->revoked || ss->active) {
		fprintf(stderr, "server: %s: SEND WITH INVALIDATE %s\n",
		        rex_svc_conn_name(ss->conn),
		        ss->active ? "in the middle of a run" : "after its grant ended");
		return -EPROTO;
	}
	ss->revoked = true;
	ss->end_why = BENCH_ENDED_ASKED;
	rex_loop_timer_cancel(ss->server->loop, &ss->lease);
	return session_post_imm(ss, bench_ctrl_imm(BENCH_CTRL_ENDED, BENCH_ENDED_ASKED));
}
/* [grant-invalidated] */

void grant_release(struct session *ss)
{
	rex_loop_timer_cancel(ss->server->loop, &ss->lease);
	rex_mw_destroy(&ss->mw); /* revokes whatever it still grants */
}
