/* SPDX-License-Identifier: MIT */
/*
 * When poll() says the channel is readable but rdma_get_cm_event() fails,
 * rex_cm_wait() returns that errno and names the call. The "channel" is the
 * read end of a pipe holding a byte: readable, yet not an rdma_cm fd, so
 * librdmacm fails (no device here, or EBADF writing its command to the pipe).
 */
#include <errno.h>
#include <unistd.h>

#include "capture.h"
#include "check.h"
#include "rex_cm.h"

int main(void)
{
	struct rdma_event_channel channel;
	struct rex_cm_event ev;
	struct capture cap;
	int fds[2];
	char *text;
	int ret;

	CHECK_INT_EQ(pipe(fds), 0);
	CHECK_INT_EQ(write(fds[1], "x", 1), 1);
	channel.fd = fds[0];

	capture_begin(&cap);
	ret = rex_cm_wait(&channel, RDMA_CM_EVENT_ESTABLISHED, 1000, &ev);
	text = capture_end(&cap);
	printf("rex_cm_wait returned %d; stderr: %s", ret, text);
	CHECK_TRUE(ret < 0);
	CHECK_TRUE(ret != -ETIMEDOUT);
	CHECK_TRUE(ev.id == NULL);
	CHECK_STR_CONTAINS(text, "rdma_get_cm_event: ");
	free(text);

	CHECK_INT_EQ(close(fds[0]), 0);
	CHECK_INT_EQ(close(fds[1]), 0);
	return check_finish();
}
