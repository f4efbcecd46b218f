/* SPDX-License-Identifier: MIT */
/*
 * rex_loop's timers, on its one timerfd: they fire in deadline order
 * whatever order they were started in, not before their deadline; a
 * cancelled timer never fires; starting an armed timer moves it; a timer's
 * function may start it again, cancel another one due in the same round,
 * or free the memory the timer lives in; a timer its function starts again
 * for a time already gone fires once a round, not forever in one round (05's
 * server once spun so, deaf to SIGINT, when a connection's idle deadline fell
 * between the round's waking and its timers); in a round where an fd is
 * ready and a timer is due, the fd comes first, and may cancel the timer;
 * timers due at the same time fire in the order they were started, and a
 * burst of them (a connect burst, each arming the same timeout) is armed
 * in linear time.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "check.h"
#include "rex_loop.h"

#define MS 1000000u /* nanoseconds */
#define ORDER_MAX 16 /* firings noted in order[] */

struct probe {
	struct rex_loop_timer timer;
	int id;
	int *order; /* where to write id when fired */
	int *fired;
	struct rex_loop_timer *cancel; /* cancel this one when fired */
	int restarts;                  /* start again this many times */
	bool restart_past;             /* ... for a deadline already gone */
	bool free_self;
};

static void fire(struct rex_loop *loop, void *arg)
{
	struct probe *p = arg;

	if (*p->fired < ORDER_MAX) /* a count past it is checked, not written */
		p->order[*p->fired] = p->id;
	(*p->fired)++;
	if (p->cancel)
		rex_loop_timer_cancel(loop, p->cancel);
	if (p->restarts > 0) {
		p->restarts--;
		if (p->restart_past)
			CHECK_INT_EQ(rex_loop_timer_start_at(loop, &p->timer, rex_loop_now_ns(loop) - MS), 0);
		else
			CHECK_INT_EQ(rex_loop_timer_start(loop, &p->timer, 1), 0);
	}
	if (p->free_self)
		free(p);
}

/* An fd's function for the last check: notes itself, may cancel a timer. */
struct reader {
	int fds[2];
	int *order, *fired;
	struct rex_loop_timer *cancel;
};

static void on_readable(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct reader *r = arg;
	char c;

	(void)events;
	while (read(r->fds[0], &c, 1) > 0)
		;
	r->order[(*r->fired)++] = 100;
	if (r->cancel)
		rex_loop_timer_cancel(loop, r->cancel);
}

/* Run rounds until \p n timers have fired, or 2 s have passed. */
static void run_until(struct rex_loop *loop, const int *fired, int n)
{
	int rounds;

	for (rounds = 0; *fired < n && rounds < 2000; rounds++)
		rex_loop_run_once(loop, 1);
}

