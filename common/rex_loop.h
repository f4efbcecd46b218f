/* SPDX-License-Identifier: MIT */
/**
 * \file rex_loop.h
 * \brief One thread, one `epoll`: an event loop for RDMA programs that serve
 *        or drive many connections at once, what chapter 05-async teaches,
 *        as a helper for the chapters after it.
 *
 * Every source of work an RDMA program waits for is a file descriptor: the
 * CM event channel, a completion channel, a device's `async_fd`, a
 * `signalfd`, a `timerfd`. The loop watches them all with one epoll and
 * calls a function when one is ready, so a single thread serves every
 * connection without blocking anywhere:
 *
 *     struct rex_loop *loop = rex_loop_create();
 *     rex_loop_add_signals(loop, (int[]){SIGINT, SIGTERM}, 2, on_signal, me);
 *     rex_loop_add_fd(loop, cm_channel->fd, EPOLLIN, on_cm_events, me);
 *     rex_loop_add_comp_channel(loop, comp_channel);   per device
 *     rex_loop_add_async(loop, verbs, on_async_event, me); per device
 *     ... each connection: rex_loop_cq_init(), ibv_create_cq(..., &lcq, ...),
 *         rex_loop_cq_arm(), rex_loop_timer_init() for its deadlines
 *     rex_loop_run(loop);        until a callback calls rex_loop_stop()
 *     rex_loop_destroy(loop);
 *
 * What it provides:
 *
 * - **File descriptors with callbacks** (rex_loop_add_fd()). Every fd is made
 *   non-blocking: a callback reads until EAGAIN and never sleeps.
 * - **Completion channels** (rex_loop_add_comp_channel()): each CQ event is
 *   taken, counted for a batched acknowledgement, and handed to the CQ's own
 *   function, which polls; the CQ is then armed again and polled once more,
 *   for a completion that came between the poll and the arming. Events are
 *   taken until EAGAIN, at most #REX_LOOP_BUDGET per round, so one busy fd
 *   cannot starve the others.
 * - **Asynchronous device events** (rex_loop_add_async()): each event is
 *   copied, acknowledged, then handed on.
 * - **Signals** (rex_loop_add_signals()): blocked and read from a signalfd,
 *   so a signal is an ordinary event, handled between two others.
 * - **Timers** (rex_loop_timer_start()): any number, on one timerfd armed for
 *   the earliest deadline.
 * - **Tasks** (rex_loop_post()): work that runs after the callbacks of the
 *   current round, such as releasing a connection that one of its own
 *   callbacks decided to close.
 * - **The state of a connection** (::rex_state): resolving, connecting,
 *   established, draining, closed, with the illegal transitions refused.
 *
 * rex_loop_run_once() with a timeout of 0 never sleeps: a program that wants
 * to busy-poll its CQs calls it between two rounds of polling, and timers,
 * signals and CM events still reach it.
 *
 * Callbacks run on the loop's thread, one at a time, to completion. A
 * callback may add and remove fds, start and cancel timers, post tasks and
 * stop the loop; whatever it removes or cancels is not called again, not
 * even later in the same round. The loop is not thread-safe: one thread
 * owns it.
 *
 * Failures are printed to stderr, naming the call, before a function
 * returns (rex_error). Functions return 0 or a negative errno; constructors
 * return NULL and set errno. Nothing exits the program.
 *
 * Copy rex_loop.c and rex_loop_cq.c (completion channels, states) with
 * rex_loop.h, rex_error.c and rex_error.h; they need libibverbs and Linux
 * (epoll, signalfd, timerfd).
 */
#ifndef REX_LOOP_H
#define REX_LOOP_H

#include <stdbool.h>
#include <stdint.h>
#include <infiniband/verbs.h>

struct rex_loop;

/**
 * \brief Called when a file descriptor added with rex_loop_add_fd() is ready.
 * \param loop    the loop.
 * \param events  what epoll reported (EPOLLIN, EPOLLERR, ...).
 * \param arg     what was given to rex_loop_add_fd().
 */
typedef void (*rex_loop_fd_fn)(struct rex_loop *loop, uint32_t events, void *arg);

