/* SPDX-License-Identifier: MIT */
/*
 * A CQ the loop could not arm again (rex_loop_cq::error) will not wake the
 * loop for its connection any more: the next poll says so, naming the
 * connection and the error, and closes the connection as failed.
 */
#include <errno.h>
#include <stdlib.h>

#include "aconn_fixture.h"
#include "capture.h"

int main(void)
{
	struct aconn_fixture f;
	struct capture cap;
	char *text;

	aconn_fixture_init(&f);
	f.c.lcq.error = -EIO;
	capture_begin(&cap);
	CHECK_INT_EQ(aconn_fixture_poll(&f), 0);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "test: connection 0: its CQ cannot be armed (Input/output error): "
	                         "closing it");
	CHECK_INT_EQ(f.c.state, REX_STATE_DRAINING);
	CHECK_TRUE(f.c.failed);
	CHECK_TRUE(f.c.release.queued); /* nothing was outstanding */
	free(text);
	aconn_fixture_fini(&f);
	return check_finish();
}
