/* SPDX-License-Identifier: MIT */
/*
 * A pool with buffers still out is not destroyed: -EBUSY, one line saying
 * how many are out, nothing deregistered, the pool usable as before. Once
 * they are back, destroy deregisters once and succeeds.
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 512, .count = 16};
	struct rex_pool_buf *a, *b, *c;
	struct rex_pool *pool;
	struct capture cap;
	char *text;

	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;
	pool = rex_pool_create(NULL, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return check_finish();
	a = rex_pool_get(pool);
	b = rex_pool_get(pool);
	c = rex_pool_get(pool);

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_destroy(pool), -EBUSY);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "rex_pool_destroy: 3 of 16 buffers are still out: release them "
	                         "(after their completions), then destroy the pool\n");
	free(text);
	CHECK_INT_EQ(fake.deregs, 0);

	/* Still a pool: the buffers can be used and released. */
	((char *)a->addr)[0] = 'x';
	CHECK_INT_EQ(rex_pool_put(pool, a), 0);
	CHECK_INT_EQ(rex_pool_put(pool, b), 0);
	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_destroy(pool), -EBUSY);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "1 of 16 buffers are still out");
	free(text);
	CHECK_INT_EQ(rex_pool_put(pool, c), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	CHECK_INT_EQ(fake.deregs, 1);
	return check_finish();
}
