/* SPDX-License-Identifier: MIT */
/*
 * A zero-initialised rex_options_spec is usable: a maximum left at 0 means
 * "no upper limit" (it used to reject every -n, since max_count was 0), and
 * ranges that are given still hold.
 */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec spec = {
	    .program = "prog",
	    .flags = REX_OPT_SIZE | REX_OPT_COUNT | REX_OPT_WINDOW | REX_OPT_CLIENTS,
	};
	struct parse_run run;

	run_parse(&spec, (const char *[]){"-a", "x", "-n", "5", "-s", "1M", "-w", "300", "-c", "7",
	                                  NULL},
	          &run);
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_U64_EQ(run.opts.count, 5);
	CHECK_U64_EQ(run.opts.size, UINT64_C(1) << 20);
	CHECK_U64_EQ(run.opts.window, 300);
	CHECK_U64_EQ(run.opts.clients, 7);
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	/* The largest values still parse; a number past 64 bits does not. */
	run_parse(&spec, (const char *[]){"-a", "x", "-n", "18446744073709551615", NULL}, &run);
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_U64_EQ(run.opts.count, UINT64_MAX);
	run_free(&run);
	run_parse(&spec, (const char *[]){"-a", "x", "-n", "18446744073709551616", NULL}, &run);
	CHECK_INT_EQ(run.result, REX_OPTIONS_BAD);
	CHECK_STR_EQ(run.first_err_line, "prog: -n 18446744073709551616: out of range (0..18446744073709551615)");
	run_free(&run);

	/* A window of 0 is still refused: -w ranges from 1. */
	run_parse(&spec, (const char *[]){"-a", "x", "-w", "0", NULL}, &run);
	CHECK_INT_EQ(run.result, REX_OPTIONS_BAD);
	run_free(&run);

	/* A maximum that is given holds. */
	spec.max_count = 10;
	run_parse(&spec, (const char *[]){"-a", "x", "-n", "11", NULL}, &run);
	CHECK_INT_EQ(run.result, REX_OPTIONS_BAD);
	CHECK_STR_EQ(run.first_err_line, "prog: -n 11: out of range (0..10)");
	run_free(&run);

	return check_finish();
}
