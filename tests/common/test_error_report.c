/* SPDX-License-Identifier: MIT */
/* rex_report_errno() and rex_report_wc() print the formatted message and a newline to stderr. */
#include <errno.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "rex_error.h"

int main(void)
{
	struct capture cap;
	struct ibv_wc wc;
	char expected[1024];
	char *text;
	int n;

	/* A negative errno (as the helpers return) is accepted. */
	capture_begin(&cap);
	rex_report_errno("ibv_post_send", -ENOMEM);
	text = capture_end(&cap);
	snprintf(expected, sizeof(expected), "ibv_post_send: %s\n", strerror(ENOMEM));
	CHECK_STR_EQ(text, expected);
	free(text);

	capture_begin(&cap);
	rex_report_errno("ibv_reg_mr", ENOMEM);
	text = capture_end(&cap);
	n = rex_format_errno(expected, sizeof(expected) - 1, "ibv_reg_mr", ENOMEM);
	expected[n] = '\n';
	expected[n + 1] = '\0';
	CHECK_STR_EQ(text, expected);
	free(text);

	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_RETRY_EXC_ERR;
	wc.wr_id = 7;
	capture_begin(&cap);
	rex_report_wc("write", &wc);
	text = capture_end(&cap);
	n = rex_format_wc(expected, sizeof(expected) - 1, "write", &wc);
	expected[n] = '\n';
	expected[n + 1] = '\0';
	CHECK_STR_EQ(text, expected);
	free(text);

	return check_finish();
}
