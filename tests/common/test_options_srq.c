/* SPDX-License-Identifier: MIT */
/*
 * -S RECVS (REX_OPT_SRQ), the flag chapter 06 added for servers: parsed
 * into rex_options::srq within 0..max_srq (0: no shared receive queue), a
 * maximum of 0 meaning no limit; shown in the usage only when enabled, and
 * rejected like any unknown flag when not.
 */
#include "options_fixture.h"

static struct rex_options_spec srq_spec(void)
{
	struct rex_options_spec spec = {
	    .program = "serve",
	    .summary = "serve many connections",
	    .is_server = true,
	    .flags = REX_OPT_SRQ,
	    .max_srq = 65536,
	};
	return spec;
}

int main(void)
{
	struct rex_options_spec spec = srq_spec();
	struct parse_run run;

	/* The default (none), then both ends of the range. */
	RUN_PARSE(&spec, &run, "-p", "7");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.srq, 0);
	run_free(&run);
	RUN_PARSE(&spec, &run, "-S", "0");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.srq, 0);
	run_free(&run);
	RUN_PARSE(&spec, &run, "-S65536", "-a", "10.0.0.1");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.srq, 65536);
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	/* Outside the range, not a number, no value: one line naming -S. */
	CHECK_BAD(&spec, "serve: -S 65537: out of range (0..65536)", "-S", "65537");
	CHECK_BAD(&spec, "serve: -S 4K: not a number", "-S", "4K");
	CHECK_BAD(&spec, "serve: -S needs a value", "-S");

	/* The usage shows -S with its range and default. */
	RUN_PARSE(&spec, &run, "-h");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_CONTAINS(run.out, "usage: serve [-a ADDR] [-p PORT] [-S RECVS] [-v] [-h]\n");
	CHECK_STR_CONTAINS(run.out, "  -S RECVS    one shared receive queue of RECVS receives for "
	                            "every connection,\n"
	                            "              0..65536, 0 = each connection its own "
	                            "(default 0)\n");
	run_free(&run);

	/* A maximum of 0: no upper limit. */
	spec.max_srq = 0;
	RUN_PARSE(&spec, &run, "-S", "4294967295");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_U64_EQ(run.opts.srq, 4294967295u);
	run_free(&run);

	/* Not enabled: -S is unknown, and the usage does not mention it. */
	spec = fixture_client_spec();
	CHECK_BAD(&spec, "prog: unknown option -S", "-a", "h", "-S", "4");
	RUN_PARSE(&spec, &run, "-h");
	CHECK_STR_LACKS(run.out, "-S RECVS");
	run_free(&run);
	return check_finish();
}
