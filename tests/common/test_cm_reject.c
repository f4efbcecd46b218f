/* SPDX-License-Identifier: MIT */
/* rex_cm_reject_reason(): the IB CM reject reasons a REJECTED event carries. */
#include "check.h"
#include "rex_cm.h"

int main(void)
{
	int i;

	CHECK_STR_EQ(rex_cm_reject_reason(8), "invalid service ID");
	CHECK_STR_EQ(rex_cm_reject_reason(28), "consumer defined");
	CHECK_STR_EQ(rex_cm_reject_reason(1), "no queue pair available");
	CHECK_STR_EQ(rex_cm_reject_reason(0), "unknown reason");
	CHECK_STR_EQ(rex_cm_reject_reason(34), "unknown reason");
	CHECK_STR_EQ(rex_cm_reject_reason(999), "unknown reason");
	CHECK_STR_EQ(rex_cm_reject_reason(-111), "unknown reason");

	/* Every reason the IB spec defines from 1 to 33 has a text of its own. */
	for (i = 1; i <= 33; i++)
		CHECK_STR_LACKS(rex_cm_reject_reason(i), "unknown");

	return check_finish();
}
