/* SPDX-License-Identifier: MIT */
/* rex_options_parse() can run many times in one process, even after stopping mid-argument. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();
	struct parse_run run;
	int i;

	for (i = 0; i < 3; i++) {
		/* Stops inside the group "-vx": getopt() is left halfway through it. */
		CHECK_BAD(&client, "prog: unknown option -x", "-vxp", "9");

		RUN_PARSE(&client, &run, "-a", "first", "-p", "1111");
		CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
		CHECK_STR_EQ(run.opts.addr, "first");
		CHECK_INT_EQ(run.opts.port, 1111);
		CHECK_TRUE(!run.opts.verbose);
		run_free(&run);

		/* Help in the middle of the arguments stops the parse there. */
		RUN_PARSE(&client, &run, "-v", "-h", "-p", "0");
		CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
		run_free(&run);

		RUN_PARSE(&client, &run, "-p", "2222", "-a", "second", "-s", "8K");
		CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
		CHECK_STR_EQ(run.opts.addr, "second");
		CHECK_INT_EQ(run.opts.port, 2222);
		CHECK_U64_EQ(run.opts.size, 8192);
		CHECK_STR_EQ(run.err, "");
		run_free(&run);
	}
	return check_finish();
}
