/* SPDX-License-Identifier: MIT */
/*
 * Exhaustion is back-pressure: with every buffer out, rex_pool_get() returns
 * NULL at once (no wait, no message, no crash), as often as it is asked; as
 * soon as one buffer comes back, the next get succeeds with that buffer.
 */
#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 4096, .count = 2};
	struct rex_pool_buf *a, *b;
	struct rex_pool *pool;
	struct capture cap;
	char *text;
	int i;

	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;
	pool = rex_pool_create(NULL, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return check_finish();
	a = rex_pool_get(pool);
	b = rex_pool_get(pool);
	CHECK_TRUE(a && b && a != b);
	capture_begin(&cap);
	for (i = 0; i < 1000; i++)
		CHECK_TRUE(rex_pool_get(pool) == NULL);
	text = capture_end(&cap);
	CHECK_STR_EQ(text, ""); /* back-pressure says nothing */
	free(text);

	CHECK_INT_EQ(rex_pool_put(pool, b), 0);
	CHECK_TRUE(rex_pool_get(pool) == b);
	CHECK_TRUE(rex_pool_get(pool) == NULL);
	CHECK_INT_EQ(rex_pool_put(pool, a), 0);
	CHECK_INT_EQ(rex_pool_put(pool, b), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
