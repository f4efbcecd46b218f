/* SPDX-License-Identifier: MIT */
/**
 * \file rex_srq.h
 * \brief A shared receive queue fed from a memory pool: one queue of
 *        receives that every QP attached to it takes from, refilled from a
 *        rex_pool, with the device's limit event as the low-water mark.
 *
 * Without it each QP has a receive queue of its own, and a server posts a
 * connection's worth of receives, and registers their memory, for every
 * connection, busy or idle. With it the receives are the server's: one
 * queue, one pool, one registration, shared by every QP of the device that
 * names the SRQ when it is created (ibv_qp_init_attr::srq). A message takes
 * whichever receive is at the head; its completion goes to the CQ of the QP
 * it came on (wc.qp_num says which), and wc.wr_id names the pool buffer:
 *
 *     struct rex_srq_attr attr = {.depth = 256, .low_water = 64};
 *     struct rex_srq *srq = rex_srq_create(pd, pool, &attr);  256 receives posted
 *     qp_attr.srq = rex_srq_ibv(srq);                          every QP
 *     ... a receive completion wc:
 *     struct rex_pool_buf *b = rex_srq_take(srq, &wc);         the message is in b
 *     rex_srq_repost(srq, b);   read it, then post it again at once, or
 *     rex_srq_release(srq, b);  give it to the pool: the next refill posts one
 *     ... the async event IBV_EVENT_SRQ_LIMIT_REACHED:
 *     rex_srq_async_event(&event);                             refills, arms again
 *     ... every QP destroyed:
 *     rex_srq_destroy(srq);     the buffers still posted go back to the pool
 *
 * **Two ways to give a buffer back.** rex_srq_repost() posts it again at
 * once: the queue stays full, and a protocol with credits (rex_svc.h) can
 * promise its peer a receive for every credit. rex_srq_release() returns
 * it to the pool, and the queue is topped up in one chain when it falls
 * below the low-water mark: fewer posts, but the queue runs lower between
 * refills, and a burst of more messages than low_water between the event
 * and the refill finds it empty. An RC sender that finds no receive gets
 * "receiver not ready" and tries again after the receiver's min_rnr_timer
 * (rex_aconn.h's arithmetic): a delay, and after rnr_retry tries a failure.
 * Size low_water for the messages that can arrive while the event waits to
 * be read.
 *
 * **The limit event** (IBV_EVENT_SRQ_LIMIT_REACHED, on the device's async
 * fd) fires once, when a message takes a receive and fewer than the limit
 * are left; the device disarms it then (ibv_modify_srq(3)), and
 * rex_srq_refill() arms it again. A refill that the pool cannot complete
 * leaves it disarmed until a buffer comes back (rex_srq_release() refills
 * then), so a dry pool never makes the device raise it over and over.
 *
 * **What a QP's end does to the receives.** A QP that fails or is
 * destroyed gives back, flushed (IBV_WC_WR_FLUSH_ERR, on its CQ), only a
 * receive it had started to fill; every other stays in the SRQ for the
 * other QPs. So a connection's end costs the queue nothing, and
 * rex_srq_destroy() finds the rest posted: once no QP uses the SRQ
 * (ibv_destroy_srq() refuses before that) they go back to the pool.
 *
 * The buffer's index in the pool is the receive's wr_id (plus
 * rex_srq_attr::wr_id_tag). Not thread-safe:
 * one thread, or a lock around it. Failures are printed (rex_error.h)
 * before a function returns, with the failing call.
 *
 * Copy rex_srq.c with rex_srq.h, rex_pool.c, rex_pool.h, rex_error.c and
 * rex_error.h; they need only libibverbs.
 */
#ifndef REX_SRQ_H
#define REX_SRQ_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rex_pool.h"

/** \brief What a shared receive queue is made of. */
struct rex_srq_attr {
	/** Receives posted when the queue is full (ibv_create_srq()'s max_wr):
	 *  the pool must have this many buffers free at creation. */
	uint32_t depth;
	/** Fewer receives posted than this raises the limit event, which
	 *  refills the queue; 0: no event (rex_srq_refill() by hand). Below
	 *  depth. */
	uint32_t low_water;
	/** Added to every receive's wr_id, whose low 32 bits are the buffer's
	 *  index: for a program that tells its completions apart by the high
	 *  bits (rex_aconn.h: rex_wr_id(REX_WR_RECV, 0)). Low 32 bits zero. */
	uint64_t wr_id_tag;
};

