/* SPDX-License-Identifier: MIT */
/*
 * -k SLOTS (REX_OPT_SLOTS), the one flag chapter 04 added: parsed into
 * rex_options::slots within [min_slots, max_slots], a maximum of 0 meaning
 * no limit; shown in the usage only when enabled, and rejected like any
 * unknown flag when not.
 */
#include "options_fixture.h"

static struct rex_options_spec ring_spec(void)
{
	struct rex_options_spec spec = {
	    .program = "ring",
	    .summary = "a ring of slots",
	    .is_server = true,
	    .flags = REX_OPT_SIZE | REX_OPT_SLOTS | REX_OPT_CLIENTS,
	    .defaults = {.size = 4096, .slots = 16, .clients = 1},
	    .min_size = 1,
	    .max_size = 1 << 20,
	    .min_slots = 1,
	    .max_slots = 256,
	};
	return spec;
}

int main(void)
{
	struct rex_options_spec spec = ring_spec();
	struct parse_run run;

	/* The default, then both ends of the range. */
	RUN_PARSE(&spec, &run, "-p", "7");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.slots, 16);
	run_free(&run);
	RUN_PARSE(&spec, &run, "-k", "1");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.slots, 1);
	run_free(&run);
	RUN_PARSE(&spec, &run, "-k256", "-s", "64K");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_INT_EQ(run.opts.slots, 256);
	CHECK_U64_EQ(run.opts.size, 65536);
	CHECK_STR_EQ(run.err, "");
	run_free(&run);

	/* Outside the range, not a number, no value: one line naming -k. */
	CHECK_BAD(&spec, "ring: -k 0: out of range (1..256)", "-k", "0");
	CHECK_BAD(&spec, "ring: -k 257: out of range (1..256)", "-k", "257");
	CHECK_BAD(&spec, "ring: -k 4K: not a number", "-k", "4K");
	CHECK_BAD(&spec, "ring: -k -1: not a number", "-k", "-1");
	CHECK_BAD(&spec, "ring: -k needs a value", "-k");

	/* The usage shows -k with its range and default. */
	RUN_PARSE(&spec, &run, "-h");
	CHECK_INT_EQ(run.result, REX_OPTIONS_HELP);
	CHECK_STR_CONTAINS(run.out, "usage: ring [-a ADDR] [-p PORT] [-s SIZE] [-k SLOTS] "
	                            "[-c CLIENTS] [-v] [-h]\n");
	CHECK_STR_CONTAINS(run.out, "  -k SLOTS    slots in the ring, 1..256 (default 16)\n");
	run_free(&run);

	/* A maximum of 0: no upper limit. */
	spec.max_slots = 0;
	RUN_PARSE(&spec, &run, "-k", "4294967295");
	CHECK_INT_EQ(run.result, REX_OPTIONS_OK);
	CHECK_U64_EQ(run.opts.slots, 4294967295u);
	run_free(&run);
	CHECK_BAD(&spec, "ring: -k 4294967296: out of range (1..4294967295)", "-k", "4294967296");

	/* Not enabled: -k is unknown, and the usage does not mention it. */
	spec = fixture_client_spec();
	CHECK_BAD(&spec, "prog: unknown option -k", "-a", "h", "-k", "4");
	RUN_PARSE(&spec, &run, "-h");
	CHECK_STR_LACKS(run.out, "-k SLOTS");
	run_free(&run);

	return check_finish();
}
