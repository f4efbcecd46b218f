/* SPDX-License-Identifier: MIT */
/*
 * rex_cm_wait() gives up after timeout_ms with -ETIMEDOUT and a message naming
 * the event it waited for. No RDMA device is needed: the "channel" is a pipe
 * nobody writes to, so poll() never reports an event.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "capture.h"
#include "check.h"
#include "rex_cm.h"

static long long now_ms(void)
{
	struct timespec ts;

	CHECK_INT_EQ(clock_gettime(CLOCK_MONOTONIC, &ts), 0);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(void)
{
	struct rdma_event_channel channel;
	struct rex_cm_event ev;
	char expected[256];
	struct capture cap;
	long long start, elapsed;
	int fds[2];
	char *text;
	int ret;

	CHECK_INT_EQ(pipe(fds), 0);
	channel.fd = fds[0];

	ev.id = (struct rdma_cm_id *)&channel; /* must be cleared */
	capture_begin(&cap);
	start = now_ms();
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_ESTABLISHED, 100, &ev);
	elapsed = now_ms() - start;
	text = capture_end(&cap);
	CHECK_INT_EQ(ret, -ETIMEDOUT);
	snprintf(expected, sizeof(expected), "%s: rdma_cm: no RDMA_CM_EVENT_ESTABLISHED within 100 ms\n",
	         program_invocation_short_name);
	CHECK_STR_EQ(text, expected);
	CHECK_TRUE(elapsed >= 95 && elapsed < 5000);
	CHECK_TRUE(ev.id == NULL);
	CHECK_INT_EQ(ev.private_data_len, 0);
	free(text);

	/* A zero timeout only looks; out may be NULL. */
	capture_begin(&cap);
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_ADDR_RESOLVED, 0, NULL);
	text = capture_end(&cap);
	CHECK_INT_EQ(ret, -ETIMEDOUT);
	snprintf(expected, sizeof(expected), "%s: rdma_cm: no RDMA_CM_EVENT_ADDR_RESOLVED within 0 ms\n",
	         program_invocation_short_name);
	CHECK_STR_EQ(text, expected);
	free(text);

	/* A channel whose fd is not open: poll() reports it, no wait. (Not a
	 * just-closed fd: capture_begin() would reuse its number.) */
	channel.fd = 1000;
	CHECK_INT_EQ(fcntl(channel.fd, F_GETFD), -1);
	capture_begin(&cap);
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_ESTABLISHED, 5000, &ev);
	text = capture_end(&cap);
	CHECK_INT_EQ(ret, -EBADF);
	snprintf(expected, sizeof(expected), "%s: poll: event channel fd 1000 is not open\n",
	         program_invocation_short_name);
	CHECK_STR_EQ(text, expected);
	free(text);

	/* No channel at all. */
	capture_begin(&cap);
	ret = rex_cm_wait(NULL, RDMA_CM_EVENT_ESTABLISHED, 10, &ev);
	text = capture_end(&cap);
	CHECK_INT_EQ(ret, -EINVAL);
	CHECK_STR_CONTAINS(text, "rex_cm_wait");
	free(text);

	CHECK_INT_EQ(close(fds[0]), 0);
	CHECK_INT_EQ(close(fds[1]), 0);
	return check_finish();
}
