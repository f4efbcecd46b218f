/* SPDX-License-Identifier: MIT */
/* A bad -s is one line naming the flag and the problem, then the usage. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();

	CHECK_BAD(&client, "prog: -s 99999999999G: out of range (1..1G)", "-a", "h", "-s",
	          "99999999999G");
	CHECK_BAD(&client, "prog: -s 99999999999999999999: out of range (1..1G)", "-a", "h", "-s",
	          "99999999999999999999");
	CHECK_BAD(&client, "prog: -s 2G: out of range (1..1G)", "-a", "h", "-s", "2G");
	CHECK_BAD(&client, "prog: -s 1073741825: out of range (1..1G)", "-a", "h", "-s",
	          "1073741825");
	CHECK_BAD(&client, "prog: -s 0: out of range (1..1G)", "-a", "h", "-s", "0");
	CHECK_BAD(&client, "prog: -s 1Q: not a size (digits and an optional K, M or G)", "-a", "h",
	          "-s", "1Q");
	CHECK_BAD(&client, "prog: -s -1: not a size (digits and an optional K, M or G)", "-a", "h",
	          "-s", "-1");
	CHECK_BAD(&client, "prog: -s '': not a size (digits and an optional K, M or G)", "-a", "h",
	          "-s", "");
	CHECK_BAD(&client, "prog: -s 4KB: not a size (digits and an optional K, M or G)", "-a", "h",
	          "-s", "4KB");
	CHECK_BAD(&client, "prog: -s 0x10: not a size (digits and an optional K, M or G)", "-a",
	          "h", "-s", "0x10");
	CHECK_BAD(&client, "prog: -s K: not a size (digits and an optional K, M or G)", "-a", "h",
	          "-s", "K");
	return check_finish();
}