/** \brief Counts of a shared receive queue. */
struct rex_srq_stats {
	uint32_t depth;        /**< receives posted when full */
	uint32_t posted;       /**< receives posted now */
	uint32_t min_posted;   /**< the fewest ever posted, seen at rex_srq_take() */
	uint64_t taken;        /**< completions taken (rex_srq_take()) */
	uint64_t reposted;     /**< buffers posted again at once (rex_srq_repost()) */
	uint64_t refills;      /**< refills that posted something */
	uint64_t limit_events; /**< IBV_EVENT_SRQ_LIMIT_REACHED handled */
	uint64_t dry;          /**< refills the pool could not complete */
};

struct rex_srq;

/**
 * \brief Create a shared receive queue in \p pd, post \p attr->depth
 *        receives, each a whole buffer of \p pool, and arm the limit.
 * \param pd    the PD of the QPs that will share it (the pool's).
 * \param pool  the receives' buffers, registered with IBV_ACCESS_LOCAL_WRITE;
 *              shared with nobody else while the SRQ lives is simplest.
 * \param attr  depth and low-water mark; not kept.
 * \return the queue, or NULL after printing why: EINVAL (a zero depth, a
 *         low-water mark not below it), ENOBUFS (fewer free buffers than
 *         depth), or the errno of ibv_create_srq() (a depth over the
 *         device's max_srq_wr), ibv_post_srq_recv() or ibv_modify_srq().
 *         Nothing is left to release.
 */
struct rex_srq *rex_srq_create(struct ibv_pd *pd, struct rex_pool *pool,
                               const struct rex_srq_attr *attr);

/**
 * \brief Destroy the SRQ and give every buffer still posted back to the
 *        pool; the buffers the caller took are the caller's to give back.
 *        Accepts NULL.
 * \return 0, or the negative errno of ibv_destroy_srq() (printed; -EBUSY
 *         while a QP still uses it): the queue is left as it was.
 */
int rex_srq_destroy(struct rex_srq *srq);

/** \brief The verbs SRQ, for ibv_qp_init_attr::srq. */
struct ibv_srq *rex_srq_ibv(const struct rex_srq *srq);

/** \brief The pool the receives come from. */
struct rex_pool *rex_srq_pool(const struct rex_srq *srq);

/**
 * \brief The buffer of the receive that completed as \p wc (its wr_id), now
 *        the caller's: the message is in its first wc->byte_len bytes when
 *        wc->status is IBV_WC_SUCCESS; a flushed one holds nothing.
 * \return the buffer, or NULL after printing why when \p wc names no
 *         receive of this queue (a wr_id out of range or not posted).
 */
struct rex_pool_buf *rex_srq_take(struct rex_srq *srq, const struct ibv_wc *wc);

/**
 * \brief Post \p buf (taken with rex_srq_take()) again at once; a queue
 *        left short (a post refused before, a dry refill) is topped up from
 *        the pool and armed again with it.
 * \return 0; -EINVAL (printed) for a buffer posted already (nothing is
 *         done); or the negative errno of ibv_post_srq_recv() (printed):
 *         the buffer went back to the pool then, for the next refill.
 */
int rex_srq_repost(struct rex_srq *srq, struct rex_pool_buf *buf);

/**
 * \brief Give \p buf (taken with rex_srq_take()) back to the pool; a
 *        later refill posts it. A queue whose limit is disarmed because
 *        the pool ran dry is refilled at once.
 * \return 0, or a negative errno (printed): the pool's, or the refill's.
 */
int rex_srq_release(struct rex_srq *srq, struct rex_pool_buf *buf);

/**
 * \brief Post buffers from the pool until depth are posted (or the pool is
 *        empty), in chains, then arm the limit again if depth is reached or
 *        low_water at least.
 * \return the number posted, or a negative errno (printed).
 */
int rex_srq_refill(struct rex_srq *srq);

/**
 * \brief For a program's async event handler: an IBV_EVENT_SRQ_LIMIT_REACHED
 *        of a rex_srq refills it; an IBV_EVENT_SRQ_ERR is printed. The
 *        caller acknowledges the event (ibv_ack_async_event()) as usual.
 * \return 1 when \p event was one of these (handled), 0 when it is no
 *         SRQ's, or a negative errno (printed: the refill failed, or
 *         -EIO for SRQ_ERR).
 */
int rex_srq_async_event(const struct ibv_async_event *event);

/** \brief The counts of \p srq. */
void rex_srq_stats(const struct rex_srq *srq, struct rex_srq_stats *st);

#endif /* REX_SRQ_H */
