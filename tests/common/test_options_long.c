/* SPDX-License-Identifier: MIT */
/*
 * The long forms users type first: --help prints the usage to out_stream
 * and asks to exit 0, as -h does; --version prints the program's name and
 * version, also to out_stream, and asks to exit 0.
 */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();
	struct parse_run run;

	RUN_PARSE(&client, &run, "--help");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_EQ(run.err, "");
	CHECK_STR_CONTAINS(run.out, "usage: prog -a ADDR");
	run_free(&run);

	RUN_PARSE(&client, &run, "--version");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_EQ(run.err, "");
	CHECK_STR_EQ(run.out, "prog (RDMA by Example) " REX_VERSION "\n");
	run_free(&run);
	return check_finish();
}
