/* SPDX-License-Identifier: MIT */
/*
 * The defaults of rex_aconn_attr keep the rules rex_aconn.h gives: every
 * wait on a peer has a deadline (idle is not 0), the idle deadline is longer
 * than the transport takes to notice a dead peer (a lost packet must not be
 * read as silence), and the drain deadline covers two tries of the CM's
 * disconnect. A device set made without settings takes these.
 */
#include "check.h"
#include "rex_aconn.h"

/* 4.096 us x 2^ack_timeout a try, retry_count resends: in ms, rounded up. */
static unsigned dead_peer_ms(const struct rex_aconn_attr *a)
{
	unsigned long long try_ns = 4096ull << a->ack_timeout;

	return (unsigned)(((a->retry_count + 1ull) * try_ns + 999999) / 1000000);
}

int main(void)
{
	struct rex_aconn_attr a;
	struct rex_aconn_devs devs;
	struct rex_loop *loop;

	rex_aconn_attr_default(&a);
	CHECK_TRUE(a.idle_timeout_ms != 0);
	CHECK_U64_EQ(dead_peer_ms(&a), 3759); /* 7 x 0.54 s: the header's 3.8 s */
	CHECK_TRUE(a.idle_timeout_ms > dead_peer_ms(&a));
	CHECK_TRUE(a.drain_timeout_ms >= 2 * 4600); /* two DREQs: 9.2 s */
	CHECK_TRUE(a.setup_timeout_ms > 2 * a.resolve_timeout_ms);
	CHECK_TRUE(a.retry_count < 7 && a.rnr_retry_count < 7); /* 7: for ever */

	loop = rex_loop_create();
	CHECK_TRUE(loop != NULL);
	rex_aconn_devs_init(&devs, loop, "test", NULL, NULL, NULL, NULL);
	CHECK_U64_EQ(devs.attr.idle_timeout_ms, a.idle_timeout_ms);
	CHECK_U64_EQ(devs.attr.drain_timeout_ms, a.drain_timeout_ms);
	CHECK_INT_EQ(rex_loop_destroy(loop), 0);
	return check_finish();
}
