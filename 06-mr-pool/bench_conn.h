/* SPDX-License-Identifier: MIT */
/*
 * bench_conn.h: a connection of the benchmark driven by chapter 05's event
 * loop (common/rex_loop.h): chapter 05's 05-async/conn.c, copied and cut to
 * what a benchmark needs. No message buffers of its own: the data lives in
 * a pool (common/rex_pool.h), one per device, and control messages are
 * zero-length SENDs WITH IMM (bench_wire.h), so receives need no memory.
 *
 * Its life is 05's: RESOLVING (client) -> CONNECTING -> ESTABLISHED ->
 * DRAINING -> CLOSED, every failure through DRAINING. What changes is how
 * DRAINING knows it is over. With selective signalling, a send work request
 * that succeeded unsignalled leaves no completion, so counting completions
 * cannot tell. Every send carries a sequence number in its wr_id instead,
 * and a completion with number s says that every send up to s is done. A
 * closing connection with sends unaccounted for posts one signalled marker
 * on its stopped QP: its flushed completion comes after all the others
 * (the kernel's ib_drain_sq() does the same).
 */
#ifndef BENCH_CONN_H
#define BENCH_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_cm.h"
#include "rex_loop.h"
#include "rex_pool.h"

#define BC_SETUP_TIMEOUT_MS   15000 /* resolve + connect, or request to ESTABLISHED */
#define BC_DRAIN_TIMEOUT_MS   3000  /* start of a close to the last flushed completion */
#define BC_RESOLVE_TIMEOUT_MS 2000  /* address and route resolution, each */
#define BC_WC_BATCH           32    /* completions taken from a CQ at once */
#define BC_CM_BUDGET          32    /* CM events handled in one round of the loop */

/* What a wr_id says: the kind in the top byte, a sequence number below. */
enum bc_wr_kind {
	BC_WR_RECV = 1,   /* a receive */
	BC_WR_SEND = 2,   /* a send of any kind: low 56 bits its sequence number */
	BC_WR_MARKER = 3, /* the drain marker */
};
static inline uint64_t bc_wr_id(enum bc_wr_kind kind, uint64_t seq)
{
	return (uint64_t)kind << 56 | (seq & ((1ull << 56) - 1));
}
static inline unsigned bc_wr_kind(uint64_t wr_id)
{
	return (unsigned)(wr_id >> 56);
}
static inline uint64_t bc_wr_seq(uint64_t wr_id)
{
	return wr_id & ((1ull << 56) - 1);
}

/* One RDMA device: its PD, completion channel, events, and the pool. */
struct bc_device {
	struct ibv_context *verbs;
	const char *who;
	struct ibv_device_attr attr;
	struct ibv_pd *pd;
	struct ibv_comp_channel *comp_channel;
	bool watching_channel, watching_async;
	struct rex_pool *pool; /* made by the side, released here */
	struct bc_conn *conns;
	struct bc_device *next;
};

struct bc_devices {
	struct bc_device *first;
	struct rex_loop *loop;
	const char *who;
};

struct bc_conn {
	const char *who;
	char name[32 + REX_CM_ADDRESS_LEN];
	enum rex_state state;
	struct rex_loop *loop;
	struct rdma_cm_id *id;
	struct bc_device *dev;
	struct bc_conn *dev_prev, *dev_next;

	struct rex_loop_cq lcq;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct rex_pool_buf *buf; /* its pool buffer, or NULL */
	struct rex_pool *pool;    /* the pool it came from */

	uint64_t sq_posted;     /* sequence number of the last send posted */
	uint64_t sq_done;       /* every send up to this one has completed */
	uint32_t recvs_posted;  /* receives posted and not completed */
	bool await_disconnect;  /* we sent a disconnect request */
	bool cq_dead;           /* nothing more will come out of the CQ */
	bool failed, drain_cut; /* ended by a failure; released before drained */
	struct rex_loop_timer deadline;
	struct rex_loop_task release;
	void (*released)(struct bc_conn *conn);
};

void bc_conn_init(struct bc_conn *c, struct rex_loop *loop, const char *who, struct rdma_cm_id *id,
                  enum rex_state state, void (*released)(struct bc_conn *));
/* The next CM event without blocking: 1 with one, 0 none, or -errno (printed). */
int bc_cm_next(struct rdma_event_channel *channel, struct rex_cm_event *out);
/* The device of \p verbs, set up on first use (PD, channel, async events). */
struct bc_device *bc_device_get(struct bc_devices *devs, struct ibv_context *verbs);
/* Release every device, its pool first. 0 or the first negative errno. */
int bc_devices_release(struct bc_devices *devs);
/* CQ (woken through the device's channel, polled by \p poll) and QP. */
int bc_conn_create_queues(struct bc_conn *c, struct bc_device *dev, uint32_t sends, uint32_t recvs,
                          uint32_t max_inline, rex_loop_cq_fn poll);
/* Post \p n receives, with the SGE \p sge (NULL: zero-length receives). */
int bc_conn_post_recvs(struct bc_conn *c, const struct ibv_sge *sge, unsigned n);
/* Post a signalled zero-length SEND WITH IMM (a control message). */
int bc_conn_post_ctrl(struct bc_conn *c, uint32_t imm);
/* Post a chain of sends (already numbered with bc_conn_number()). */
int bc_conn_post_chain(struct bc_conn *c, struct ibv_send_wr *first);
/* The next send's wr_id (sq_posted + 1), counted as posted. */
static inline uint64_t bc_conn_number(struct bc_conn *c)
{
	return bc_wr_id(BC_WR_SEND, ++c->sq_posted);
}
/* Take up to \p max completions and keep the books. Returns how many good
 * ones, moved to the front of \p wc, the side has to act on; \p taken is how
 * many came (poll again while it is \p max). A failed one is reported and
 * closes the connection; flushes of a closing connection are expected. */
int bc_conn_poll(struct bc_conn *c, struct ibv_wc *wc, int max, int *taken);
int bc_conn_set_state(struct bc_conn *c, enum rex_state to);
int bc_conn_established(struct bc_conn *c);
void bc_conn_close(struct bc_conn *c, bool failed);
void bc_conn_take_completions(struct bc_conn *c);
void bc_conn_disconnected(struct bc_conn *c);
void bc_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg);

#endif /* BENCH_CONN_H */
