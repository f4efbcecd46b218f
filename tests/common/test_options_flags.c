/* SPDX-License-Identifier: MIT */
/* Every flag is parsed into its field, including the ends of each range. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();
	struct parse_run run;

	RUN_PARSE(&client, &run, "-a", "10.0.0.1", "-p", "1234", "-s", "64K", "-n", "10", "-w", "4",
	          "-c", "3", "-v");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_STR_EQ(run.opts.addr, "10.0.0.1");
	CHECK_INT_EQ(run.opts.port, 1234);
	CHECK_U64_EQ(run.opts.size, 65536);
	CHECK_U64_EQ(run.opts.count, 10);
	CHECK_INT_EQ(run.opts.window, 4);
	CHECK_INT_EQ(run.opts.clients, 3);
	CHECK_TRUE(run.opts.verbose);
	CHECK_STR_EQ(run.out, "");
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	/* The lowest value of every range. */
	RUN_PARSE(&client, &run, "-a", "h", "-p", "1", "-s", "1", "-n", "1", "-w", "1", "-c", "0");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.port, 1);
	CHECK_U64_EQ(run.opts.size, 1);
	CHECK_U64_EQ(run.opts.count, 1);
	CHECK_INT_EQ(run.opts.window, 1);
	CHECK_INT_EQ(run.opts.clients, 0);
	run_free(&run);

	/* The highest value of every range. */
	RUN_PARSE(&client, &run, "-a", "h", "-p", "65535", "-s", "1G", "-n", "1000000", "-w", "128",
	          "-c", "64");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.port, 65535);
	CHECK_U64_EQ(run.opts.size, GIB);
	CHECK_U64_EQ(run.opts.count, 1000000);
	CHECK_INT_EQ(run.opts.window, 128);
	CHECK_INT_EQ(run.opts.clients, 64);
	run_free(&run);

	/* Values glued to their flag, grouped flags, and the last of a repeated flag. */
	RUN_PARSE(&client, &run, "-vah", "-p1", "-p", "2", "-s2m");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_TRUE(run.opts.verbose);
	CHECK_STR_EQ(run.opts.addr, "h");
	CHECK_INT_EQ(run.opts.port, 2);
	CHECK_U64_EQ(run.opts.size, 2 << 20);
	run_free(&run);

	/* "--" ends the flags. */
	RUN_PARSE(&client, &run, "-a", "h", "--");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	run_free(&run);

	return check_finish();
}
