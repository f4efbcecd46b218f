/* SPDX-License-Identifier: MIT */
/*
 * A failing deregistration is reported like every verbs failure of common/
 * ("ibv_dereg_mr: Input/output error") and returned as a negative errno;
 * the pool stays as it was (the registration stands, so its memory is not
 * unmapped), and a later destroy can finish the job.
 */
#include <errno.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 4096, .count = 4};
	struct rex_pool_buf *b;
	struct rex_pool *pool;
	struct capture cap;
	char expected[256];
	char *text;

	fake_reg_init(&fake);
	fake.dereg_fails = 1;
	attr.registrar = &fake.registrar;
	pool = rex_pool_create(NULL, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return check_finish();

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_destroy(pool), -EIO);
	text = capture_end(&cap);
	snprintf(expected, sizeof(expected), "%s: ibv_dereg_mr: %s\n",
	         program_invocation_short_name, strerror(EIO));
	CHECK_STR_EQ(text, expected);
	free(text);
	CHECK_INT_EQ(fake.deregs, 1);

	/* The pool and its memory are still there. */
	b = rex_pool_get(pool);
	CHECK_TRUE(b != NULL);
	if (b) {
		memset(b->addr, 0xab, b->size);
		CHECK_INT_EQ(rex_pool_put(pool, b), 0);
	}
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	CHECK_INT_EQ(fake.deregs, 2);
	return check_finish();
}
