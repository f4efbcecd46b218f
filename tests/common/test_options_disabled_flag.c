/* SPDX-License-Identifier: MIT */
/* A flag the program did not enable is rejected like any unknown flag. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec server = fixture_server_spec();
	struct rex_options_spec client = fixture_client_spec();

	CHECK_BAD(&server, "srv: unknown option -s", "-s", "4K");
	CHECK_BAD(&server, "srv: unknown option -n", "-n", "5");
	CHECK_BAD(&server, "srv: unknown option -w", "-w", "5");
	CHECK_BAD(&server, "srv: unknown option -c", "-c", "5");

	/* Only -c is off: the others still work, -c does not. */
	client.flags &= ~(unsigned)REX_OPT_CLIENTS;
	CHECK_BAD(&client, "prog: unknown option -c", "-a", "h", "-s", "1K", "-c", "1");
	return check_finish();
}
