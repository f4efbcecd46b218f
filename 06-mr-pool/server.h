/* SPDX-License-Identifier: MIT */
/*
 * server.h: what the files of 06's server share: a session (one client's
 * connection, with its buffer from the pool and its run), the server, the
 * session's benchmark work (server_run.c) and its grant (server_grant.c),
 * which server.c calls. server.c is the service on common/rex_svc.h:
 * connect requests, the sessions' lives, the loop.
 */
#ifndef BENCH_SERVER_H
#define BENCH_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "bench_wire.h"
#include "rex_loop.h"
#include "rex_mw.h"
#include "rex_pool.h"
#include "rex_svc.h"

struct server;

struct session {
	struct rex_svc_conn *conn; /* made by the helper; this session is its user */
	struct server *server;
	struct bench_hello hello;
	struct rex_pool *pool;    /* its device's */
	struct rex_pool_buf *buf; /* its buffer from the pool, until it is released */
	uint8_t *mem;             /* buf->addr */
	/* Latency answers: from the buffer's second half, past the pings, when
	 * the client's messages leave room for it (perftest's layout); else
	 * from mem, an echo of the ping's own bytes (session_answer_at()). */
	uint8_t *answer;
	struct ibv_sge recv_sge; /* SEND: receives land in the buffer */
	uint32_t recv_depth;
	uint32_t reposts; /* receives taken, to post again in one chain */
	bool active;  /* between START and DONE */
	bool busy;    /* and the server busy-polls it */
	bool cq_busy; /* the helper told so: no completion events (session_sync_busy()) */
	uint32_t size;
	uint64_t echo; /* latency answers in this run */
	/* --lend: a latency run's QP and CQ, lent by the helper (its answers
	 * posted and polled with the verbs alone, as perftest's server does). */
	struct rex_svc_lent lent;
	uint64_t lent_posted, lent_done; /* answers posted on it, and completed */
	/* A SEND ping's receive and answer, made at the lend (lent_ping()). */
	struct ibv_recv_wr ping_recv;
	struct ibv_sge answer_sge;
	struct ibv_send_wr ping_answer;
	bool done_pending;   /* DONE came while lent: answered once it is back */
	struct rusage start_usage; /* the process's CPU at the run's START */
	/* The session's grant (server_grant.c). */
	unsigned grant;             /* enum bench_grant */
	struct rex_mw mw;           /* BENCH_GRANT_WINDOW: its window over the buffer */
	struct ibv_send_wr bind_wr; /* its bind, made before the accept, posted after */
	bool granted;               /* the bind completed: the rkey opens the window */
	bool ready_pending;         /* a START came before that: READY waits for it */
	bool revoking, revoked;     /* an invalidate posted; the grant is gone */
	bool end_asked;             /* an END came after its lease had ended it */
	uint32_t end_why;           /* ENDED's value once the invalidate completes */
	struct rex_loop_timer lease;
	/* Liveness (server.c): probes while the client is quiet. */
	struct rex_loop_timer probe;
	bool heard;       /* a message of the client's since the last probe */
	unsigned unheard; /* probes in a row that found it quiet */
	uint64_t messages, runs, bad_runs;
	struct session *prev, *next;
};

struct server {
	const char *addr;
	uint16_t port;
	uint32_t max_size;
	unsigned ops;
	unsigned grant;    /* -g: BENCH_GRANT_WINDOW (default) or BENCH_GRANT_POOL */
	uint32_t lease_ms; /* -L: a window is revoked this long after its bind; 0: never */
	uint32_t srq_recvs; /* -S: receives of one shared receive queue; 0: each session its own */
	bool verbose;
	bool lend; /* --lend: latency answers on the lent QP (perftest's way) */
	struct rex_loop *loop;
	struct rex_svc *svc;
	struct session *sessions;
	unsigned active;      /* sessions busy-polled (set_active()) */
	bool busy_changed;    /* a session's busy changed: tell the helper (sync_busy()) */
	unsigned long failed; /* sessions that failed: the helper's say, or ours */
	uint64_t messages, runs;
	bool stopping, stopped;
};

/* A run is on (START to DONE), or over: busy-poll it or not. */
void session_set_active(struct session *ss, bool active);
/* Tell the helper which sessions' CQs are busy-polled; from the loop, not
 * from inside a callback (turning it off polls the CQ). */
void session_sync_busy(struct session *ss);

/* --lend: the run's lend over (its answers' completions taken first). */
void session_lend_end(struct session *ss);

/* Post \p n receives: zero-length ones for control messages and WRITE
 * WITH IMM, the buffer itself for SEND. */
int session_post_recvs(struct session *ss, uint32_t n);

/* Where latency answers leave from in a buffer of \p buf_size bytes for
 * messages up to \p max_size: its second half when it holds both, else
 * \p mem itself (an echo). */
uint8_t *session_answer_at(uint8_t *mem, uint32_t buf_size, uint32_t max_size);

/* The helper's callbacks for a session's completions: a receive (control
 * messages, data, latency pings; posted again in chains), a signalled send
 * (a bind, an invalidate; the others need nothing). */
void session_recv(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc);
void session_done(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc);

/* A round of busy polling: the helper, and for WRITE latency the ping's
 * byte in memory (the helper then every few rounds). 1: it polled the
 * helper. */
unsigned session_round(struct session *ss, unsigned round);

/* server_grant.c: what a session's rkey opens, for how long, and its end. */

/* The pool's access: with windows, nothing remote (MW_BIND, and local
 * write where a window will grant write or atomic, or receives land). */
int grant_pool_access(unsigned ops, unsigned grant);
/* At the connect request: what the session's rkey will be, in \p acc (rkey,
 * length, lease, grant); a window is allocated and its bind made ready
 * (grant_release() frees it, posted or not). */
int grant_prepare(struct session *ss, struct ibv_pd *pd, struct rex_pool *pool,
                  struct bench_accept *acc);
/* After the accept: post the bind. */
int grant_post(struct session *ss);
/* Whether READY may go now (the bind has completed); if not, it goes when
 * the bind does. */
bool grant_ready(struct session *ss);
/* A send of ours completed: a bind, or an invalidate. */
int grant_completion(struct session *ss, const struct ibv_wc *wc);
/* The client's END: revoke (a local invalidate), then ENDED. */
int grant_end(struct session *ss, uint32_t why);
/* The client's SEND WITH INVALIDATE of \p rkey: the device revoked it. */
int grant_invalidated(struct session *ss, uint32_t rkey);
/* Before the QP goes: the window (whatever its state) and the lease timer.
 * Twice is harmless. */
void grant_release(struct session *ss);

/* A control message: an immediate and no bytes. */
int session_post_imm(struct session *ss, uint32_t imm);

/* With -S, each of the shared receive queue's buffers: a SEND of this
 * size at most (part 5, docs/06-mr-pool-srq.md). */
#define SERVER_SRQ_BUF_SIZE 4096u
/* -S: the RNR wait the server asks of its senders, IB encoding (28: 163.84 ms). */
#define SERVER_SRQ_RNR_TIMER 28

#endif /* BENCH_SERVER_H */
