/* SPDX-License-Identifier: MIT */
/* Flags that are absent take the spec's defaults; port 0 means REX_DEFAULT_PORT. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec server = fixture_server_spec();
	struct rex_options_spec client = fixture_client_spec();
	struct parse_run run;

	/* A server with no arguments at all binds every address. */
	RUN_PARSE(&server, &run, NULL);
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_STR_EQ(run.opts.addr, NULL);
	CHECK_INT_EQ(run.opts.port, REX_DEFAULT_PORT);
	CHECK_INT_EQ(run.opts.port, 20886);
	CHECK_TRUE(!run.opts.verbose);
	CHECK_STR_EQ(run.out, "");
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	/* A client gives -a and gets every other default. */
	RUN_PARSE(&client, &run, "-a", "10.0.0.1");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_STR_EQ(run.opts.addr, "10.0.0.1");
	CHECK_INT_EQ(run.opts.port, REX_DEFAULT_PORT);
	CHECK_U64_EQ(run.opts.size, 4096);
	CHECK_U64_EQ(run.opts.count, 1000);
	CHECK_INT_EQ(run.opts.window, 16);
	CHECK_INT_EQ(run.opts.clients, 0);
	CHECK_TRUE(!run.opts.verbose);
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	/* A program's own default port and address are kept. */
	server.defaults.port = 7000;
	server.defaults.addr = "192.168.1.1";
	RUN_PARSE(&server, &run, NULL);
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.port, 7000);
	CHECK_STR_EQ(run.opts.addr, "192.168.1.1");
	run_free(&run);

	return check_finish();
}
