/* SPDX-License-Identifier: MIT */
/* -a: required for a client, optional for a server, never empty or a flag. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();
	struct rex_options_spec server = fixture_server_spec();
	struct parse_run run;

	CHECK_BAD(&client, "prog: missing -a ADDR (the server to connect to)", NULL);
	CHECK_BAD(&client, "prog: missing -a ADDR (the server to connect to)", "-p", "5", "-v");
	CHECK_BAD(&client, "prog: -a '': not an address", "-a", "");
	CHECK_BAD(&client, "prog: -a -p: not an address", "-a", "-p", "5");
	CHECK_BAD(&server, "srv: -a '': not an address", "-a", "");

	RUN_PARSE(&server, &run, "-p", "5");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_STR_EQ(run.opts.addr, NULL);
	run_free(&run);

	RUN_PARSE(&server, &run, "-a", "fe80::1%eth0");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_STR_EQ(run.opts.addr, "fe80::1%eth0");
	run_free(&run);

	return check_finish();
}
