/* SPDX-License-Identifier: MIT */
/*
 * A CQ the loop could not arm again (rex_loop_cq::error) will not wake the
 * loop for its connection any more: the next poll says so, naming the
 * connection and the error, and closes the connection as failed. The line
 * starts with the program's name, then who and which connection.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aconn_fixture.h"
#include "capture.h"

int main(void)
{
	struct aconn_fixture f;
	struct capture cap;
	char expected[256];
	char *text;

	aconn_fixture_init(&f);
	f.c.lcq.error = -EIO;
	capture_begin(&cap);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	text = capture_end(&cap);
	/* Like every line of the helpers, it starts with the program's name. */
	snprintf(expected, sizeof(expected),
	         "%s: test: connection 0: its CQ cannot be armed (%s): closing it\n",
	         program_invocation_short_name, strerror(EIO));
	CHECK_STR_EQ(text, expected);
	CHECK_INT_EQ(f.c.state, REX_STATE_DRAINING);
	CHECK_TRUE(f.c.failed);
	CHECK_TRUE(f.c.release.queued); /* nothing was outstanding */
	free(text);
	aconn_fixture_fini(&f);
	return check_finish();
}