/**
 * \brief Called once for every signal that arrives on the loop's signalfd.
 * \param loop    the loop.
 * \param signo   the signal, e.g. SIGINT.
 * \param arg     what was given to rex_loop_add_signals().
 */
typedef void (*rex_loop_signal_fn)(struct rex_loop *loop, int signo, void *arg);

/**
 * \brief Called for every asynchronous event of a device, after the event
 *        was acknowledged.
 *
 * Being acknowledged already, the event's QP or CQ may be destroyed from
 * here (ibv_destroy_qp() waits for its events' acknowledgement).
 * \param loop    the loop.
 * \param event   a copy of the event: event_type, and element.qp, element.cq,
 *                element.srq or element.port_num according to the type.
 * \param arg     what was given to rex_loop_add_async().
 */
typedef void (*rex_loop_async_fn)(struct rex_loop *loop, const struct ibv_async_event *event,
                                  void *arg);

/**
 * \brief Called when a timer's deadline has passed. The timer is no longer
 *        armed: the callback may start it again, or free the memory it lives in.
 * \param loop    the loop.
 * \param arg     what was given to rex_loop_timer_init().
 */
typedef void (*rex_loop_timer_fn)(struct rex_loop *loop, void *arg);

/**
 * \brief A posted task's work. The task is no longer queued: the function
 *        may post it again, or free the memory it lives in.
 * \param loop    the loop.
 * \param arg     what was given to rex_loop_task_init().
 */
typedef void (*rex_loop_task_fn)(struct rex_loop *loop, void *arg);

struct rex_loop_cq;

/**
 * \brief Takes the completions of a CQ that raised an event: poll
 *        (ibv_poll_cq()) until it is empty, or until a batch comes back short.
 *
 * Called twice per event: before the CQ is armed again and after. When
 * rex_loop_cq::error is set, arming failed and the CQ will not wake the loop
 * again: close what uses it.
 * \param loop    the loop.
 * \param lcq     the CQ's record, as given to ibv_create_cq() as cq_context.
 */
typedef void (*rex_loop_cq_fn)(struct rex_loop *loop, struct rex_loop_cq *lcq);

/**
 * \brief A timer: embed it in the object whose deadline it keeps (a
 *        connection, say). Fields are private to the loop.
 *
 * rex_loop_timer_init() it once; then start and cancel it as often as needed.
 * Cancel it before freeing the memory it lives in, unless it is not armed.
 */
struct rex_loop_timer {
	uint64_t deadline_ns;        /**< CLOCK_MONOTONIC, when armed */
	rex_loop_timer_fn fn;        /**< called at the deadline */
	void *arg;                   /**< passed to fn */
	struct rex_loop_timer *prev; /**< the one due before it, in the loop's list */
	struct rex_loop_timer *next; /**< the one due after it */
	bool armed;                  /**< in the list */
	unsigned pass;               /**< the loop's timer pass it was armed in */
};

/**
 * \brief A task: embed it where it belongs. Fields are private to the loop.
 * Posting a task already queued does nothing, so it runs once per round.
 */
struct rex_loop_task {
	rex_loop_task_fn fn;        /**< the work */
	void *arg;                  /**< passed to fn */
	struct rex_loop_task *next; /**< in the loop's queue */
	bool queued;                /**< in the queue */
};

/**
 * \brief What the loop keeps for one CQ that wakes it through a completion
 *        channel: pass its address as cq_context to ibv_create_cq().
 *
 * Events are acknowledged in batches (ibv_ack_cq_events() takes a lock):
 * call rex_loop_cq_ack() before ibv_destroy_cq(), which waits until every
 * event taken has been acknowledged. Once ibv_destroy_cq() has returned, no
 * event for that CQ comes out of the channel any more (the kernel drops the
 * ones still queued), so the record may be freed then; call it outside the
 * CQ's own function (rex_loop_post() a task), as the loop arms and polls the
 * CQ again after that function returns.
 */
