/* SPDX-License-Identifier: MIT */
/*
 * fake_core.c: what both halves of fuzz_aconn's fake (fake_verbs.c,
 * fake_cm.c) stand on: one input's state F, the calls the fuzzer makes
 * fail, the eventfds and the checks of an object's life; and the virtual
 * clock and the quiet stderr of the helper's files, which build.sh
 * compiles with clock_gettime, timerfd_create, timerfd_settime, write and
 * fprintf renamed to the fuzz_ functions here.
 *
 * Every channel is an eventfd, readable exactly while something is queued
 * on it, so the real rex_loop and its epoll see them as they would see the
 * kernel's. One input's state is the one structure F, reset by
 * fake_begin(): libFuzzer runs every input in one process.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fake_priv.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

struct fake_state F = {.timerfd = -1};

/* --- what both halves use ------------------------------------------------- */

void fake_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_aconn: fake verbs: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

bool fake_failing(enum fake_call call)
{
	bool f = F.fail[call];

	F.fail[call] = false;
	return f;
}

void fake_fail_next(enum fake_call call)
{
	F.fail[call % FAKE_CALLS] = true;
}

void fake_level(int fd, bool ready)
{
	uint64_t v = 1;

	if (read(fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		fake_die("read eventfd %d: %s", fd, strerror(errno));
	v = 1;
	if (ready && write(fd, &v, sizeof(v)) != sizeof(v))
		fake_die("write eventfd %d: %s", fd, strerror(errno));
}

int fake_new_fd(void)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

	if (fd < 0)
		fake_die("eventfd: %s", strerror(errno));
	return fd;
}

void fake_live(void *const *arr, unsigned n, const void *p, const char *what)
{
	if (!p || fake_slot_of(arr, n, p) < 0)
		fake_die("%s %p used but not alive (destroyed, or never made)", what, p);
}

int fake_slot_of(void *const *arr, unsigned n, const void *p)
{
	unsigned i;

	for (i = 0; i < n; i++)
		if (arr[i] == p)
			return (int)i;
	return -1;
}

struct fdev *fake_current_dev(void)
{
	unsigned i;

	for (i = 0; i < NDEVS; i++)
		if (!F.devs[i]->dead)
			return F.devs[i];
	return NULL;
}

/* --- the clock and the timerfd ------------------------------------------- */

static void timer_check(void)
{
	if (F.timer_armed && F.timer_at <= F.now) {
		F.timer_armed = false; /* one shot, as the loop arms it */
		fake_level(F.timerfd, true);
	}
}

void fake_advance_ms(unsigned ms)
{
	F.now += (uint64_t)ms * 1000000u;
	timer_check();
}

void fake_set_tick(uint64_t tick_ns)
{
	F.tick = tick_ns;
}

int fuzz_clock_gettime(clockid_t clock, struct timespec *ts)
{
	(void)clock;
	F.now += F.tick;
	timer_check();
	ts->tv_sec = (time_t)(F.now / 1000000000u);
	ts->tv_nsec = (long)(F.now % 1000000000u);
	return 0;
}

int fuzz_timerfd_create(int clock, int flags)
{
	(void)clock;
	(void)flags;
	if (F.timerfd >= 0)
		fake_die("a second timerfd: one loop per input");
	F.timerfd = fake_new_fd();
	return F.timerfd;
}

int fuzz_timerfd_settime(int fd, int flags, const struct itimerspec *its, struct itimerspec *old)
{
	uint64_t at =
	    (uint64_t)its->it_value.tv_sec * 1000000000u + (uint64_t)its->it_value.tv_nsec;

	(void)old;
	if (fd != F.timerfd)
		fake_die("timerfd_settime on fd %d, not the timerfd", fd);
	fake_level(fd, false); /* setting it again clears what expired */
	F.timer_armed = at != 0;
	F.timer_at = (flags & TFD_TIMER_ABSTIME) ? at : F.now + at;
	timer_check();
	return 0;
}

void fake_set_quiet(bool quiet)
{
	F.quiet = quiet;
}

ssize_t fuzz_write(int fd, const void *buf, size_t len)
{
	if (fd == STDERR_FILENO && F.quiet)
		return (ssize_t)len;
	return write(fd, buf, len);
}

int fuzz_fprintf(FILE *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (f == stderr && F.quiet)
		return 0;
	va_start(ap, fmt);
	n = vfprintf(f, fmt, ap);
	va_end(ap);
	return n;
}
