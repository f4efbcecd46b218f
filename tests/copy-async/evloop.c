/* SPDX-License-Identifier: MIT */
/*
 * evloop.c: the helpers' loop inside libevent's, as a service that has a
 * libevent loop already would run them (rex_loop.h, rex_loop_fd()): one
 * event watches the loop's fd, a second one is the deferred call for its
 * tasks, and no timer is needed (the loop's timers are an fd in it).
 */
#include <event2/event.h>

#include "rex_loop.h"

int evloop_run(struct rex_loop *loop);

struct evloop {
	struct rex_loop *loop;
	struct event_base *base;
	struct event *ready; /* the loop's fd is readable */
	struct event *tasks; /* activated by hand: tasks are queued */
};

/* One round of the helpers' loop, from either event. */
static void round_of(evutil_socket_t fd, short what, void *arg)
{
	struct evloop *e = arg;

	(void)fd;
	(void)what;
	if (rex_loop_run_once(e->loop, 0) < 0 || rex_loop_stopping(e->loop))
		event_base_loopbreak(e->base);
	else if (rex_loop_has_tasks(e->loop))
		event_active(e->tasks, 0, 0);
}

/* Run \p loop inside a libevent loop until a callback calls rex_loop_stop(). */
int evloop_run(struct rex_loop *loop)
{
	struct evloop e = {.loop = loop};
	int ret = -1;

	e.base = event_base_new();
	if (!e.base)
		return -1;
	e.ready = event_new(e.base, rex_loop_fd(loop), EV_READ | EV_PERSIST, round_of, &e);
	e.tasks = event_new(e.base, -1, 0, round_of, &e);
	if (e.ready && e.tasks && event_add(e.ready, NULL) == 0) {
		if (rex_loop_has_tasks(loop))
			event_active(e.tasks, 0, 0);
		ret = event_base_dispatch(e.base) < 0 ? -1 : 0;
	}
	if (e.tasks)
		event_free(e.tasks);
	if (e.ready)
		event_free(e.ready);
	event_base_free(e.base);
	return ret;
}
