/* SPDX-License-Identifier: MIT */
/* Unknown flags and flags without their value are named in one line. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();

	CHECK_BAD(&client, "prog: unknown option -x", "-a", "h", "-x");
	CHECK_BAD(&client, "prog: unknown option -x", "-vx");
	CHECK_BAD(&client, "prog: unknown option -?", "-?");
	CHECK_BAD(&client, "prog: unknown option --port=5", "--port=5");
	CHECK_BAD(&client, "prog: unknown option --frobnicate", "-a", "h", "--frobnicate");
	CHECK_BAD(&client, "prog: -s needs a value", "-a", "h", "-s");
	CHECK_BAD(&client, "prog: -p needs a value", "-a", "h", "-p");
	CHECK_BAD(&client, "prog: -a needs a value", "-a");
	return check_finish();
}
