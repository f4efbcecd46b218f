/* SPDX-License-Identifier: MIT */
/*
 * rex_error_set_hint_hook(): a program's own hint comes as one more
 * "  hint: " line after the generic one, in rex_format_errno() and in what
 * rex_report_errno() prints; rex_options_hint() is this project's hook, with
 * hints about its flags and its lab that the generic text leaves out.
 */
#include <errno.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "rex_error.h"
#include "rex_options.h"

static const char *my_hint(const char *call, int err)
{
	if (strcmp(call, "rdma_connect") == 0 && err == ECONNREFUSED)
		return "is my-server running?";
	return NULL;
}

int main(void)
{
	char buf[1024];
	char expected[1024];
	struct capture cap;
	char *text;

	/* No hook: the generic hint only. */
	rex_format_errno(buf, sizeof(buf), "rdma_connect", ECONNREFUSED);
	CHECK_STR_LACKS(buf, "my-server");

	/* The hook's hint follows the generic one, on a line of its own. */
	rex_error_set_hint_hook(my_hint);
	rex_format_errno(buf, sizeof(buf), "rdma_connect", ECONNREFUSED);
	snprintf(expected, sizeof(expected), "rdma_connect: %s\n  hint: %s\n  hint: is my-server running?",
	         strerror(ECONNREFUSED), rex_errno_hint("rdma_connect", ECONNREFUSED));
	CHECK_STR_EQ(buf, expected);
	/* A negative errno reaches the hook as a positive one. */
	CHECK_STR_EQ(rex_error_program_hint("rdma_connect", -ECONNREFUSED), "is my-server running?");

	/* A hook that has nothing to say adds nothing. */
	rex_format_errno(buf, sizeof(buf), "ibv_post_send", EINVAL);
	snprintf(expected, sizeof(expected), "ibv_post_send: %s", strerror(EINVAL));
	CHECK_STR_EQ(buf, expected);

	/* rex_report_errno() prints the same, after the program's name. */
	capture_begin(&cap);
	rex_report_errno("rdma_connect", ECONNREFUSED);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "  hint: is my-server running?\n");
	free(text);

	/* This project's hook: its flags and its lab. */
	rex_error_set_hint_hook(rex_options_hint);
	rex_format_errno(buf, sizeof(buf), "rdma_connect", ECONNREFUSED);
	CHECK_STR_CONTAINS(buf, "-a and -p");
	rex_format_errno(buf, sizeof(buf), "ibv_get_device_list", ENODEV);
	CHECK_STR_CONTAINS(buf, "scripts/lab run");
	rex_format_errno(buf, sizeof(buf), "rdma_resolve_addr", EHOSTUNREACH);
	CHECK_STR_CONTAINS(buf, "$RDMA_LAB_ADDR");
	rex_format_errno(buf, sizeof(buf), "rdma_bind_addr", EADDRINUSE);
	CHECK_STR_CONTAINS(buf, "another port with -p");
	rex_format_errno(buf, sizeof(buf), "rdma_bind_addr", EADDRNOTAVAIL);
	CHECK_STR_CONTAINS(buf, "another port with -p");
	CHECK_STR_LACKS(buf, "RDMA_LAB_ADDR");

	/* NULL removes the hook. */
	rex_error_set_hint_hook(NULL);
	rex_format_errno(buf, sizeof(buf), "rdma_connect", ECONNREFUSED);
	CHECK_STR_LACKS(buf, "-a and -p");
	CHECK_TRUE(rex_error_program_hint("rdma_connect", ECONNREFUSED) == NULL);

	return check_finish();
}
