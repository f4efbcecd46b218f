/* SPDX-License-Identifier: MIT */
/*
 * fake_verbs.h: a fake libibverbs and librdmacm for fuzz_aconn.c, with a
 * virtual clock. fake_verbs.c (libibverbs), fake_cm.c (librdmacm) and
 * fake_core.c (the clock, and what both share) define the library
 * functions rex_aconn calls (so the real libraries are never linked), keep
 * books of every object and work request, and play the peer, the network
 * and the device: they deliver only what the kernel and an InfiniBand or
 * RoCE device could deliver, in an order the fuzzer picks. A breach of the
 * verbs rules (an object used after it was destroyed, destroyed twice or in
 * the wrong order, a destroy that would block for ever) aborts with a line
 * saying which.
 */
#ifndef FAKE_VERBS_H
#define FAKE_VERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <sys/timerfd.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* Calls the fuzzer can make fail, once each time it asks. */
enum fake_call {
	FAKE_CREATE_CQ,
	FAKE_CREATE_QP,
	FAKE_MODIFY_QP,
	FAKE_POST_SEND,
	FAKE_POST_RECV,
	FAKE_NOTIFY_CQ,
	FAKE_POLL_CQ,
	FAKE_DISCONNECT,
	FAKE_ACCEPT,
	FAKE_CONNECT,
	FAKE_RESOLVE_ADDR,
	FAKE_RESOLVE_ROUTE,
	FAKE_SET_OPTION,
	FAKE_ALLOC_PD,
	FAKE_COMP_CHANNEL,
	FAKE_QUERY_DEVICE,
	FAKE_GET_CM_EVENT,
	FAKE_GET_CQ_EVENT,
	FAKE_GET_ASYNC_EVENT,
	FAKE_CALLS
};

/* Options of one input, for fake_begin(). */
#define FAKE_EAGER_ARM   0x1 /* arming a CQ that holds completions raises an event at once */
#define FAKE_FLUSH_QUIET 0x2 /* a flushed unsignalled send gives no completion (mlx5) */
/* A shared receive queue's receive a QP had begun to fill comes back
 * flushed when the QP is next moved along, or at its destruction, and a
 * destroyed QP's completions stay in its CQ (rxe); without it the flush
 * comes as the QP enters the error state, and the driver cleans a
 * destroyed QP's completions out of its CQ (mlx5). */
#define FAKE_CQ_KEEPS 0x10

/* What fake_qp_books() reports of a QP: the fake's own count. A drain
 * marker is refused either for a reason of the fake (a failure the fuzzer
 * asked for, the fake's bound of work requests per input): marker_refused;
 * or because the send queue was full: marker_full, which a program that
 * kept within the depth it asked for never sees (the QP has a slot more). */
struct fake_books {
	uint64_t sends;      /* sends posted, the drain's marker included */
	uint64_t sends_done; /* the highest send number whose completion was polled */
	uint32_t recvs;      /* receives posted and not polled */
	bool marker_refused; /* a drain marker was refused: the fake's doing */
	bool marker_full;    /* a drain marker was refused: the send queue was full */
	unsigned successes;  /* successful completions (no marker) the last poll returned */
	unsigned cap_sends, cap_recvs; /* the QP's depths, as asked of rdma_create_qp() */
	int cqe;                       /* its CQ's entries, as asked of ibv_create_cq() */
};

/* What was left when a QP was destroyed, by its qp_context. */
struct fake_grave {
	const void *ctx;
	unsigned outstanding; /* work requests neither polled nor covered by a later send */
	bool was_err;         /* the QP was in the error state */
	bool marker_refused, marker_full; /* as in fake_books */
};

/* A new input: devices, the clock at 1 s, nothing else. */
void fake_begin(unsigned options);
/* The input is over: abort unless every object was destroyed exactly once. */
void fake_end(void);
/* Quiet (the helper's lines go nowhere) unless FUZZ_ACONN_VERBOSE is set. */
void fake_set_quiet(bool quiet);

void fake_fail_next(enum fake_call call);
/* Time passes: \p ms of the virtual clock; \p tick_ns more at every reading. */
void fake_advance_ms(unsigned ms);
void fake_set_tick(uint64_t tick_ns);

/* The network and the peer. */
void fake_cm_event(unsigned id_pick, unsigned what);
/* A client knocks at the listener, with two bytes of private data. */
void fake_connect_request(uint16_t pdata);
/* What the QP does next: the head of its send (or receive) queue completes,
 * as \p outcome says and as its state allows. */
void fake_progress(struct ibv_qp *qp, bool recv, unsigned outcome);
/* Every QP in the error state flushes what it holds; every disconnect we
 * sent is answered. The end of an input, where the peer is well behaved. */
void fake_settle(void);
/* An asynchronous event: 0 QP fatal, 1 CQ error, 2 port error, 3 COMM_EST,
 * 4 LID change, 5 its shared receive queue's limit (if it has one), for
 * the QP (and its CQ) \p qp. */
void fake_async(struct ibv_qp *qp, unsigned what);
/* The current device goes: \p how 0 DEVICE_FATAL, 1 its async fd fails,
 * 2 its completion channel fails, 3 removed with no word at all. */
void fake_device_lost(unsigned how);
/* The next read of the CM channel fails (EIO) even with nothing queued. */
void fake_break_cm_channel(void);

/* The virtual clock, the timerfd, and stderr, as the helper's files see them. */
int fuzz_clock_gettime(clockid_t clock, struct timespec *ts);
int fuzz_timerfd_create(int clock, int flags);
int fuzz_timerfd_settime(int fd, int flags, const struct itimerspec *its, struct itimerspec *old);
ssize_t fuzz_write(int fd, const void *buf, size_t len);
int fuzz_fprintf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The books of \p qp (NULL: false). */
bool fake_qp_books(struct ibv_qp *qp, struct fake_books *b);
/* The record of a destroyed QP whose qp_context was \p ctx: taken out. */
bool fake_grave_take(const void *ctx, struct fake_grave *g);
/* Live CM ids and QPs whose context is \p ctx. */
unsigned fake_objects_of(const void *ctx);
/* Receives posted in the shared receive queue \p srq and not taken (live). */
unsigned fake_srq_posted(struct ibv_srq *srq);
/* Whether \p srq's device was lost (live). */
bool fake_srq_dead(struct ibv_srq *srq);
/* Whether rdma_get_cm_event() handed out a DEVICE_REMOVAL for \p id (live). */
bool fake_removal_taken(struct rdma_cm_id *id);

#endif /* FAKE_VERBS_H */
