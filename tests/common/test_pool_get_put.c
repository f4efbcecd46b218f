/* SPDX-License-Identifier: MIT */
/*
 * The free list: get hands out every buffer once, in index order at first;
 * put makes a buffer the next one handed out (last in, first out); buffers
 * released in any order all come back, none twice.
 */
#include <stdbool.h>

#include "check.h"
#include "pool_fixture.h"

#define COUNT 8

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 256, .count = COUNT};
	struct rex_pool_buf *held[COUNT], *b;
	bool seen[COUNT] = {false};
	struct rex_pool *pool;
	int i;

	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;
	pool = rex_pool_create(NULL, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return check_finish();

	for (i = 0; i < COUNT; i++) {
		held[i] = rex_pool_get(pool);
		CHECK_TRUE(held[i] != NULL);
		if (!held[i])
			return check_finish();
		CHECK_INT_EQ(held[i]->index, i);
		CHECK_TRUE(held[i]->in_use);
	}
	/* Last in, first out: the buffer put back is the next one out. */
	CHECK_INT_EQ(rex_pool_put(pool, held[5]), 0);
	CHECK_TRUE(!held[5]->in_use);
	b = rex_pool_get(pool);
	CHECK_TRUE(b == held[5]);
	CHECK_INT_EQ(rex_pool_put(pool, held[2]), 0);
	CHECK_INT_EQ(rex_pool_put(pool, held[7]), 0);
	CHECK_TRUE(rex_pool_get(pool) == held[7]);
	CHECK_TRUE(rex_pool_get(pool) == held[2]);

	/* Back in a scrambled order; then every buffer comes out exactly once. */
	for (i = 0; i < COUNT; i++)
		CHECK_INT_EQ(rex_pool_put(pool, held[(i * 3) % COUNT]), 0);
	for (i = 0; i < COUNT; i++) {
		b = rex_pool_get(pool);
		CHECK_TRUE(b != NULL);
		if (!b)
			break;
		CHECK_TRUE(!seen[b->index]);
		seen[b->index] = true;
		held[i] = b;
	}
	CHECK_TRUE(rex_pool_get(pool) == NULL);
	for (i = 0; i < COUNT; i++)
		CHECK_INT_EQ(rex_pool_put(pool, held[i]), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	return check_finish();
}
