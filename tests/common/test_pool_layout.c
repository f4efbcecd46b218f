/* SPDX-License-Identifier: MIT */
/*
 * The pool's region and its buffers: one registration of the whole region,
 * page aligned, with exactly the access asked for; buffers a 64-byte
 * multiple apart, inside the region, each with the region's keys and its
 * own index; rex_pool_buf_at() finds each by index and nothing past the end.
 */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "pool_fixture.h"

static void layout(size_t buf_size, uint32_t count, size_t stride, int access)
{
	struct fake_reg fake;
	struct rex_pool_attr attr = {.buf_size = buf_size, .count = count, .access = access};
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	const struct rex_pool_mem *mem;
	struct rex_pool *pool;
	uint32_t i;

	printf("%u buffers of %zu bytes, access 0x%x\n", (unsigned)count, buf_size, access);
	fake_reg_init(&fake);
	attr.registrar = &fake.registrar;
	pool = rex_pool_create(NULL, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return;
	mem = rex_pool_region(pool);
	CHECK_INT_EQ(fake.regs, 1); /* once, for everything */
	CHECK_TRUE(fake.last_addr == mem->addr);
	CHECK_U64_EQ(fake.last_len, mem->len);
	CHECK_INT_EQ(fake.last_access, access); /* exactly: nothing added */
	CHECK_INT_EQ(mem->pages, REX_POOL_PAGES_NORMAL);
	CHECK_U64_EQ(mem->page_size, page);
	CHECK_U64_EQ((uintptr_t)mem->addr % page, 0);
	CHECK_U64_EQ(mem->len % page, 0);
	CHECK_TRUE(mem->len >= stride * count);
	CHECK_U64_EQ(rex_pool_mr(pool)->lkey, FAKE_LKEY);

	for (i = 0; i < count; i++) {
		struct rex_pool_buf *b = rex_pool_buf_at(pool, i);

		CHECK_TRUE(b != NULL);
		if (!b)
			break;
		CHECK_TRUE((uint8_t *)b->addr == (uint8_t *)mem->addr + (size_t)i * stride);
		CHECK_U64_EQ((uintptr_t)b->addr % 64, 0);
		CHECK_U64_EQ(b->size, buf_size);
		CHECK_U64_EQ(b->lkey, FAKE_LKEY);
		CHECK_U64_EQ(b->rkey, FAKE_RKEY);
		CHECK_U64_EQ(b->index, i);
		CHECK_TRUE(!b->in_use);
		/* The memory starts zeroed. */
		CHECK_INT_EQ(((uint8_t *)b->addr)[0], 0);
		CHECK_INT_EQ(((uint8_t *)b->addr)[buf_size - 1], 0);
	}
	CHECK_TRUE(rex_pool_buf_at(pool, count) == NULL);
	CHECK_TRUE(rex_pool_buf_at(pool, UINT64_MAX) == NULL);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
	CHECK_INT_EQ(fake.deregs, 1);
}

int main(void)
{
	layout(4096, 16, 4096, IBV_ACCESS_LOCAL_WRITE);
	layout(100, 10, 128, 0); /* send only: no access flag at all */
	layout(1, 3, 64, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	layout(65536, 1, 65536, IBV_ACCESS_REMOTE_READ);
	return check_finish();
}
