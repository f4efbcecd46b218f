/* SPDX-License-Identifier: MIT */
/*
 * rex_pool_create() refuses what is not a pool (no attributes, no buffers,
 * empty buffers, a count the free list cannot index, sizes that overflow)
 * with NULL and EINVAL, after one line that says what it got, and without
 * registering anything. rex_pool_destroy(NULL) is a no-op.
 */
#include <errno.h>
#include <stdint.h>

#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

static void refused(const struct rex_pool_attr *attr, const char *message)
{
	struct capture cap;
	struct rex_pool *pool;
	char *text;

	capture_begin(&cap);
	errno = 0;
	pool = rex_pool_create(NULL, attr);
	CHECK_INT_EQ(errno, EINVAL);
	text = capture_end(&cap);
	CHECK_TRUE(pool == NULL);
	CHECK_STR_CONTAINS(text, message);
	free(text);
}

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 4096, .count = 8};

	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;

	refused(NULL, "rex_pool_create: 0 buffers of 0 bytes: not a pool");
	attr.count = 0;
	refused(&attr, "rex_pool_create: 0 buffers of 4096 bytes: not a pool");
	attr.count = 8;
	attr.buf_size = 0;
	refused(&attr, "rex_pool_create: 8 buffers of 0 bytes: not a pool");
	attr.buf_size = 64;
	attr.count = UINT32_MAX; /* the free list's end marker */
	refused(&attr, "not a pool");
	attr.count = 1u << 20;
	attr.buf_size = SIZE_MAX / 1024; /* count x size overflows */
	refused(&attr, "not a pool");
	attr.count = 2;
	attr.buf_size = SIZE_MAX;
	refused(&attr, "not a pool");
	CHECK_INT_EQ(fake.regs, 0);

	CHECK_INT_EQ(rex_pool_destroy(NULL), 0);
	return check_finish();
}
