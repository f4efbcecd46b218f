/* SPDX-License-Identifier: MIT */
/*
 * fake_priv.h: what the files of fuzz_aconn's fake share, and only they:
 * fake_verbs.c (libibverbs: the device, its PDs, CQs, QPs and channels),
 * fake_cm.c (librdmacm: CM ids, the CM channel and its events, the rdma_*
 * calls, the peer) and fake_core.c (the state of an input, the helpers
 * both use, the virtual clock). The fuzzer's side of the fake is
 * fake_verbs.h.
 */
#ifndef FAKE_PRIV_H
#define FAKE_PRIV_H

#include "fake_verbs.h"

#define NDEVS   3   /* devices: one more each time the current one is lost */
#define NIDS    16  /* CM ids at once */
#define NCQS    16  /* CQs at once */
#define NCHANS  8   /* completion channels at once */
#define NWRS    128 /* work requests one QP takes in one input */
#define NCQES   64  /* completions a CQ holds */
#define NASYNC  16  /* asynchronous events queued per device */
#define NSRQS   3   /* shared receive queues at once */
#define MAX_CQE 64  /* the device's limits, small: */
#define MAX_WR  16  /* queues past them are refused */

/* Where a CM id is in its exchange with the peer. */
enum cm {
	CM_IDLE,
	CM_ADDR_Q,
	CM_ADDR_OK,
	CM_ROUTE_Q,
	CM_ROUTE_OK,
	CM_CONN_SENT, /* client: REQ sent */
	CM_REQ_RCVD,  /* server: a connect request, not answered */
	CM_ACCEPTED,  /* server: REP sent */
	CM_CONNECTED,
	CM_DISC_SENT, /* our DREQ is out */
	CM_DREQ_RCVD, /* the peer's DREQ came */
	CM_TIMEWAIT,
	CM_DONE,
	CM_FAILED,
	CM_LISTEN,
};

struct fdev {
	struct ibv_context ctx; /* first: the helper's pointer */
	struct ibv_device device;
	bool dead, async_broken;
	struct ibv_async_event async[NASYNC];
	unsigned nasync;
};

struct fcq;

struct fchan {
	struct ibv_comp_channel ch;
	struct fcq *q[NCQS]; /* CQs with an event queued, in order */
	unsigned n, cqs;
	bool broken;
};

struct fid;
struct fpd;

/* A shared receive queue: its receives' wr_ids, head first. */
struct fsrq {
	struct ibv_srq srq;
	struct fdev *dev;
	uint64_t q[NWRS];
	unsigned head, n, qps, async_unacked;
};

struct fwr {
	uint64_t wr_id;
	bool signaled;
};

struct fqp {
	struct ibv_qp qp;
	struct fid *id;
	struct fcq *cq;
	struct ibv_pd *pd;
	struct fdev *dev;
	enum ibv_qp_state st; /* INIT, RTS or ERR */
	unsigned cap_s, cap_r, async_unacked;
	struct fwr sq[NWRS], rq[NWRS];
	/* Posted, executed, and polled (a send's slot is free once a
	 * completion at or after it was polled; a receive's when its own was). */
	unsigned sq_n, sq_exec, sq_done, rq_n, rq_exec, rq_polled;
	bool marker_refused, marker_full; /* see fake_books */
	/* On a shared receive queue: its receives taken and not polled (the
	 * peer, keeping to its credits, sends no more than its CQ has room
	 * for); a receive begun (a message of several packets), and its wr_id. */
	struct fsrq *srq;
	unsigned srq_unpolled, srq_room;
	bool inprog;
	uint64_t inprog_id;
};

struct fcqe {
	struct ibv_wc wc;
	struct fqp *qp; /* NULL once destroyed (FAKE_CQ_KEEPS) */
	bool recv, srq;
	unsigned idx;
};

struct fcq {
	struct ibv_cq cq;
	struct fchan *chan;
	struct fdev *dev;
	struct fcqe q[NCQES];
	unsigned head, n, qps, events, acked, async_unacked;
	bool armed, queued, dead;
};

struct fpd {
	struct ibv_pd pd;
	unsigned users;
};

struct fid {
	struct rdma_cm_id id;
	struct fdev *dev; /* bound to, once known */
	struct fid *listener;
	enum cm cm;
	bool visible, active, peer_gone, removal;
	bool removal_taken; /* its DEVICE_REMOVAL was handed to the program */
	unsigned unacked;
};

struct echan; /* the CM event channel: fake_cm.c's */

/* One input's state, reset by fake_begin(): libFuzzer runs every input in
 * one process. Defined in fake_core.c. */
struct fake_state {
	unsigned options;
	bool quiet;
	uint64_t now, tick;
	int timerfd;
	bool timer_armed;
	uint64_t timer_at;
	bool fail[FAKE_CALLS];
	struct fdev *devs[NDEVS];
	struct fid *ids[NIDS];
	struct fcq *cqs[NCQS];
	struct fqp *qps[NCQS];
	struct fsrq *srqs[NSRQS];
	struct fchan *chans[NCHANS];
	struct echan *echan;
	struct fake_grave graves[4];
	unsigned pds, events, lists, successes, qp_nums;
};

extern struct fake_state F;

/* A breach of the verbs rules: a line saying which, and abort(). */
void fake_die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Whether \p call is to fail this time (fake_fail_next()), once. */
bool fake_failing(enum fake_call call);
/* Make an eventfd readable exactly when \p ready: what epoll sees. */
void fake_level(int fd, bool ready);
/* A new eventfd, not readable. */
int fake_new_fd(void);
/* The slot of \p p among the \p n of \p arr, or -1. */
int fake_slot_of(void *const *arr, unsigned n, const void *p);
/* \p p is among the \p n live objects of \p arr, or this is a use after
 * destroy (or of something never made). */
void fake_live(void *const *arr, unsigned n, const void *p, const char *what);
#define LIVE(arr, n, p, what) fake_live((void *const *)(arr), (n), (p), (what))
/* The first device not lost, or NULL. */
struct fdev *fake_current_dev(void);
/* The devices still there, as ibv_device or ibv_context pointers in a list
 * ending with NULL, counted in F.lists until freed. */
void **fake_listed(int *num, bool contexts);
/* \p q enters the error state; a device that flushes at once (no
 * FAKE_CQ_KEEPS) hands back the shared queue's receive it had begun. */
void fake_qp_error(struct fqp *q);
/* The shared queue's receive \p q had begun, flushed into its CQ. */
void fake_flush_begun(struct fqp *q);
/* The kernel drops a destroyed object's asynchronous events not yet read. */
void fake_drop_async(struct fdev *d, const void *qp, const void *cq);

#endif /* FAKE_PRIV_H */
