/* SPDX-License-Identifier: MIT */
/* A bad -p is one line naming the flag and the problem, then the usage. */
#include "options_fixture.h"

int main(void)
{
	struct rex_options_spec server = fixture_server_spec();

	CHECK_BAD(&server, "srv: -p 0: out of range (1..65535)", "-p", "0");
	CHECK_BAD(&server, "srv: -p 65536: out of range (1..65535)", "-p", "65536");
	CHECK_BAD(&server, "srv: -p 70000: out of range (1..65535)", "-p", "70000");
	CHECK_BAD(&server, "srv: -p 99999999999999999999999: out of range (1..65535)", "-p",
	          "99999999999999999999999");
	CHECK_BAD(&server, "srv: -p abc: not a port number", "-p", "abc");
	CHECK_BAD(&server, "srv: -p -1: not a port number", "-p", "-1");
	CHECK_BAD(&server, "srv: -p +1: not a port number", "-p", "+1");
	CHECK_BAD(&server, "srv: -p 12x: not a port number", "-p", "12x");
	CHECK_BAD(&server, "srv: -p 0x50: not a port number", "-p", "0x50");
	CHECK_BAD(&server, "srv: -p '': not a port number", "-p", "");
	CHECK_BAD(&server, "srv: -p ' 80': not a port number", "-p", " 80");
	return check_finish();
}