int main(void)
{
	struct rex_loop *loop = rex_loop_create();
	struct probe p[4];
	int order[ORDER_MAX] = {0}, fired = 0, i;
	uint64_t start;

	CHECK_TRUE(loop != NULL);
	if (!loop)
		return check_finish();
	for (i = 0; i < 4; i++) {
		p[i] = (struct probe){.id = i + 1, .order = order, .fired = &fired};
		rex_loop_timer_init(&p[i].timer, fire, &p[i]);
		CHECK_TRUE(!rex_loop_timer_armed(&p[i].timer));
	}

	/* Started out of order: 30 ms, 10 ms, 20 ms; fired 2, 3, 1. */
	start = rex_loop_now_ns(loop);
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[0].timer, 30), 0);
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[1].timer, 10), 0);
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[2].timer, 20), 0);
	CHECK_TRUE(rex_loop_timer_armed(&p[0].timer));
	run_until(loop, &fired, 3);
	CHECK_INT_EQ(fired, 3);
	CHECK_INT_EQ(order[0], 2);
	CHECK_INT_EQ(order[1], 3);
	CHECK_INT_EQ(order[2], 1);
	CHECK_TRUE(rex_loop_now_ns(loop) - start >= 30 * MS); /* not early */
	CHECK_TRUE(!rex_loop_timer_armed(&p[0].timer));

	/* Cancelled: never fires. Moved: fires at its new deadline only. */
	fired = 0;
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[0].timer, 5), 0);
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[1].timer, 10), 0);
	rex_loop_timer_cancel(loop, &p[0].timer);
	rex_loop_timer_cancel(loop, &p[0].timer); /* not armed: nothing happens */
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[1].timer, 15), 0); /* moved */
	run_until(loop, &fired, 1);
	for (i = 0; i < 30; i++)
		rex_loop_run_once(loop, 1); /* nothing else may come */
	CHECK_INT_EQ(fired, 1);
	CHECK_INT_EQ(order[0], 2);

	/* Due in the same round: the first cancels the second, which must not
	 * fire although its deadline has passed too. */
	fired = 0;
	p[0].cancel = &p[1].timer;
	start = rex_loop_now_ns(loop);
	CHECK_INT_EQ(rex_loop_timer_start_at(loop, &p[0].timer, start + 1 * MS), 0);
	CHECK_INT_EQ(rex_loop_timer_start_at(loop, &p[1].timer, start + 2 * MS), 0);
	for (i = 0; i < 20; i++)
		rex_loop_run_once(loop, 1);
	CHECK_INT_EQ(fired, 1);
	CHECK_INT_EQ(order[0], 1);
	p[0].cancel = NULL;

	/* Started again from its own function: fires 3 times in all. */
	fired = 0;
	p[3].restarts = 2;
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[3].timer, 1), 0);
	run_until(loop, &fired, 3);
	CHECK_INT_EQ(fired, 3);
	CHECK_INT_EQ(order[2], 4);

	/* Started again from its own function for a time already gone: once a
	 * round, the rounds go on (without the rule, all 100 in one round). */
	fired = 0;
	p[3].restarts = 100;
	p[3].restart_past = true;
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[3].timer, 1), 0);
	run_until(loop, &fired, 1);
	CHECK_INT_EQ(fired, 1);
	for (i = 2; i <= 5; i++) {
		rex_loop_run_once(loop, 1000); /* due at once: no wait */
		CHECK_INT_EQ(fired, i);
	}
	rex_loop_timer_cancel(loop, &p[3].timer);
	p[3].restarts = 0;
	p[3].restart_past = false;

	/* Freed by its own function (the sanitizer build would catch a touch
	 * after the free). */
	fired = 0;
	struct probe *heap = malloc(sizeof(*heap));
	CHECK_TRUE(heap != NULL);
	if (heap) {
		*heap = (struct probe){.id = 9, .order = order, .fired = &fired, .free_self = true};
		rex_loop_timer_init(&heap->timer, fire, heap);
		CHECK_INT_EQ(rex_loop_timer_start(loop, &heap->timer, 1), 0);
		run_until(loop, &fired, 1);
		CHECK_INT_EQ(order[0], 9);
	}

	/* A round with an fd ready and a timer due: the fd first. */
	struct reader r = {.order = order, .fired = &fired};
	const struct timespec past_deadline = {.tv_sec = 0, .tv_nsec = 20 * MS};

	CHECK_INT_EQ(pipe(r.fds), 0);
	CHECK_INT_EQ(rex_loop_add_fd(loop, r.fds[0], EPOLLIN, on_readable, &r), 0);
	fired = 0;
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[0].timer, 5), 0);
	nanosleep(&past_deadline, NULL);
	CHECK_INT_EQ(write(r.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run_once(loop, 0), 2); /* both in one round */
	CHECK_INT_EQ(fired, 2);
	CHECK_INT_EQ(order[0], 100);
	CHECK_INT_EQ(order[1], 1);
	/* ... and the fd may cancel the timer due in the same round. */
	fired = 0;
	r.cancel = &p[0].timer;
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[0].timer, 5), 0);
	nanosleep(&past_deadline, NULL);
	CHECK_INT_EQ(write(r.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run_once(loop, 0), 2);
	CHECK_INT_EQ(fired, 1);
	CHECK_INT_EQ(order[0], 100);
	CHECK_TRUE(!rex_loop_timer_armed(&p[0].timer));
	CHECK_INT_EQ(rex_loop_remove_fd(loop, r.fds[0]), 0);
	close(r.fds[0]);
	close(r.fds[1]);

	/* Equal deadlines fire in the order they were started; one due before
	 * them, started after them, first. */
	fired = 0;
	start = rex_loop_now_ns(loop);
	for (i = 0; i < 3; i++)
		CHECK_INT_EQ(rex_loop_timer_start_at(loop, &p[i].timer, start + 3 * MS), 0);
	CHECK_INT_EQ(rex_loop_timer_start_at(loop, &p[3].timer, start + 2 * MS), 0);
	run_until(loop, &fired, 4);
	CHECK_INT_EQ(fired, 4);
	CHECK_INT_EQ(order[0], 4);
	CHECK_INT_EQ(order[1], 1);
	CHECK_INT_EQ(order[2], 2);
	CHECK_INT_EQ(order[3], 3);

	/* 100,000 timers with one deadline: walked from the head, each would
	 * pass all the earlier ones (5e9 steps, many seconds); from the tail,
	 * one step each (milliseconds). 2 s tells the two apart with room. */
	enum { BURST = 100000 };
	struct probe *burst = calloc(BURST, sizeof(*burst));
	CHECK_TRUE(burst != NULL);
	if (burst) {
		struct timespec t0, t1;
		uint64_t deadline = rex_loop_now_ns(loop) + 60000 * (uint64_t)MS;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (i = 0; i < BURST; i++) {
			rex_loop_timer_init(&burst[i].timer, fire, &burst[i]);
			rex_loop_timer_start_at(loop, &burst[i].timer, deadline);
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		CHECK_TRUE((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 <
		           2000);
		for (i = 0; i < BURST; i++)
			rex_loop_timer_cancel(loop, &burst[i].timer);
		free(burst);
	}

	/* Armed timers are forgotten, not called, by rex_loop_destroy(). */
	CHECK_INT_EQ(rex_loop_timer_start(loop, &p[0].timer, 1000), 0);
	CHECK_INT_EQ(rex_loop_destroy(loop), 0);
	return check_finish();
}
