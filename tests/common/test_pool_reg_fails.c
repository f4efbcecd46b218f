/* SPDX-License-Identifier: MIT */
/*
 * A failing registration: rex_pool_create() prints it as every helper does
 * ("ibv_reg_mr: Cannot allocate memory" and the memlock hint), returns NULL
 * with the registration's errno, and leaves nothing behind (the sanitizer
 * build checks for leaks).
 */
#include <errno.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {
	    .buf_size = 1 << 20, .count = 4, .access = IBV_ACCESS_LOCAL_WRITE};
	struct rex_pool *pool;
	struct capture cap;
	char *text;

	fake_reg_init(&fake);
	fake.reg_errno = ENOMEM;
	attr.registrar = &fake.registrar;
	capture_begin(&cap);
	errno = 0;
	pool = rex_pool_create(NULL, &attr);
	CHECK_INT_EQ(errno, ENOMEM);
	text = capture_end(&cap);
	CHECK_TRUE(pool == NULL);
	CHECK_INT_EQ(fake.regs, 1);
	CHECK_U64_EQ(fake.last_len, 4u << 20);
	CHECK_STR_CONTAINS(text, "ibv_reg_mr: Cannot allocate memory\n");
	CHECK_STR_CONTAINS(text, "RLIMIT_MEMLOCK");
	free(text);

	fake.reg_errno = EINVAL;
	capture_begin(&cap);
	errno = 0;
	pool = rex_pool_create(NULL, &attr);
	CHECK_INT_EQ(errno, EINVAL);
	text = capture_end(&cap);
	CHECK_TRUE(pool == NULL);
	CHECK_STR_CONTAINS(text, "ibv_reg_mr: Invalid argument");
	free(text);
	return check_finish();
}
