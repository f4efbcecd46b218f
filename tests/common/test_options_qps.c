/* SPDX-License-Identifier: MIT */
/*
 * -q CONNECTIONS (REX_OPT_QPS), the flag chapter 05 added: parsed into
 * rex_options::qps within 1..max_qps, a maximum of 0 meaning no limit;
 * shown in the usage only when enabled, and rejected like any unknown flag
 * when not.
 */
#include "options_fixture.h"

static struct rex_options_spec many_spec(void)
{
	struct rex_options_spec spec = {
	    .program = "many",
	    .summary = "many connections at once",
	    .is_server = false,
	    .flags = REX_OPT_COUNT | REX_OPT_WINDOW | REX_OPT_QPS,
	    .defaults = {.count = 100, .window = 1, .qps = 1},
	    .min_count = 1,
	    .max_count = 1000,
	    .max_window = 64,
	    .max_qps = 256,
	};
	return spec;
}

int main(void)
{
	struct rex_options_spec spec = many_spec();
	struct parse_run run;

	/* The default, then both ends of the range, with the other flags. */
	RUN_PARSE(&spec, &run, "-a", "h");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.qps, 1);
	run_free(&run);
	RUN_PARSE(&spec, &run, "-a", "h", "-q", "1");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.qps, 1);
	run_free(&run);
	RUN_PARSE(&spec, &run, "-a", "h", "-q256", "-w", "4", "-n", "10");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.qps, 256);
	CHECK_INT_EQ(run.opts.window, 4);
	CHECK_U64_EQ(run.opts.count, 10);
	CHECK_STR_EQ(run.err, "");
	run_free(&run);
	/* The last of a repeated -q counts. */
	RUN_PARSE(&spec, &run, "-a", "h", "-q", "8", "-q", "64");
	CHECK_INT_EQ(run.opts.qps, 64);
	run_free(&run);

	/* Outside the range, not a number, no value: one line naming -q. */
	CHECK_BAD(&spec, "many: -q 0: out of range (1..256)", "-a", "h", "-q", "0");
	CHECK_BAD(&spec, "many: -q 257: out of range (1..256)", "-a", "h", "-q", "257");
	CHECK_BAD(&spec, "many: -q 8K: not a number", "-a", "h", "-q", "8K");
	CHECK_BAD(&spec, "many: -q -1: not a number", "-a", "h", "-q", "-1");
	CHECK_BAD(&spec, "many: -q needs a value", "-a", "h", "-q");

	/* The usage shows -q with its range and default. */
	RUN_PARSE(&spec, &run, "-h");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_CONTAINS(run.out, "usage: many -a ADDR [-p PORT] [-n COUNT] [-w WINDOW] "
	                            "[-q CONNECTIONS] [-v] [-h]\n");
	CHECK_STR_CONTAINS(
	    run.out, "  -q CONNECTIONS  connections (queue pairs) at once, 1..256 (default 1)\n");
	run_free(&run);

	/* A maximum of 0: no upper limit. */
	spec.max_qps = 0;
	RUN_PARSE(&spec, &run, "-a", "h", "-q", "4294967295");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_U64_EQ(run.opts.qps, 4294967295u);
	run_free(&run);
	CHECK_BAD(&spec, "many: -q 4294967296: out of range (1..4294967295)", "-a", "h", "-q",
	          "4294967296");

	/* Not enabled: -q is unknown, and the usage does not mention it. */
	spec = fixture_client_spec();
	CHECK_BAD(&spec, "prog: unknown option -q", "-a", "h", "-q", "4");
	RUN_PARSE(&spec, &run, "-h");
	CHECK_STR_LACKS(run.out, "-q CONNECTIONS");
	run_free(&run);

	return check_finish();
}
