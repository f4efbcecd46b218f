/* SPDX-License-Identifier: MIT */
/*
 * rex_loop.c: one epoll over every fd an RDMA program waits on (see
 * rex_loop.h). Chapter 05-async's walkthrough shows this file step by step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* epoll, signalfd, timerfd, pthread_sigmask under -std=c11 */
#endif
#include "rex_loop.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "rex_error.h"

/* Ready fds taken from epoll_wait() at once; more wait for the next round. */
#define MAX_EVENTS 64
/* Signals taken from the signalfd at once. */
#define SIGNAL_BATCH 8

/* One watched fd. epoll hands the pointer back with every event. */
struct watch {
	int fd;
	rex_loop_fd_fn fn; /* called with arg; NULL once removed */
	void *arg;
	/* For the readers of this file (async events, signals). */
	struct ibv_context *context;
	rex_loop_async_fn async_fn;
	rex_loop_signal_fn signal_fn;
	void *user_arg;
	struct watch *next; /* in watches, or in dead once removed */
};

struct rex_loop {
	int epfd;
	int timerfd;                        /* armed for the earliest timer, or disarmed */
	uint64_t timerfd_ns;                /* the deadline it is set to; 0: disarmed */
	int sigfd;                          /* -1 until rex_loop_add_signals() */
	sigset_t old_mask;                  /* restored by rex_loop_destroy() */
	struct watch *watches;              /* being watched */
	struct watch *dead;                 /* removed this round: freed at its end */
	struct rex_loop_timer *timers;      /* armed, earliest deadline first */
	struct rex_loop_timer *timers_tail; /* the latest */
	struct rex_loop_task *tasks, *tasks_tail;
	uint64_t now_ns;
	unsigned timer_pass; /* counts the passes of timers_due() */
	uint64_t rounds;     /* rex_loop_rounds() */
	uint64_t idle_rounds;
	unsigned most_cq_events; /* rex_loop_most_cq_events() */
	bool stop;
};

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts); /* cannot fail with this clock */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* --- fds ------------------------------------------------------------------ */

static struct watch *find_watch(const struct rex_loop *loop, int fd)
{
	struct watch *w;

	for (w = loop->watches; w; w = w->next)
		if (w->fd == fd)
			return w;
	return NULL;
}

static int set_nonblocking(int fd)
{
	int flags = fcntl(fd, F_GETFL);

	if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		int err = errno;

		rex_report_errno("fcntl", err);
		return -err;
	}
	return 0;
}

/* Add a watch and return it, so the readers below can fill in their fields. */
static struct watch *add_watch(struct rex_loop *loop, int fd, uint32_t events, rex_loop_fd_fn fn,
                               void *arg, int *ret)
{
	struct epoll_event ev = {.events = events};
	struct watch *w;

	if (find_watch(loop, fd)) {
		rex_errorf("rex_loop_add_fd: fd %d is watched already", fd);
		*ret = -EEXIST;
		return NULL;
	}
	*ret = set_nonblocking(fd);
	if (*ret)
		return NULL;
	w = calloc(1, sizeof(*w));
	if (!w) {
		*ret = -errno;
		rex_report_errno("calloc", errno);
		return NULL;
	}
	w->fd = fd;
	w->fn = fn;
	w->arg = arg;
	ev.data.ptr = w;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_ADD, fd, &ev)) {
		*ret = -errno;
		rex_report_errno("epoll_ctl", errno);
		free(w);
		return NULL;
	}
	w->next = loop->watches;
	loop->watches = w;
	return w;
}

int rex_loop_add_fd(struct rex_loop *loop, int fd, uint32_t events, rex_loop_fd_fn fn, void *arg)
{
	int ret;

	add_watch(loop, fd, events, fn, arg, &ret);
	return ret;
}

int rex_loop_remove_fd(struct rex_loop *loop, int fd)
{
	struct watch **p, *w;
	int ret = 0;

	for (p = &loop->watches; *p && (*p)->fd != fd; p = &(*p)->next)
		;
	w = *p;
	if (!w)
		return -ENOENT;
	if (epoll_ctl(loop->epfd, EPOLL_CTL_DEL, fd, NULL)) {
		ret = -errno;
		rex_report_errno("epoll_ctl", errno);
	}
	/* An event for it may still sit in this round's list: keep the memory
	 * until the round is over, with no function to call. */
	*p = w->next;
	w->fn = NULL;
	w->next = loop->dead;
	loop->dead = w;
	return ret;
}

