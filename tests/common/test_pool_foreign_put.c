/* SPDX-License-Identifier: MIT */
/*
 * With checks built in (REX_POOL_CHECKS=1): releasing a buffer of another
 * pool, a pointer into the middle of a descriptor, or NULL is refused with
 * -EINVAL and a message; both pools are unharmed.
 */
#include <errno.h>

#include "capture.h"
#include "check.h"
#include "pool_fixture.h"

static void refused(struct rex_pool *pool, struct rex_pool_buf *buf, const char *message)
{
	struct capture cap;
	char *text;

	capture_begin(&cap);
	CHECK_INT_EQ(rex_pool_put(pool, buf), -EINVAL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, message);
	free(text);
}

int main(void)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = 64, .count = 2};
	struct rex_pool *one, *two;
	struct rex_pool_buf *a, *b;
	struct rex_pool_stats st;

	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;
	one = rex_pool_create(NULL, &attr);
	two = rex_pool_create(NULL, &attr);
	CHECK_TRUE(one && two);
	if (!one || !two)
		return check_finish();
	a = rex_pool_get(one);
	b = rex_pool_get(two);
	refused(two, a, "is not a buffer of this pool (released to the wrong pool?)");
	refused(one, b, "is not a buffer of this pool");
	refused(one, (struct rex_pool_buf *)((char *)a + 1), "is not a buffer of this pool");
	refused(one, NULL, "rex_pool_put: no buffer (NULL)");
	rex_pool_stats(one, &st);
	CHECK_INT_EQ(st.in_use, 1);
	rex_pool_stats(two, &st);
	CHECK_INT_EQ(st.in_use, 1);
	CHECK_INT_EQ(rex_pool_put(one, a), 0);
	CHECK_INT_EQ(rex_pool_put(two, b), 0);
	CHECK_INT_EQ(rex_pool_destroy(one), 0);
	CHECK_INT_EQ(rex_pool_destroy(two), 0);
	return check_finish();
}
