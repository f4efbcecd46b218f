/* SPDX-License-Identifier: MIT */
/*
 * A failing registration: rex_pool_create() prints it as every registering
 * helper does ("ibv_reg_mr of N bytes: Cannot allocate memory", and a hint
 * that names the locked-memory limit, what was asked and how to raise it,
 * with the soft limit set to 64 KiB here), returns NULL
 * with the registration's errno, and leaves nothing behind (the sanitizer
 * build checks for leaks).
 */
#include <errno.h>
#include <string.h>
#include <sys/resource.h>

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
	struct rlimit lim;
	char *text;

	/* A finite limit, as an unprivileged user has (lowering it is allowed). */
	CHECK_INT_EQ(getrlimit(RLIMIT_MEMLOCK, &lim), 0);
	lim.rlim_cur = 64 * 1024;
	CHECK_INT_EQ(setrlimit(RLIMIT_MEMLOCK, &lim), 0);
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
	CHECK_STR_CONTAINS(text, "ibv_reg_mr of 4194304 bytes: Cannot allocate memory\n");
	CHECK_STR_CONTAINS(text, "(RLIMIT_MEMLOCK, `ulimit -l`): 64 KiB for this process, and "
	                         "this registration asked for 4096 KiB more");
	CHECK_STR_CONTAINS(text, "hint: raise the limit for this user: `memlock` in "
	                         "/etc/security/limits.conf");
	free(text);

	fake.reg_errno = EINVAL;
	capture_begin(&cap);
	errno = 0;
	pool = rex_pool_create(NULL, &attr);
	CHECK_INT_EQ(errno, EINVAL);
	text = capture_end(&cap);
	CHECK_TRUE(pool == NULL);
	CHECK_STR_CONTAINS(text, "ibv_reg_mr of 4194304 bytes: Invalid argument");
	CHECK_STR_LACKS(text, "RLIMIT_MEMLOCK"); /* not the limit's doing */
	free(text);
	return check_finish();
}