/* --- timers --------------------------------------------------------------- */

/* Set the timerfd to the earliest deadline, if it is not set to it already. */
static int program_timerfd(struct rex_loop *loop)
{
	uint64_t first = loop->timers ? loop->timers->deadline_ns : 0;
	struct itimerspec its = {{0, 0}, {0, 0}};

	if (first == loop->timerfd_ns)
		return 0;
	if (first) {
		/* Absolute time: no drift between reading the clock and arming. */
		its.it_value.tv_sec = (time_t)(first / 1000000000u);
		its.it_value.tv_nsec = (long)(first % 1000000000u);
	}
	if (timerfd_settime(loop->timerfd, first ? TFD_TIMER_ABSTIME : 0, &its, NULL)) {
		int err = errno;

		rex_report_errno("timerfd_settime", err);
		loop->timerfd_ns = 0;
		return -err;
	}
	loop->timerfd_ns = first;
	return 0;
}

static void unlink_timer(struct rex_loop *loop, struct rex_loop_timer *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		loop->timers = t->next;
	if (t->next)
		t->next->prev = t->prev;
	else
		loop->timers_tail = t->prev;
	t->prev = t->next = NULL;
	t->armed = false;
}

void rex_loop_timer_init(struct rex_loop_timer *timer, rex_loop_timer_fn fn, void *arg)
{
	memset(timer, 0, sizeof(*timer));
	timer->fn = fn;
	timer->arg = arg;
}

int rex_loop_timer_start_at(struct rex_loop *loop, struct rex_loop_timer *timer,
                            uint64_t deadline_ns)
{
	struct rex_loop_timer *after;

	if (timer->armed)
		unlink_timer(loop, timer);
	if (deadline_ns == 0)
		deadline_ns = 1; /* 0 means "disarmed" to the timerfd */
	timer->deadline_ns = deadline_ns;
	timer->pass = loop->timer_pass;
	/* A sorted list, walked from its latest end: a new deadline is mostly
	 * the latest one (now plus a fixed time), so a burst of connections
	 * that all arm the same timeout inserts each in one step, and one due
	 * equal to another lands after it. Firing takes the head. */
	for (after = loop->timers_tail; after && after->deadline_ns > deadline_ns;
	     after = after->prev)
		;
	timer->prev = after;
	timer->next = after ? after->next : loop->timers;
	if (timer->next)
		timer->next->prev = timer;
	else
		loop->timers_tail = timer;
	if (after)
		after->next = timer;
	else
		loop->timers = timer;
	timer->armed = true;
	return program_timerfd(loop);
}

int rex_loop_timer_start(struct rex_loop *loop, struct rex_loop_timer *timer, uint64_t ms)
{
	return rex_loop_timer_start_at(loop, timer, clock_ns() + ms * 1000000u);
}

void rex_loop_timer_cancel(struct rex_loop *loop, struct rex_loop_timer *timer)
{
	if (!timer->armed)
		return;
	unlink_timer(loop, timer);
	program_timerfd(loop); /* a failure is printed; the timer is gone either way */
}

bool rex_loop_timer_armed(const struct rex_loop_timer *timer)
{
	return timer->armed;
}

