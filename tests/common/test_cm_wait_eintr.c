/* SPDX-License-Identifier: MIT */
/*
 * A signal arriving while rex_cm_wait() polls does not end the wait early nor
 * restart it from scratch: it waits out the rest of timeout_ms and no longer.
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

static void on_alarm(int sig)
{
	(void)sig; /* only here to interrupt poll() */
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
	/* A signal every 30 ms, starting after 30 ms. */
	struct itimerval every_30ms = {{0, 30000}, {0, 30000}};
	struct itimerval off = {{0, 0}, {0, 0}};
	struct rdma_event_channel channel;
	struct capture cap;
	long long start, elapsed;
	int fds[2];
	char *text;
	int ret;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm; /* no SA_RESTART; poll() is never restarted anyway */
	CHECK_INT_EQ(sigemptyset(&sa.sa_mask), 0);
	CHECK_INT_EQ(sigaction(SIGALRM, &sa, NULL), 0);
	CHECK_INT_EQ(pipe(fds), 0);
	channel.fd = fds[0];

	CHECK_INT_EQ(setitimer(ITIMER_REAL, &every_30ms, NULL), 0);
	capture_begin(&cap);
	start = now_ms();
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_CONNECT_REQUEST, 200, NULL);
	elapsed = now_ms() - start;
	text = capture_end(&cap);
	CHECK_INT_EQ(setitimer(ITIMER_REAL, &off, NULL), 0);

	CHECK_INT_EQ(ret, -ETIMEDOUT);
	CHECK_STR_EQ(text, "rdma_cm: no RDMA_CM_EVENT_CONNECT_REQUEST within 200 ms\n");
	printf("waited %lld ms for a 200 ms timeout\n", elapsed);
	CHECK_TRUE(elapsed >= 195);
	/* Restarting the full 200 ms after each signal would never end; allow slow CI. */
	CHECK_TRUE(elapsed < 2000);
	free(text);

	CHECK_INT_EQ(close(fds[0]), 0);
	CHECK_INT_EQ(close(fds[1]), 0);
	return check_finish();
}
