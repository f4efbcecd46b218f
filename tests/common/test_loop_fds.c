/* SPDX-License-Identifier: MIT */
/*
 * rex_loop's file descriptors, on pipes: a ready fd calls its function with
 * its argument; the fd is made non-blocking; the same fd twice is refused;
 * an fd removed by an earlier callback of the same round is not called,
 * though epoll reported it; removing an unknown fd says -ENOENT; and
 * rex_loop_run() returns once a callback stops the loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "check.h"
#include "rex_loop.h"

struct side {
	int fds[2]; /* a pipe: read end, write end */
	int calls;  /* times the read end's function ran */
	uint32_t events;
	int remove_fd; /* removed by this side's callback, -1 for none */
	bool stop;     /* stop the loop from the callback */
};

static void on_ready(struct rex_loop *loop, uint32_t events, void *arg)
{
	struct side *s = arg;
	char buf[16];

	s->calls++;
	s->events = events;
	while (read(s->fds[0], buf, sizeof(buf)) > 0) /* until EAGAIN */
		;
	if (s->remove_fd >= 0)
		CHECK_INT_EQ(rex_loop_remove_fd(loop, s->remove_fd), 0);
	if (s->stop)
		rex_loop_stop(loop);
}

int main(void)
{
	struct rex_loop *loop = rex_loop_create();
	struct side a = {.remove_fd = -1}, b = {.remove_fd = -1};

	CHECK_TRUE(loop != NULL);
	if (!loop)
		return check_finish();
	CHECK_INT_EQ(pipe(a.fds), 0);
	CHECK_INT_EQ(pipe(b.fds), 0);

	/* Nothing ready: a round with timeout 0 returns at once. */
	CHECK_INT_EQ(rex_loop_add_fd(loop, a.fds[0], EPOLLIN, on_ready, &a), 0);
	CHECK_TRUE(fcntl(a.fds[0], F_GETFL) & O_NONBLOCK);
	CHECK_INT_EQ(rex_loop_run_once(loop, 0), 0);
	CHECK_INT_EQ(a.calls, 0);

	/* Ready: called once, with EPOLLIN and its own argument. */
	CHECK_INT_EQ(write(a.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run_once(loop, 1000), 1);
	CHECK_INT_EQ(a.calls, 1);
	CHECK_TRUE(a.events & EPOLLIN);

	/* The same fd twice: refused, the first watch unharmed. */
	CHECK_INT_EQ(rex_loop_add_fd(loop, a.fds[0], EPOLLIN, on_ready, &b), -EEXIST);
	CHECK_INT_EQ(write(a.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run_once(loop, 1000), 1);
	CHECK_INT_EQ(a.calls, 2);
	CHECK_INT_EQ(b.calls, 0);

	/* Both ready in one round; whichever runs first removes the other,
	 * which must then not run, though epoll reported it. */
	CHECK_INT_EQ(rex_loop_add_fd(loop, b.fds[0], EPOLLIN, on_ready, &b), 0);
	a.remove_fd = b.fds[0];
	b.remove_fd = a.fds[0];
	CHECK_INT_EQ(write(a.fds[1], "x", 1), 1);
	CHECK_INT_EQ(write(b.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run_once(loop, 1000), 2);
	CHECK_INT_EQ((a.calls - 2) + b.calls, 1);
	/* The one that ran is still watched, the other is gone. */
	CHECK_INT_EQ(rex_loop_remove_fd(loop, a.fds[0]) + rex_loop_remove_fd(loop, b.fds[0]),
	             -ENOENT);
	CHECK_INT_EQ(rex_loop_remove_fd(loop, a.fds[0]), -ENOENT);

	/* rex_loop_run() returns 0 after the round whose callback stopped it,
	 * and a second run waits again (the stop was consumed). */
	a.remove_fd = -1;
	a.stop = true;
	CHECK_INT_EQ(rex_loop_add_fd(loop, a.fds[0], EPOLLIN, on_ready, &a), 0);
	CHECK_INT_EQ(write(a.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_run(loop), 0);
	CHECK_INT_EQ(rex_loop_run_once(loop, 0), 0);

	/* The fds are the caller's: still open after the loop is gone. */
	CHECK_INT_EQ(rex_loop_destroy(loop), 0);
	CHECK_INT_EQ(write(a.fds[1], "x", 1), 1);
	CHECK_INT_EQ(rex_loop_destroy(NULL), 0);
	close(a.fds[0]);
	close(a.fds[1]);
	close(b.fds[0]);
	close(b.fds[1]);
	return check_finish();
}