struct rex_loop_cq {
	struct ibv_cq *cq;    /**< set it after ibv_create_cq() */
	rex_loop_cq_fn fn;    /**< polls it */
	void *arg;            /**< for fn's use */
	unsigned int unacked; /**< events taken and not yet acknowledged */
	int error;            /**< 0, or the negative errno with which arming failed */
	/** The owner busy-polls this CQ for now: after an event the loop calls
	 *  fn once and does not arm the CQ again, so the device raises no more
	 *  events for it. Clear it, then rex_loop_cq_arm() and poll once, to
	 *  have events again. */
	bool busy_polled;
};

/** Events a CQ collects before the loop acknowledges them in one call. */
#define REX_LOOP_CQ_ACK_BATCH 64

/**
 * Events the readers of this file (completion channels, asynchronous
 * events) take from one fd in one round. They read until EAGAIN, but no
 * further than this: with many busy CQs a completion channel is never
 * empty for long, and an unbounded reader would starve signals, timers and
 * the CM. What is left is reported again in the next round (level-triggered).
 * Write your own readers the same way.
 */
#define REX_LOOP_BUDGET 64

/**
 * \brief Create a loop: an epoll instance and the timerfd its timers share.
 * \return the loop, or NULL with errno set after printing the failing call.
 *         Release it with rex_loop_destroy().
 */
struct rex_loop *rex_loop_create(void);

/**
 * \brief Release \p loop: stop watching every fd, close the epoll fd, the
 *        timerfd and the signalfd, and unblock the signals it blocked.
 *
 * The fds added with rex_loop_add_fd(), the completion channels and the
 * devices remain the caller's, open. Timers still armed and tasks still
 * queued are forgotten, not called. The signals of rex_loop_add_signals()
 * are unblocked (the mask before it is restored): one that arrived and was
 * not read yet is delivered at that moment, with its old disposition (for
 * SIGINT and SIGTERM, by default, the end of the program). Accepts NULL.
 * \return 0, or the negative errno of the first close() or pthread_sigmask()
 *         that failed (printed; the rest is still released, and \p loop freed).
 */
int rex_loop_destroy(struct rex_loop *loop);

/**
 * \brief Watch \p fd: call \p fn when epoll reports one of \p events.
 *
 * \p fd is made non-blocking (O_NONBLOCK): a callback reads until EAGAIN and
 * never sleeps. It is watched level-triggered: what a callback leaves unread
 * is reported again in the next round.
 * \param loop    the loop.
 * \param fd      an open file descriptor, not watched yet; it stays the caller's.
 * \param events  EPOLLIN, EPOLLOUT, ... (EPOLLERR and EPOLLHUP are always reported).
 * \param fn      called with \p arg.
 * \param arg     anything, for \p fn.
 * \return 0, or a negative errno after printing the failing call
 *         (-EEXIST when \p fd is watched already).
 */
int rex_loop_add_fd(struct rex_loop *loop, int fd, uint32_t events, rex_loop_fd_fn fn, void *arg);

/**
 * \brief Stop watching \p fd; its callback is not called again, not even for
 *        an event already reported in the current round. The fd stays open.
 * \param loop  the loop.
 * \param fd    a file descriptor added with rex_loop_add_fd() (or with the
 *              rex_loop_add_comp_channel() or rex_loop_add_async() wrappers).
 * \return 0, or -ENOENT when \p fd is not watched, or the negative errno of a
 *         failing epoll_ctl() (printed; the fd is forgotten all the same).
 */
int rex_loop_remove_fd(struct rex_loop *loop, int fd);

/**
 * \brief Run one round: wait up to \p timeout_ms for fds to be ready, call
 *        their callbacks, then the timers that are due, then the tasks posted.
 *
 * Timers come after the other fds of the round: a deadline does not fire
 * for a connection whose completion or CM event had arrived already, only
 * because the loop was slow to look (a starved CPU, a long round).
 *
 * A timeout of 0 returns at once when nothing is ready: a busy-polling
 * program calls it between two rounds of ibv_poll_cq(). When tasks are
 * queued, the round does not wait at all.
 * \param loop        the loop.
 * \param timeout_ms  -1 waits until something is ready; 0 does not wait.
 * \return the number of fds that were ready (0 when none, or when a signal
 *         handler interrupted the wait), or the negative errno of a failing
 *         epoll_wait() (printed).
 */
