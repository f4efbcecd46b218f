/* SPDX-License-Identifier: MIT */
/* Bad -n, -w and -c values: one line naming the flag and the problem, then the usage. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec client = fixture_client_spec();

	CHECK_BAD(&client, "prog: -n 0: out of range (1..1000000)", "-a", "h", "-n", "0");
	CHECK_BAD(&client, "prog: -n 1000001: out of range (1..1000000)", "-a", "h", "-n",
	          "1000001");
	CHECK_BAD(&client, "prog: -n ten: not a count", "-a", "h", "-n", "ten");
	CHECK_BAD(&client, "prog: -n 1K: not a count", "-a", "h", "-n", "1K");
	CHECK_BAD(&client, "prog: -w 0: out of range (1..128)", "-a", "h", "-w", "0");
	CHECK_BAD(&client, "prog: -w 129: out of range (1..128)", "-a", "h", "-w", "129");
	CHECK_BAD(&client, "prog: -w -4: not a number", "-a", "h", "-w", "-4");
	CHECK_BAD(&client, "prog: -c 65: out of range (0..64)", "-a", "h", "-c", "65");
	CHECK_BAD(&client, "prog: -c 1.5: not a number", "-a", "h", "-c", "1.5");
	return check_finish();
}
