/* SPDX-License-Identifier: MIT */
/*
 * The state machine of a connection (rex_state in rex_loop.h): every one of
 * the 25 transitions between the five states, the legal ones taken and the
 * illegal ones refused with -EPERM and the state left as it was; values
 * outside the enum refused; and the names.
 */
#include <errno.h>

#include "check.h"
#include "rex_loop.h"

enum {
	R = REX_STATE_RESOLVING,
	C = REX_STATE_CONNECTING,
	E = REX_STATE_ESTABLISHED,
	D = REX_STATE_DRAINING,
	X = REX_STATE_CLOSED
};

/* The expected table, written out by hand (not derived from the code):
 * legal[from][to] is 1 where the transition is allowed. */
static const int legal[REX_STATE_COUNT][REX_STATE_COUNT] = {
    /*         R  C  E  D  X */
    [R] = {0, 1, 0, 1, 0}, /* resolved and connecting, or failed / shut down */
    [C] = {0, 0, 1, 1, 0}, /* established, or failed / shut down */
    [E] = {0, 0, 0, 1, 0}, /* every end goes through draining */
    [D] = {0, 0, 0, 0, 1}, /* drained */
    [X] = {0, 0, 0, 0, 0}, /* closed is final */
};

int main(void)
{
	int from, to, allowed = 0;

	for (from = 0; from < REX_STATE_COUNT; from++) {
		for (to = 0; to < REX_STATE_COUNT; to++) {
			enum rex_state s = (enum rex_state)from;
			int ret = rex_state_change(&s, (enum rex_state)to);

			printf("%-11s -> %-11s %s\n", rex_state_name((enum rex_state)from),
			       rex_state_name((enum rex_state)to),
			       legal[from][to] ? "legal" : "refused");
			CHECK_INT_EQ(rex_state_allowed((enum rex_state)from, (enum rex_state)to),
			             legal[from][to]);
			if (legal[from][to]) {
				CHECK_INT_EQ(ret, 0);
				CHECK_INT_EQ(s, to); /* taken */
				allowed++;
			} else {
				CHECK_INT_EQ(ret, -EPERM);
				CHECK_INT_EQ(s, from); /* unchanged */
			}
		}
	}
	CHECK_INT_EQ(allowed, 6);

	/* The whole life of a client's connection, and of a server's. */
	enum rex_state client = REX_STATE_RESOLVING, server = REX_STATE_CONNECTING;
	CHECK_INT_EQ(rex_state_change(&client, REX_STATE_CONNECTING), 0);
	CHECK_INT_EQ(rex_state_change(&client, REX_STATE_ESTABLISHED), 0);
	CHECK_INT_EQ(rex_state_change(&client, REX_STATE_DRAINING), 0);
	CHECK_INT_EQ(rex_state_change(&client, REX_STATE_CLOSED), 0);
	CHECK_INT_EQ(rex_state_change(&server, REX_STATE_ESTABLISHED), 0);
	CHECK_INT_EQ(rex_state_change(&server, REX_STATE_DRAINING), 0);
	/* A second close of the same connection is refused: one path releases it. */
	CHECK_INT_EQ(rex_state_change(&server, REX_STATE_DRAINING), -EPERM);
	CHECK_INT_EQ(rex_state_change(&server, REX_STATE_CLOSED), 0);
	CHECK_INT_EQ(rex_state_change(&server, REX_STATE_CLOSED), -EPERM);

	/* Values outside the enum: refused both ways, state untouched. */
	enum rex_state s = (enum rex_state)REX_STATE_COUNT;
	CHECK_INT_EQ(rex_state_allowed(s, REX_STATE_CLOSED), 0);
	CHECK_INT_EQ(rex_state_allowed(REX_STATE_DRAINING, (enum rex_state)(-1)), 0);
	CHECK_INT_EQ(rex_state_allowed(REX_STATE_DRAINING, (enum rex_state)31), 0);
	CHECK_INT_EQ(rex_state_change(&s, REX_STATE_CLOSED), -EPERM);
	CHECK_INT_EQ(s, REX_STATE_COUNT);

	CHECK_STR_EQ(rex_state_name(REX_STATE_RESOLVING), "resolving");
	CHECK_STR_EQ(rex_state_name(REX_STATE_CONNECTING), "connecting");
	CHECK_STR_EQ(rex_state_name(REX_STATE_ESTABLISHED), "established");
	CHECK_STR_EQ(rex_state_name(REX_STATE_DRAINING), "draining");
	CHECK_STR_EQ(rex_state_name(REX_STATE_CLOSED), "closed");
	CHECK_STR_EQ(rex_state_name((enum rex_state)REX_STATE_COUNT), "unknown");
	return check_finish();
}