int rex_loop_run_once(struct rex_loop *loop, int timeout_ms);

/**
 * \brief Run rounds until a callback calls rex_loop_stop().
 * \return 0 when stopped, or the negative errno of a failing epoll_wait().
 */
int rex_loop_run(struct rex_loop *loop);

/** \brief Make rex_loop_run() return after the current round. */
void rex_loop_stop(struct rex_loop *loop);

/**
 * \brief Inside a program's own event loop (libevent, libuv, valkey's ae),
 *        instead of rex_loop_run(): the one fd that loop watches.
 *
 * Everything this loop waits for is an fd in its epoll, its timers
 * included (a timerfd), so the epoll fd is readable whenever a round has
 * work. The program's loop needs to offer two things, and no timer:
 * - watch this fd for reading and, when it is, call
 *   rex_loop_run_once(loop, 0); level-triggered, as work one round leaves
 *   (events past a budget) keeps it readable;
 * - a deferred call: tasks (rex_loop_post()) make no fd readable, so when
 *   rex_loop_has_tasks() says some are queued, after a round or after the
 *   program called a helper from outside a round, call rex_loop_run_once()
 *   again on the loop's next turn.
 * rex_loop_stopping() tells it when a callback called rex_loop_stop().
 * tests/copy-async/evloop.c does it for libevent in 40 lines.
 */
int rex_loop_fd(const struct rex_loop *loop);

/**
 * \brief How many rounds the loop ran, and how many of them found nothing
 *        ready (an epoll_wait() that returned 0: a timeout of 0 with nothing
 *        to do, or a signal). A loop that sleeps has almost no idle rounds;
 *        one that spins (rex_loop_run_once(loop, 0) over and over) has many
 *        for each one that did work.
 * \param loop    the loop.
 * \param rounds  set to the rounds run since rex_loop_create().
 * \param idle    set to those of them that found nothing ready.
 */
void rex_loop_rounds(const struct rex_loop *loop, uint64_t *rounds, uint64_t *idle);

/** \brief Tasks are queued: run a round soon (see rex_loop_fd()). */
bool rex_loop_has_tasks(const struct rex_loop *loop);

/** \brief A callback called rex_loop_stop() (cleared when rex_loop_run() returns). */
bool rex_loop_stopping(const struct rex_loop *loop);

/**
 * \brief The time at which the current round woke up, in nanoseconds of
 *        CLOCK_MONOTONIC: a clock read once per round, cheap enough to stamp
 *        every completion with.
 *
 * The loop reads the clock once more before it calls the round's timers:
 * in a timer's function this is the time against which the loop found the
 * timer due, so a deadline later than it is in the future for the loop too.
 */
uint64_t rex_loop_now_ns(const struct rex_loop *loop);

/**
 * \brief Block \p signals and read them from a signalfd watched by the loop:
 *        \p fn runs for each signal that arrives, between two other callbacks,
 *        where it may do anything (no async-signal-safety rules apply).
 *
 * One set of signals per loop. rex_loop_destroy() restores the signal mask
 * that was in place before.
 * \param loop     the loop.
 * \param signals  the signals, e.g. {SIGINT, SIGTERM}.
 * \param count    how many (>= 1).
 * \param fn       called with each signal that arrives.
 * \param arg      anything, for \p fn.
 * \return 0, or a negative errno after printing the failing call (-EBUSY
 *         when the loop has its signals already).
 */
int rex_loop_add_signals(struct rex_loop *loop, const int *signals, int count,
                         rex_loop_signal_fn fn, void *arg);

