/* SPDX-License-Identifier: MIT */
/* rex_format_wc(): status text, name and number, wr_id, opcode (successes only), vendor_err, hint. */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "rex_error.h"

int main(void)
{
	struct ibv_wc wc;
	char buf[512];
	char expected[512];
	const char *nl;
	int n;

	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_RNR_RETRY_EXC_ERR;
	wc.wr_id = 42;
	wc.opcode = IBV_WC_SEND;
	wc.vendor_err = 0x81;

	n = rex_format_wc(buf, sizeof(buf), "ping", &wc);
	CHECK_INT_EQ(n, strlen(buf));
	snprintf(expected, sizeof(expected),
	         "ping: work completion failed: %s (IBV_WC_RNR_RETRY_EXC_ERR %d, wr_id 42, "
	         "vendor_err 0x81)\n  hint: ",
	         ibv_wc_status_str(IBV_WC_RNR_RETRY_EXC_ERR), (int)IBV_WC_RNR_RETRY_EXC_ERR);
	CHECK_TRUE(strncmp(buf, expected, strlen(expected)) == 0);
	CHECK_STR_CONTAINS(buf, "RNR"); /* ibv_wc_status_str() says "RNR retry counter exceeded" */
	CHECK_STR_CONTAINS(buf, "IBV_WC_RNR_RETRY_EXC_ERR 13,");
	CHECK_STR_LACKS(buf, "opcode"); /* not valid in a failed completion */
	CHECK_STR_CONTAINS(buf, "receive");
	nl = strchr(buf, '\n');
	CHECK_TRUE(nl != NULL);
	if (nl)
		CHECK_STR_LACKS(nl + 1, "\n"); /* the hint is one line */

	wc.status = IBV_WC_LOC_LEN_ERR;
	wc.opcode = IBV_WC_RECV;
	wc.wr_id = UINT64_MAX;
	rex_format_wc(buf, sizeof(buf), "recv", &wc);
	CHECK_STR_CONTAINS(buf, "(IBV_WC_LOC_LEN_ERR 1,");
	CHECK_STR_CONTAINS(buf, "wr_id 18446744073709551615");
	CHECK_STR_CONTAINS(buf, "hint: ");

	/* A successful completion the caller did not expect: its opcode, named
	 * or as a number. */
	wc.status = IBV_WC_SUCCESS;
	rex_format_wc(buf, sizeof(buf), "recv", &wc);
	CHECK_STR_CONTAINS(buf, ", opcode IBV_WC_RECV,");
	wc.opcode = (enum ibv_wc_opcode)77;
	rex_format_wc(buf, sizeof(buf), "odd", &wc);
	CHECK_STR_CONTAINS(buf, "opcode 77,");

	/* A status past the known ones prints as a number. */
	wc.status = (enum ibv_wc_status)99;
	rex_format_wc(buf, sizeof(buf), "odd", &wc);
	CHECK_STR_CONTAINS(buf, "(status 99,");

	/* A status without a hint has no hint line. */
	wc.status = IBV_WC_GENERAL_ERR;
	rex_format_wc(buf, sizeof(buf), "odd", &wc);
	CHECK_STR_LACKS(buf, "hint:");
	CHECK_STR_LACKS(buf, "\n");

	/* Every status the chapters meet has a hint. */
	CHECK_TRUE(rex_wc_hint(IBV_WC_RNR_RETRY_EXC_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_RETRY_EXC_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_REM_ACCESS_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_LOC_PROT_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_LOC_LEN_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_WR_FLUSH_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_REM_INV_REQ_ERR) != NULL);
	CHECK_TRUE(rex_wc_hint(IBV_WC_SUCCESS) == NULL);

	return check_finish();
}
