/* SPDX-License-Identifier: MIT */
/* The programs take flags only: a positional argument is an error, wherever it is. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();
	struct rex_options_spec server = fixture_server_spec();

	CHECK_BAD(&client, "prog: unexpected argument 'extra' (flags only)", "-a", "h", "extra");
	CHECK_BAD(&client, "prog: unexpected argument 'extra' (flags only)", "extra", "-a", "h");
	CHECK_BAD(&client, "prog: unexpected argument '-p' (flags only)", "-a", "h", "--", "-p");
	CHECK_BAD(&server, "srv: unexpected argument '10.0.0.1' (flags only)", "10.0.0.1");
	return check_finish();
}