/**
 * \brief Watch a completion channel. For every CQ event on it: take it,
 *        count it on the CQ's ::rex_loop_cq (acknowledged every
 *        #REX_LOOP_CQ_ACK_BATCH events), call the CQ's function, arm the CQ
 *        again and call the function once more; until the channel is empty
 *        or #REX_LOOP_BUDGET events were taken in this round.
 *
 * Every CQ made with this channel must have a ::rex_loop_cq as its
 * cq_context. Remove the channel with rex_loop_remove_fd(loop, channel->fd)
 * before ibv_destroy_comp_channel() (-ENOENT, harmless, if the loop did).
 * An error reading it (not EAGAIN: a device gone) is printed once and the
 * loop stops watching it, rather than spin on an fd that stays readable.
 * \param loop     the loop.
 * \param channel  the channel; it stays the caller's.
 * \return as rex_loop_add_fd().
 */
int rex_loop_add_comp_channel(struct rex_loop *loop, struct ibv_comp_channel *channel);

/**
 * \brief The most CQ events a completion channel's reader took in one round
 *        since rex_loop_create(): #REX_LOOP_BUDGET at most. A loop that
 *        often reaches it has channels that are hardly ever empty; the
 *        budget is what gives its signals, timers and CM their turn.
 */
unsigned rex_loop_most_cq_events(const struct rex_loop *loop);

/** \brief Called by a completion channel's reader at the end of its round,
 *         with the events it took (rex_loop_most_cq_events() keeps the most). */
void rex_loop_note_cq_events(struct rex_loop *loop, unsigned taken);

/**
 * \brief Set up \p lcq for a CQ that will call \p fn. Call it before
 *        ibv_create_cq(), which takes \p lcq as its cq_context; then set
 *        lcq->cq and call rex_loop_cq_arm().
 * \param lcq  the record, usually inside the connection that owns the CQ.
 * \param fn   polls the CQ.
 * \param arg  anything, for \p fn (in lcq->arg).
 */
void rex_loop_cq_init(struct rex_loop_cq *lcq, rex_loop_cq_fn fn, void *arg);

/**
 * \brief Arm the CQ (ibv_req_notify_cq()) so that its next completion raises
 *        an event: once after creating it; the loop re-arms it afterwards.
 * \return 0, or a negative errno after printing the failing call.
 */
int rex_loop_cq_arm(struct rex_loop_cq *lcq);

/**
 * \brief Acknowledge every event taken for the CQ and not yet acknowledged:
 *        call it right before ibv_destroy_cq(). Accepts a record whose cq is NULL.
 */
void rex_loop_cq_ack(struct rex_loop_cq *lcq);

/**
 * \brief Watch the asynchronous events of a device (its `async_fd`, made
 *        non-blocking): each is taken, copied, acknowledged, and handed to \p fn.
 *
 * The events that matter most to a connection: IBV_EVENT_QP_FATAL (its QP is
 * in the error state), IBV_EVENT_CQ_ERR (its CQ overran and is dead),
 * IBV_EVENT_PORT_ERR (the link went down), IBV_EVENT_DEVICE_FATAL (the
 * device is gone). ibv_event_type_str() names them. An error reading the
 * fd (not EAGAIN: a device gone, or reset) is printed, the loop stops
 * watching the fd, and \p fn gets IBV_EVENT_DEVICE_FATAL, as from the device.
 * Remove it with rex_loop_remove_fd(loop, context->async_fd) (-ENOENT,
 * harmless, after such an error).
 * \param loop     the loop.
 * \param context  the device, e.g. a CM id's `verbs`; it stays the caller's.
 * \param fn       called with each event.
 * \param arg      anything, for \p fn.
 * \return as rex_loop_add_fd().
 */
int rex_loop_add_async(struct rex_loop *loop, struct ibv_context *context, rex_loop_async_fn fn,
                       void *arg);

/**
 * \brief Set up a timer that will call \p fn with \p arg. Not armed yet.
 * \param timer  the timer, usually inside the object whose deadline it keeps.
 * \param fn     called at the deadline.
 * \param arg    anything, for \p fn.
 */
void rex_loop_timer_init(struct rex_loop_timer *timer, rex_loop_timer_fn fn, void *arg);

/**
 * \brief Arm \p timer to fire \p ms milliseconds from now; a timer armed
 *        already is moved to the new deadline.
 * \return 0, or the negative errno of a failing timerfd_settime() (printed).
 *         The timer is armed all the same and fires on time: each round sets
 *         the timerfd again, and while that fails, epoll_wait()'s timeout is
 *         cut to the earliest deadline. A caller may ignore the value.
 */
