/* SPDX-License-Identifier: MIT */
/*
 * With checks built in (this test is built with REX_POOL_CHECKS=1): a buffer
 * released twice is refused with -EINVAL and a message naming it, and the
 * pool is unharmed: its counters stay, and every buffer still comes out
 * exactly once.
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 64, .count = 3};
	struct rex_pool_buf *a, *b, *c;
	struct rex_pool_stats st;
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
	CHECK_INT_EQ(rex_pool_put(pool, b), 0);

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_put(pool, b), -EINVAL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "rex_pool_put: buffer 1 is already free (released twice?)");
	free(text);
	/* A buffer that was never handed out is free too. */
	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_put(pool, rex_pool_buf_at(pool, 2)), -EINVAL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "rex_pool_put: buffer 2 is already free");
	free(text);

	rex_pool_stats(pool, &st);
	CHECK_INT_EQ(st.in_use, 1);
	/* The free list was not corrupted: b and buffer 2, then nothing. */
	b = rex_pool_get(pool);
	c = rex_pool_get(pool);
	CHECK_TRUE(b && c && b != c && b != a && c != a);
	CHECK_TRUE(rex_pool_get(pool) == NULL);
	CHECK_INT_EQ(rex_pool_put(pool, a), 0);
	CHECK_INT_EQ(rex_pool_put(pool, b), 0);
	CHECK_INT_EQ(rex_pool_put(pool, c), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