/* [timers-due] */
/* The timerfd fired: call every timer whose deadline has passed. */
static void timers_due(struct rex_loop *loop, uint32_t events, void *arg)
{
	uint64_t expirations, now;
	struct rex_loop_timer *t;

	(void)events;
	(void)arg;
	/* Empty it, or it stays readable; EAGAIN when it fired for a timer
	 * that has been cancelled since: nothing to do. */
	if (read(loop->timerfd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		rex_report_errno("read timerfd", errno);
	loop->timerfd_ns = 0; /* a fired timerfd is disarmed */
	/* The functions see the same "now" as the test below (the round's other
	 * callbacks may have taken a while since it woke up). */
	loop->now_ns = now = clock_ns();
	/* A timer started during this pass waits for the next round, even if
	 * its deadline has passed: else a function that starts its own timer
	 * for a time already gone would be called again and again, here,
	 * forever, and the loop would never look at its fds again. */
	loop->timer_pass++;
	/* Unlink each before calling it: its function may start it again, cancel
	 * others, or free it. The head is read again every time. */
	while ((t = loop->timers) && t->deadline_ns <= now && t->pass != loop->timer_pass) {
		unlink_timer(loop, t);
		t->fn(loop, t->arg);
	}
	program_timerfd(loop);
}
/* [timers-due] */

/* --- tasks ---------------------------------------------------------------- */

void rex_loop_task_init(struct rex_loop_task *task, rex_loop_task_fn fn, void *arg)
{
	memset(task, 0, sizeof(*task));
	task->fn = fn;
	task->arg = arg;
}

void rex_loop_post(struct rex_loop *loop, struct rex_loop_task *task)
{
	if (task->queued)
		return;
	task->queued = true;
	task->next = NULL;
	if (loop->tasks_tail)
		loop->tasks_tail->next = task;
	else
		loop->tasks = task;
	loop->tasks_tail = task;
}

void rex_loop_unpost(struct rex_loop *loop, struct rex_loop_task *task)
{
	struct rex_loop_task **p, *prev = NULL;

	if (!task->queued)
		return;
	for (p = &loop->tasks; *p && *p != task; p = &(*p)->next)
		prev = *p;
	if (*p) {
		*p = task->next;
		if (loop->tasks_tail == task)
			loop->tasks_tail = prev;
	}
	task->next = NULL;
	task->queued = false;
}

static void run_tasks(struct rex_loop *loop)
{
	struct rex_loop_task *task;

	/* Tasks posted by tasks run in this round too. */
	while ((task = loop->tasks)) {
		loop->tasks = task->next;
		if (!loop->tasks)
			loop->tasks_tail = NULL;
		task->next = NULL;
		task->queued = false;
		task->fn(loop, task->arg);
	}
}

/* --- the loop ------------------------------------------------------------- */

struct rex_loop *rex_loop_create(void)
{
	struct rex_loop *loop;
	int err, ret;

	loop = calloc(1, sizeof(*loop));
	if (!loop) {
		err = errno;
		rex_report_errno("calloc", err);
		errno = err;
		return NULL;
	}
	loop->timerfd = -1;
	loop->sigfd = -1;
	loop->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (loop->epfd < 0) {
		err = errno;
		rex_report_errno("epoll_create1", err);
		goto out_free;
	}
	/* One timerfd for every timer: armed for the earliest deadline. */
	loop->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (loop->timerfd < 0) {
		err = errno;
		rex_report_errno("timerfd_create", err);
		goto out_close_epoll;
	}
	ret = rex_loop_add_fd(loop, loop->timerfd, EPOLLIN, timers_due, NULL);
	if (ret) {
		err = -ret;
		goto out_close_timerfd;
	}
	loop->now_ns = clock_ns();
	return loop;

out_close_timerfd:
	close(loop->timerfd);
out_close_epoll:
	close(loop->epfd);
out_free:
	free(loop);
	errno = err;
	return NULL;
}

static void free_watches(struct watch *w)
{
	struct watch *next;

	for (; w; w = next) {
		next = w->next;
		free(w);
	}
}

/* close() \p fd unless it is -1; remember the first failure. */
static void close_fd(int fd, const char *what, int *first)
{
	if (fd >= 0 && close(fd)) {
		rex_report_errno(what, errno);
		if (!*first)
			*first = -errno;
	}
}

int rex_loop_destroy(struct rex_loop *loop)
{
	int first = 0;

	if (!loop)
		return 0;
	/* Closing the epoll fd drops every watch at once; the fds are the
	 * caller's and stay open (ours, the timerfd and signalfd, are closed). */
	free_watches(loop->watches);
	free_watches(loop->dead);
	close_fd(loop->epfd, "close epoll fd", &first);
	close_fd(loop->timerfd, "close timerfd", &first);
	if (loop->sigfd >= 0) {
		close_fd(loop->sigfd, "close signalfd", &first);
		/* Signals that arrived since stay pending, and are delivered
		 * now, with their old dispositions. */
		int err = pthread_sigmask(SIG_SETMASK, &loop->old_mask, NULL);

		if (err) { /* an errno value */
			rex_report_errno("pthread_sigmask", err);
			if (!first)
				first = -err;
		}
	}
	free(loop);
	return first;
}

/* The earliest timer has no timerfd behind it when timerfd_settime()
 * failed (printed then): set it again, and if that fails too, sleep no
 * longer than until that deadline. No timer is lost to the failure. */
static int timer_backstop(struct rex_loop *loop, int timeout_ms)
{
	uint64_t first, now, ms;

	if (!loop->timers || loop->timerfd_ns == loop->timers->deadline_ns ||
	    program_timerfd(loop) == 0)
		return timeout_ms;
	first = loop->timers->deadline_ns;
	now = clock_ns();
	ms = first > now ? (first - now + 999999u) / 1000000u : 0;
	if (ms > INT_MAX)
		ms = INT_MAX;
	return timeout_ms >= 0 && timeout_ms < (int)ms ? timeout_ms : (int)ms;
}

/* [loop-round] */
int rex_loop_run_once(struct rex_loop *loop, int timeout_ms)
{
	struct epoll_event events[MAX_EVENTS];
	bool timers_ready = false;
	int n, i, err;

	/* [round] */
	/* Queued tasks must not wait behind a sleep. */
	if (loop->tasks)
		timeout_ms = 0;
	timeout_ms = timer_backstop(loop, timeout_ms);
	n = epoll_wait(loop->epfd, events, MAX_EVENTS, timeout_ms);
	if (n < 0) {
		err = errno;
		if (err != EINTR) { /* EINTR: a signal handler ran; nothing to do */
			rex_report_errno("epoll_wait", err);
			return -err;
		}
		n = 0;
	}
	loop->now_ns = clock_ns();
	for (i = 0; i < n; i++) {
		struct watch *w = events[i].data.ptr;

		/* The timers last: a deadline must not beat an event that had
		 * arrived already, only because the loop was slow to look. */
		if (w->fd == loop->timerfd)
			timers_ready = true;
		else if (w->fn) /* NULL: removed by an earlier callback of this round */
			w->fn(loop, events[i].events, w->arg);
	}
	/* A timer the timerfd could not be set for is run all the same. */
	if (timers_ready || (loop->timers && loop->timerfd_ns != loop->timers->deadline_ns &&
	                     loop->timers->deadline_ns <= loop->now_ns))
		timers_due(loop, EPOLLIN, NULL);
	/* Work the callbacks deferred, such as releasing a connection. */
	run_tasks(loop);
	/* [round] */
	loop->rounds++;
	if (n == 0)
		loop->idle_rounds++;
	free_watches(loop->dead);
	loop->dead = NULL;
	return n;
}
/* [loop-round] */

int rex_loop_run(struct rex_loop *loop)
{
	int ret = 0;

	while (!loop->stop) {
		ret = rex_loop_run_once(loop, -1);
		if (ret < 0)
			break;
		ret = 0;
	}
	loop->stop = false;
	return ret;
}

void rex_loop_stop(struct rex_loop *loop)
{
	loop->stop = true;
}

int rex_loop_fd(const struct rex_loop *loop)
{
	return loop->epfd;
}

void rex_loop_note_cq_events(struct rex_loop *loop, unsigned taken)
{
	if (taken > loop->most_cq_events)
		loop->most_cq_events = taken;
}

unsigned rex_loop_most_cq_events(const struct rex_loop *loop)
{
	return loop->most_cq_events;
}

void rex_loop_rounds(const struct rex_loop *loop, uint64_t *rounds, uint64_t *idle)
{
	*rounds = loop->rounds;
	*idle = loop->idle_rounds;
}

bool rex_loop_has_tasks(const struct rex_loop *loop)
{
	return loop->tasks != NULL;
}

bool rex_loop_stopping(const struct rex_loop *loop)
{
	return loop->stop;
}

uint64_t rex_loop_now_ns(const struct rex_loop *loop)
{
	return loop->now_ns;
}

/* --- signals -------------------------------------------------------------- */

static void signals_ready(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct watch *w = arg;
	struct signalfd_siginfo info[SIGNAL_BATCH];
	ssize_t n;
	size_t i;

	(void)events;
	for (;;) {
		n = read(loop->sigfd, info, sizeof(info));
		if (n < 0) {
			if (errno != EAGAIN)
				rex_report_errno("read signalfd", errno);
			return;
		}
		for (i = 0; i < (size_t)n / sizeof(info[0]); i++) {
			w->signal_fn(loop, (int)info[i].ssi_signo, w->user_arg);
			if (!w->fn)
				return; /* the callback removed the signalfd */
		}
	}
}

int rex_loop_add_signals(struct rex_loop *loop, const int *signals, int count,
                         rex_loop_signal_fn fn, void *arg)
{
	struct watch *w;
	sigset_t mask;
	int i, ret;

	if (loop->sigfd >= 0) {
		rex_errorf("rex_loop_add_signals: the loop has its signals already");
		return -EBUSY;
	}
	/* [signals] */
	sigemptyset(&mask);
	for (i = 0; i < count; i++)
		sigaddset(&mask, signals[i]);
	/* Blocked, the signals are not delivered the usual way but wait in
	 * the kernel, where the signalfd reads them. The mask is this thread's
	 * (sigprocmask() is unspecified in a program with threads); threads
	 * started later inherit it, and one started earlier must block them
	 * too, or the kernel may deliver a signal to it the usual way. */
	ret = pthread_sigmask(SIG_BLOCK, &mask, &loop->old_mask); /* an errno value */
	if (ret) {
		rex_report_errno("pthread_sigmask", ret);
		return -ret;
	}
	loop->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (loop->sigfd < 0) {
		ret = -errno;
		rex_report_errno("signalfd", errno);
		goto out_restore_mask;
	}
	/* [signals] */
	w = add_watch(loop, loop->sigfd, EPOLLIN, signals_ready, NULL, &ret);
	if (!w)
		goto out_close_signalfd;
	w->arg = w;
	w->signal_fn = fn;
	w->user_arg = arg;
	return 0;

out_close_signalfd:
	close(loop->sigfd);
	loop->sigfd = -1;
out_restore_mask:
	pthread_sigmask(SIG_SETMASK, &loop->old_mask, NULL);
	return ret;
}

/* --- asynchronous events -------------------------------------------------- */

/* Reading a device's async fd failed (the device is gone, or reset): it
 * may be readable for ever now. Stop watching it, and tell the handler
 * the device is dead, as the kernel's own event would. */
static void async_fd_failed(struct rex_loop *loop, struct watch *w, int err)
{
	struct ibv_async_event fatal = {.event_type = IBV_EVENT_DEVICE_FATAL};
	rex_loop_async_fn fn = w->async_fn;
	void *arg = w->user_arg;

	rex_report_errno("ibv_get_async_event", err);
	rex_loop_remove_fd(loop, w->fd); /* w stays readable until the round ends */
	fn(loop, &fatal, arg);
}

/* [async-events] */
static void async_events(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct watch *w = arg;
	struct ibv_async_event event, copy;
	int taken;

	(void)events;
	for (taken = 0; taken < REX_LOOP_BUDGET; taken++) {
		if (ibv_get_async_event(w->context, &event)) {
			if (errno != EAGAIN)
				async_fd_failed(loop, w, errno);
			return;
		}
		/* Copy, acknowledge, then act: the handler may destroy the
		 * event's QP or CQ, and their destruction waits for this ack. */
		copy = event;
		ibv_ack_async_event(&event);
		w->async_fn(loop, &copy, w->user_arg);
		if (!w->fn)
			return; /* the handler stopped watching this device */
	}
}
/* [async-events] */

int rex_loop_add_async(struct rex_loop *loop, struct ibv_context *context, rex_loop_async_fn fn,
                       void *arg)
{
	struct watch *w;
	int ret;

	w = add_watch(loop, context->async_fd, EPOLLIN, async_events, NULL, &ret);
	if (!w)
		return ret;
	w->arg = w;
	w->context = context;
	w->async_fn = fn;
	w->user_arg = arg;
	return 0;
}
