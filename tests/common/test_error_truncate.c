/* SPDX-License-Identifier: MIT */
/* The formatters cut the text to the buffer, NUL-terminate it and return the full length. */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "rex_error.h"

int main(void)
{
	char full[512];
	char small[16];
	struct ibv_wc wc;
	int n, m;

	n = rex_format_errno(full, sizeof(full), "ibv_reg_mr", ENOMEM);
	CHECK_TRUE(n > (int)sizeof(small));

	memset(small, 'x', sizeof(small));
	m = rex_format_errno(small, sizeof(small), "ibv_reg_mr", ENOMEM);
	CHECK_INT_EQ(m, n);
	CHECK_INT_EQ(small[sizeof(small) - 1], '\0');
	CHECK_INT_EQ(strlen(small), sizeof(small) - 1);
	CHECK_TRUE(strncmp(small, full, sizeof(small) - 1) == 0);

	/* A zero-length buffer is not written; the length is still returned. */
	small[0] = 'x';
	CHECK_INT_EQ(rex_format_errno(small, 0, "ibv_reg_mr", ENOMEM), n);
	CHECK_INT_EQ(small[0], 'x');
	CHECK_INT_EQ(rex_format_errno(NULL, 0, "ibv_reg_mr", ENOMEM), n);

	/* Same for work completions. */
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_WR_FLUSH_ERR;
	n = rex_format_wc(full, sizeof(full), "send", &wc);
	CHECK_INT_EQ(n, strlen(full));
	memset(small, 'x', sizeof(small));
	CHECK_INT_EQ(rex_format_wc(small, sizeof(small), "send", &wc), n);
	CHECK_INT_EQ(strlen(small), sizeof(small) - 1);
	CHECK_INT_EQ(rex_format_wc(NULL, 0, "send", &wc), n);

	return check_finish();
}
