/* SPDX-License-Identifier: MIT */
/**
 * \file rex_cq.h
 * \brief Sleeping until work completes: the completion channel, taught in
 *        chapter 02-send-recv.
 *
 * Busy polling burns a core. A completion channel lets a thread sleep until
 * the CQ has something, in four moves that must come in this order:
 *
 * 1. poll the CQ; if it had completions, return them;
 * 2. arm the CQ with ibv_req_notify_cq(): "wake me at the next completion";
 * 3. poll again: a completion that arrived between 1 and 2 raised no event,
 *    and would be missed if we slept now;
 * 4. sleep in ibv_get_cq_event(), acknowledge the event with
 *    ibv_ack_cq_events() at once, and start over.
 *
 * Copy rex_cq.c with rex_cq.h, rex_error.c and rex_error.h; they need only libibverbs.
 */
#ifndef REX_CQ_H
#define REX_CQ_H

#include <infiniband/verbs.h>

/**
 * \brief Wait until \p cq has at least one completion, then take up to \p max.
 *
 * Sleeps on \p channel, which must be the completion channel \p cq was made
 * with, for at most \p timeout_ms between completions. It does not look at
 * the completions' status: the caller checks each one.
 *
 * \param channel     the CQ's completion channel.
 * \param cq          the completion queue.
 * \param wc          room for \p max completions.
 * \param max         how many completions to take at most (>= 1).
 * \param timeout_ms  how long to sleep at most; -1 sleeps forever.
 * \return the number of completions in \p wc (1..max); or, after printing
 *         why, -ETIMEDOUT when nothing completed in time, or the negative
 *         errno of a failing ibv_poll_cq(), ibv_req_notify_cq(), poll() or
 *         ibv_get_cq_event(); or -EINTR, printing nothing, when a signal
 *         handler ran (call again to go on waiting).
 */
int rex_cq_wait(struct ibv_comp_channel *channel, struct ibv_cq *cq, struct ibv_wc *wc, int max,
                int timeout_ms);

/**
 * \brief rex_cq_wait(), but also wake up when \p watch_fd becomes readable.
 *
 * Pass a connection's CM event channel (`conn->channel->fd`) while waiting
 * for the peer's next message: a peer that dies or disconnects sends no more
 * messages, and its disconnect arrives as a CM event, not as a completion.
 * Without the watch, only the timeout would end the wait.
 *
 * \param channel, cq, wc, max, timeout_ms  as for rex_cq_wait().
 * \param watch_fd  a file descriptor to watch, or -1 for none.
 * \return as rex_cq_wait(); and -ECONNRESET, printing nothing, when
 *         \p watch_fd became readable and the CQ, polled once more, was
 *         still empty. (A completion that arrived before the disconnect is
 *         returned first: call again after handling it, and -ECONNRESET
 *         comes once the CQ is empty.) The CM event is left unread: read it
 *         next, with rex_conn_wait_disconnect() for a connection of
 *         rex_conn (it says what came, and stops the QP), or rex_cm_wait().
 */
int rex_cq_wait_watch(struct ibv_comp_channel *channel, struct ibv_cq *cq, struct ibv_wc *wc,
                      int max, int timeout_ms, int watch_fd);

/**
 * \brief How many times rex_cq_wait() and rex_cq_wait_watch() slept on a
 *        completion channel and were woken by an event, in this process
 *        since it started: one a wait when completions come one at a time,
 *        none for a program that polls. For a program's report (02's client
 *        prints it with -v).
 */
unsigned long rex_cq_sleeps(void);

/**
 * \brief After the QP is in the error state, take the completions of the
 *        \p outstanding work requests still posted on it, discarding them.
 *
 * Moving a QP to the error state (rdma_disconnect(), rex_conn_disconnect(),
 * rex_conn_wait_disconnect()) starts a flush: every work request still
 * posted completes, most with IBV_WC_WR_FLUSH_ERR. Until a request has
 * completed, its memory is the device's; only then may it be deregistered.
 * A flush is the expected end of a connection, not an error: nothing is
 * printed for completions that failed. Busy-polls with short sleeps, so it
 * needs no completion channel and leaves no CQ event to acknowledge.
 *
 * \param cq           the QP's completion queue (send and receive, if they differ:
 *                     drain each with its own count).
 * \param outstanding  work requests posted and not yet seen completing.
 * \param timeout_ms   how long to wait for them all.
 * \return 0 when all came; -ETIMEDOUT (printed, with how many are missing)
 *         when fewer came in time; -EIO when ibv_poll_cq() failed (printed).
 */
int rex_cq_drain(struct ibv_cq *cq, unsigned int outstanding, int timeout_ms);

/**
 * \brief rex_cq_drain(), looking at what completes: for the end of a
 *        session, where anything but a flush means the peer went on after
 *        its last word.
 *
 * A server that has taken a peer's "done" stops acting on its messages, but
 * the QP accepts them until it stops. Drained after the QP stopped, every
 * completion should be a flush, or a send of ours that had completed
 * successfully. Any other completion (a receive that took a message, a
 * failure other than a flush) arrived after the program stopped reading:
 * this counts those, and copies the first one to \p late, so that the
 * caller can refuse the peer for it (rex_format_wc_brief() says what it was).
 *
 * \param cq           as rex_cq_drain().
 * \param outstanding  as rex_cq_drain().
 * \param timeout_ms   as rex_cq_drain().
 * \param late         where the first such completion goes (may be NULL).
 * \return how many such completions came (0: only flushes and our sends),
 *         or a negative errno as rex_cq_drain().
 */
int rex_cq_drain_late(struct ibv_cq *cq, unsigned int outstanding, int timeout_ms,
                      struct ibv_wc *late);

#endif /* REX_CQ_H */
