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
	/* Every line starts with the program's name. */
	snprintf(expected, sizeof(expected), "%s: ibv_post_send: %s\n",
	         program_invocation_short_name, strerror(ENOMEM));
	CHECK_STR_EQ(text, expected);
	free(text);

	capture_begin(&cap);
	rex_report_errno("ibv_reg_mr", ENOMEM);
	text = capture_end(&cap);
	n = snprintf(expected, sizeof(expected), "%s: ", program_invocation_short_name);
	n += rex_format_errno(expected + n, sizeof(expected) - 1 - (size_t)n, "ibv_reg_mr", ENOMEM);
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
	n = snprintf(expected, sizeof(expected), "%s: ", program_invocation_short_name);
	n += rex_format_wc(expected + n, sizeof(expected) - 1 - (size_t)n, "write", &wc);
	expected[n] = '\n';
	expected[n + 1] = '\0';
	CHECK_STR_EQ(text, expected);
	free(text);

	/* rex_errorf(): the name, the message, a newline. */
	capture_begin(&cap);
	rex_errorf("rdma_cm: no %s within %d ms", "RDMA_CM_EVENT_ESTABLISHED", 5);
	text = capture_end(&cap);
	snprintf(expected, sizeof(expected), "%s: rdma_cm: no RDMA_CM_EVENT_ESTABLISHED within 5 ms\n",
	         program_invocation_short_name);
	CHECK_STR_EQ(text, expected);
	free(text);

	return check_finish();
}
