/* SPDX-License-Identifier: MIT */
/*
 * A signal whose handler runs ends rex_cm_wait() at once with -EINTR, as
 * read(2) does without SA_RESTART: a program whose SIGINT handler sets a flag
 * gets control back, even from a wait that would last forever. Nothing is
 * printed and no event is taken. A signal that is ignored changes nothing.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "check.h"
#include "rex_cm.h"

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static long long now_ms(void)
{
	struct timespec ts;

	CHECK_INT_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(void)
{
	struct sigaction sa;
	struct itimerval after_50ms = {{0, 0}, {0, 50000}};
	struct itimerval every_50ms = {{0, 50000}, {0, 50000}};
	struct itimerval off = {{0, 0}, {0, 0}};
	struct rdma_event_channel channel;
	struct rex_cm_event ev;
	struct capture cap;
	long long start, elapsed;
	char byte = 'x';
	int fds[2];
	char *text;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	CHECK_INT_EQ(sigemptyset(&sa.sa_mask), 0);
	CHECK_INT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_INT_EQ(pipe(fds), 0);
	channel.fd = fds[0];

	/* Waiting forever, a signal 50 ms in: back within a second, -EINTR.
	 * The signal comes every 50 ms until the wait is over: on a loaded
	 * machine the first can come before the wait has begun (this test
	 * once waited for ever, until ctest's timeout, that way). */
	start = now_ms(); /* before the timer: no signal comes sooner than 50 ms */
	CHECK_INT_EQ(setitimer(ITIMER_REAL, &every_50ms, NULL), 0);
	capture_begin(&cap);
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_CONNECT_REQUEST, -1, &ev);
	elapsed = now_ms() - start;
	CHECK_INT_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);
	text = capture_end(&cap);
	printf("a wait forever ended after %lld ms with %d (%d signals)\n", elapsed, ret,
	       (int)alarms);
	CHECK_INT_EQ(ret, -EINTR);
	CHECK_TRUE(alarms >= 1);
	CHECK_TRUE(elapsed >= 40 && elapsed < 1000);
	CHECK_STR_EQ(text, ""); /* the caller decides what to say */
	CHECK_TRUE(ev.id == NULL);
	free(text);

	/* Nothing was read from the channel: a byte written now is still there. */
	CHECK_INT_EQ(write(fds[1], &byte, 1), 1);
	byte = 0;
	CHECK_INT_EQ(read(fds[0], &byte, 1), 1);
	CHECK_INT_EQ(byte, 'x');

	/* An ignored signal runs no handler: the wait goes on to its timeout. */
	sa.sa_handler = SIG_IGN;
	CHECK_INT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_INT_EQ(setitimer(ITIMER_REAL, &after_50ms, NULL), 0);
	capture_begin(&cap);
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_CONNECT_REQUEST, 200, NULL);
	text = capture_end(&cap);
	CHECK_INT_EQ(ret, -ETIMEDOUT);
	CHECK_STR_CONTAINS(text, "rdma_cm: no RDMA_CM_EVENT_CONNECT_REQUEST within 200 ms");
	free(text);

	CHECK_INT_EQ(close(fds[0]), 0);
	CHECK_INT_EQ(close(fds[1]), 0);
	return check_finish();
}
