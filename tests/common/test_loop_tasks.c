/* SPDX-License-Identifier: MIT */
/*
 * rex_loop's tasks: a task posted from a callback runs after every callback
 * of that round; posting it twice runs it once; a task taken out of the
 * queue does not run; a task posted by a task runs in the same round; and a
 * round with tasks queued does not sleep.
 */
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "check.h"
#include "rex_loop.h"

struct trace {
	char log[32];
	int len;
	struct rex_loop_task task, second, chained;
	int fds[2][2];
};

static void note(struct trace *t, char c)
{
	if (t->len < (int)sizeof(t->log) - 1)
		t->log[t->len++] = c;
}

static void task_a(struct rex_loop *loop, void *arg)
{
	(void)loop;
	note(arg, 'T');
}

static void task_b(struct rex_loop *loop, void *arg)
{
	(void)loop;
	note(arg, 'U');
}

static void task_posts(struct rex_loop *loop, void *arg)
{
	struct trace *t = arg;

	note(t, 'P');
	rex_loop_post(loop, &t->task);
}

/* Each pipe's callback notes its index and posts the task (twice). */
static void on_ready(struct rex_loop *loop, int which, struct trace *t)
{
	char c;

	while (read(t->fds[which][0], &c, 1) > 0)
		;
	note(t, (char)('0' + which));
	rex_loop_post(loop, &t->task);
	rex_loop_post(loop, &t->task);
}

static void on_ready0(struct rex_loop *loop, uint32_t events, void *arg)
{
	(void)events;
	on_ready(loop, 0, arg);
}

static void on_ready1(struct rex_loop *loop, uint32_t events, void *arg)
{
	(void)events;
	on_ready(loop, 1, arg);
}

int main(void)
{
	struct rex_loop *loop = rex_loop_create();
	struct trace t;

	memset(&t, 0, sizeof(t));

	CHECK_TRUE(loop != NULL);
	if (!loop)
		return check_finish();
	rex_loop_task_init(&t.task, task_a, &t);
	rex_loop_task_init(&t.second, task_b, &t);
	rex_loop_task_init(&t.chained, task_posts, &t);
	CHECK_INT_EQ(pipe(t.fds[0]), 0);
	CHECK_INT_EQ(pipe(t.fds[1]), 0);
	CHECK_INT_EQ(rex_loop_add_fd(loop, t.fds[0][0], EPOLLIN, on_ready0, &t), 0);
	CHECK_INT_EQ(rex_loop_add_fd(loop, t.fds[1][0], EPOLLIN, on_ready1, &t), 0);

	/* Two callbacks post the same task four times: it runs once, last. */
	CHECK_INT_EQ(write(t.fds[0][1], "x", 1), 1);
	CHECK_INT_EQ(write(t.fds[1][1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run_once(loop, 1000), 2);
	CHECK_INT_EQ(t.len, 3);
	CHECK_TRUE(t.log[2] == 'T');
	CHECK_TRUE((t.log[0] == '0' && t.log[1] == '1') || (t.log[0] == '1' && t.log[1] == '0'));

	/* Posted from outside a round: runs in the next one, which does not
	 * sleep (a timeout of 10 s would fail the test's 30 s limit thrice). */
	t.len = 0;
	rex_loop_post(loop, &t.task);
	rex_loop_post(loop, &t.second);
	rex_loop_unpost(loop, &t.task); /* out again: only U runs */
	rex_loop_unpost(loop, &t.task); /* not queued: nothing happens */
	CHECK_INT_EQ(rex_loop_run_once(loop, 10000), 0);
	t.log[t.len] = '\0';
	CHECK_STR_EQ(t.log, "U");

	/* Unposting the tail, then posting again, keeps the queue whole. */
	t.len = 0;
	rex_loop_post(loop, &t.second);
	rex_loop_post(loop, &t.task);
	rex_loop_unpost(loop, &t.task);
	rex_loop_post(loop, &t.task);
	CHECK_INT_EQ(rex_loop_run_once(loop, 0), 0);
	t.log[t.len] = '\0';
	CHECK_STR_EQ(t.log, "UT");

	/* A task that posts a task: both in the same round. */
	t.len = 0;
	rex_loop_post(loop, &t.chained);
	CHECK_INT_EQ(rex_loop_run_once(loop, 10000), 0);
	t.log[t.len] = '\0';
	CHECK_STR_EQ(t.log, "PT");

	CHECK_INT_EQ(rex_loop_destroy(loop), 0);
	close(t.fds[0][0]);
	close(t.fds[0][1]);
	close(t.fds[1][0]);
	close(t.fds[1][1]);
	return check_finish();
}
