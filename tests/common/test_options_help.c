/* SPDX-License-Identifier: MIT */
/* -h prints the usage, with every default and range, to out_stream and asks to exit 0. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();
	struct rex_options_spec server = fixture_server_spec();
	struct parse_run run;

	RUN_PARSE(&client, &run, "-h");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_EQ(run.err, "");
	CHECK_STR_CONTAINS(run.out, "usage: prog -a ADDR [-p PORT] [-s SIZE] [-n COUNT] "
	                            "[-w WINDOW] [-c CLIENTS] [-v] [-h]\n");
	CHECK_STR_CONTAINS(run.out, "\n  a test program\n");
	CHECK_STR_CONTAINS(run.out, "-a ADDR     server address to connect to (required)\n");
	CHECK_STR_CONTAINS(run.out, "-p PORT     port to connect to, 1..65535 (default 20886)\n");
	CHECK_STR_CONTAINS(run.out, "-s SIZE     size in bytes, K/M/G suffix allowed, 1..1G "
	                            "(default 4K)\n");
	CHECK_STR_CONTAINS(run.out, "-n COUNT    messages or operations, 1..1000000 "
	                            "(default 1000)\n");
	CHECK_STR_CONTAINS(run.out,
	                   "-w WINDOW   messages in flight at once, 1..128 (default 16)\n");
	CHECK_STR_CONTAINS(run.out, "-c CLIENTS  clients to serve, one after another, 0..64, "
	                            "0 = no limit (default 0)\n");
	CHECK_STR_CONTAINS(run.out, "-v          verbose");
	CHECK_STR_CONTAINS(run.out, "-h, --help  print this help and exit\n");
	CHECK_STR_CONTAINS(run.out, "--version   print the version and exit\n");
	CHECK_STR_CONTAINS(run.out, "exit status: 0 ok, 1 failure, 2 bad command line, "
	                            "77 no usable RDMA device\n");
	run_free(&run);

	/* rex_options_usage() prints the same text. */
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		CHECK_TRUE(f != NULL);
		if (f) {
			rex_options_usage(&client, f);
			CHECK_INT_EQ(fclose(f), 0);
			CHECK_STR_CONTAINS(text, "usage: prog -a ADDR [-p PORT]");
			free(text);
		}
	}

	/* A server: -a is optional, and flags it did not enable are not shown. */
	server.defaults.port = 7000;
	RUN_PARSE(&server, &run, "-p", "5", "-h");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_CONTAINS(run.out, "usage: srv [-a ADDR] [-p PORT] [-v] [-h]\n");
	CHECK_STR_CONTAINS(run.out, "-a ADDR     local address to bind (default: all addresses)\n");
	CHECK_STR_CONTAINS(run.out, "-p PORT     port to listen on, 1..65535 (default 7000)\n");
	CHECK_STR_LACKS(run.out, "-s SIZE");
	CHECK_STR_LACKS(run.out, "-n COUNT");
	CHECK_STR_LACKS(run.out, "-w WINDOW");
	CHECK_STR_LACKS(run.out, "-c CLIENTS");
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	return check_finish();
}
