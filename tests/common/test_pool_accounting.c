/* SPDX-License-Identifier: MIT */
/*
 * The counters: buffers in use now, the high-water mark, buffers handed out,
 * and gets refused because every buffer was out.
 */
#include "check.h"
#include "pool_fixture.h"

static void expect(struct rex_pool *pool, uint32_t in_use, uint32_t high_water, uint64_t gets,
                   uint64_t refused)
{
	struct rex_pool_stats st;

	rex_pool_stats(pool, &st);
	CHECK_INT_EQ(st.count, 4);
	CHECK_INT_EQ(st.in_use, in_use);
	CHECK_INT_EQ(st.high_water, high_water);
	CHECK_U64_EQ(st.gets, gets);
	CHECK_U64_EQ(st.refused, refused);
}

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 64, .count = 4};
	struct rex_pool_buf *a, *b, *c, *d;
	struct rex_pool *pool;

	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;
	pool = rex_pool_create(NULL, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return check_finish();
	expect(pool, 0, 0, 0, 0);
	a = rex_pool_get(pool);
	b = rex_pool_get(pool);
	expect(pool, 2, 2, 2, 0);
	CHECK_INT_EQ(rex_pool_put(pool, a), 0);
	expect(pool, 1, 2, 2, 0); /* the high-water mark stays */
	a = rex_pool_get(pool);
	c = rex_pool_get(pool);
	d = rex_pool_get(pool);
	expect(pool, 4, 4, 5, 0);
	CHECK_TRUE(rex_pool_get(pool) == NULL);
	CHECK_TRUE(rex_pool_get(pool) == NULL);
	expect(pool, 4, 4, 5, 2); /* refusals are counted, not handed out */
	CHECK_INT_EQ(rex_pool_put(pool, a), 0);
	CHECK_INT_EQ(rex_pool_put(pool, b), 0);
	CHECK_INT_EQ(rex_pool_put(pool, c), 0);
	CHECK_INT_EQ(rex_pool_put(pool, d), 0);
	expect(pool, 0, 4, 5, 2);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