int rex_loop_timer_start(struct rex_loop *loop, struct rex_loop_timer *timer, uint64_t ms);

/**
 * \brief Arm \p timer for an absolute \p deadline_ns of CLOCK_MONOTONIC (as
 *        rex_loop_now_ns() gives), e.g. "the last activity plus the idle time".
 * \return as rex_loop_timer_start().
 */
int rex_loop_timer_start_at(struct rex_loop *loop, struct rex_loop_timer *timer,
                            uint64_t deadline_ns);

/** \brief Disarm \p timer; it does nothing when the timer is not armed. */
void rex_loop_timer_cancel(struct rex_loop *loop, struct rex_loop_timer *timer);

/** \brief Whether \p timer is armed. */
bool rex_loop_timer_armed(const struct rex_loop_timer *timer);

/**
 * \brief Set up a task that will call \p fn with \p arg when posted.
 * \param task  the task.
 * \param fn    its work.
 * \param arg   anything, for \p fn.
 */
void rex_loop_task_init(struct rex_loop_task *task, rex_loop_task_fn fn, void *arg);

/**
 * \brief Queue \p task to run at the end of the current round, after every
 *        callback of it (or in the next round, when posted from outside one).
 *        A task queued already stays queued once.
 */
void rex_loop_post(struct rex_loop *loop, struct rex_loop_task *task);

/**
 * \brief Take \p task out of the queue; it does nothing when it is not queued.
 *        Call it before freeing a task's memory anywhere but in its own function.
 */
void rex_loop_unpost(struct rex_loop *loop, struct rex_loop_task *task);

/**
 * \brief The life of one connection driven by the loop. Every connection ends
 *        through DRAINING, even one with nothing to drain, so there is one way
 *        to release it.
 *
 * | from \\ to  | CONNECTING | ESTABLISHED | DRAINING | CLOSED |
 * |-------------|------------|-------------|----------|--------|
 * | RESOLVING   | yes        |             | yes      |        |
 * | CONNECTING  |            | yes         | yes      |        |
 * | ESTABLISHED |            |             | yes      |        |
 * | DRAINING    |            |             |          | yes    |
 * | CLOSED      |            |             |          |        |
 *
 * Nothing goes back, nothing stays where it is (a "transition" to the same
 * state is refused: it means two paths tried to do the same thing), and
 * nothing leaves CLOSED. A client's connection starts in RESOLVING; a
 * server's in CONNECTING, once it has the connect request.
 */
enum rex_state {
	/** Active side: resolving the peer's address and route; no QP yet, or
	 *  one with receives posted before the connect. */
	REX_STATE_RESOLVING,
	/** Connect request sent (client) or accept sent (server); waiting for
	 *  RDMA_CM_EVENT_ESTABLISHED. Receives are posted. */
	REX_STATE_CONNECTING,
	/** Connected: messages flow. */
	REX_STATE_ESTABLISHED,
	/** Closing: the QP is in the error state; waiting for every work request
	 *  to complete (most as flushed) and, when a disconnect was sent, for
	 *  the peer's answer. Buffers still belong to the device. */
	REX_STATE_DRAINING,
	/** Everything released, or about to be: nothing of it may be used. */
	REX_STATE_CLOSED,
};

/** Number of states: every value of ::rex_state is below it. */
#define REX_STATE_COUNT 5

/** \brief "resolving", "connecting", "established", "draining", "closed"; "unknown" otherwise. */
const char *rex_state_name(enum rex_state state);

/** \brief Whether \p from may become \p to (see ::rex_state); false for unknown values. */
bool rex_state_allowed(enum rex_state from, enum rex_state to);

/**
 * \brief Move \p *state to \p to, if that transition is allowed.
 * \return 0 with \p *state set; or -EPERM, printing nothing, with \p *state
 *         unchanged: the caller names the connection in its message.
 */
int rex_state_change(enum rex_state *state, enum rex_state to);

#endif /* REX_LOOP_H */
