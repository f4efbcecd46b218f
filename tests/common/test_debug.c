/* SPDX-License-Identifier: MIT */
/* rex_debug() prints "WHO: debug: ...\n" to stderr with -v, and nothing without. */
#include <stdbool.h>
#include <stdlib.h>

#include "capture.h"
#include "check.h"
#include "rex_options.h"

int main(void)
{
	struct capture cap;
	char *text;

	capture_begin(&cap);
	rex_debug(false, "client", "seed 0x%08x, %d ms", 0x5eedu, 250);
	text = capture_end(&cap);
	CHECK_STR_EQ(text, "");
	free(text);

	capture_begin(&cap);
	rex_debug(true, "client", "seed 0x%08x, %d ms", 0x5eedu, 250);
	text = capture_end(&cap);
	CHECK_STR_EQ(text, "client: debug: seed 0x00005eed, 250 ms\n");
	free(text);

	return check_finish();
}
