/* SPDX-License-Identifier: MIT */
/*
 * The test common.pool_registered: rex_pool on a real RDMA device (label
 * rdma; the lab runs it). One registration covers the whole region and
 * every buffer carries its keys; normal and huge pages both register; a
 * pool of send buffers registers with no access flag at all; remote write
 * without local write is refused by the device (the pool adds no flag to
 * mend it); exhaustion and a busy destroy behave as without a device.
 *
 * Exit 77 when there is no device (1 when REX_REQUIRE_RDMA=1 says there
 * must be one).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capture.h"
#include "check.h"
#include "rex_device.h"
#include "rex_pool.h"

static void registered(struct ibv_pd *pd, uint32_t count, size_t size, int access, unsigned flags)
{
	struct rex_pool_attr attr = {
	    .buf_size = size, .count = count, .access = access, .flags = flags};
	struct rex_pool_buf *held[64];
	const struct rex_pool_mem *mem;
	struct rex_pool *pool;
	struct ibv_mr *mr;
	uint32_t i;

	pool = rex_pool_create(pd, &attr);
	CHECK_TRUE(pool != NULL);
	if (!pool)
		return;
	mem = rex_pool_region(pool);
	mr = rex_pool_mr(pool);
	printf("pool_registered: %u x %zu bytes, access 0x%x: %zu bytes in %s pages of %zu, "
	       "lkey 0x%08x rkey 0x%08x\n",
	       (unsigned)count, size, access, mem->len, rex_pool_pages_name(mem->pages),
	       mem->page_size, mr->lkey, mr->rkey);
	CHECK_TRUE(mr->addr == mem->addr);
	CHECK_U64_EQ(mr->length, mem->len);
	CHECK_TRUE(mr->pd == pd);
	CHECK_U64_EQ((uintptr_t)mem->addr % mem->page_size, 0);
	for (i = 0; i < count && i < 64; i++) {
		held[i] = rex_pool_get(pool);
		CHECK_TRUE(held[i] != NULL);
		if (!held[i])
			return;
		CHECK_U64_EQ(held[i]->lkey, mr->lkey);
		CHECK_U64_EQ(held[i]->rkey, mr->rkey);
		CHECK_TRUE((uint8_t *)held[i]->addr + size <= (uint8_t *)mem->addr + mem->len);
		memset(held[i]->addr, (int)i, size); /* ours to write */
	}
	CHECK_TRUE(rex_pool_get(pool) == NULL); /* exhausted */
	CHECK_INT_EQ(rex_pool_destroy(pool), -EBUSY);
	for (i = 0; i < count && i < 64; i++)
		CHECK_INT_EQ(rex_pool_put(pool, held[i]), 0);
	CHECK_INT_EQ(rex_pool_destroy(pool), 0);
}

int main(void)
{
	struct rex_pool_attr attr = {
	    .buf_size = 4096, .count = 4, .access = IBV_ACCESS_REMOTE_WRITE};
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct capture cap;
	struct ibv_pd *pd;
	char *text;
	int num = 0;

	if (rex_device_present() < 0)
		return getenv("REX_REQUIRE_RDMA") && !strcmp(getenv("REX_REQUIRE_RDMA"), "1") ? 1
		                                                                              : 77;
	list = ibv_get_device_list(&num);
	if (!list || num < 1) {
		printf("FAIL: ibv_get_device_list: %s\n", strerror(errno));
		return 1;
	}
	ctx = ibv_open_device(list[0]);
	CHECK_TRUE(ctx != NULL);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	CHECK_TRUE(pd != NULL);
	if (!pd)
		return check_finish();
	printf("pool_registered: device %s\n", ibv_get_device_name(list[0]));

	registered(pd, 16, 4096,
	           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE, 0);
	registered(pd, 8, 1000, 0, 0); /* send buffers: the device only reads them */
	registered(pd, 4, 1 << 20, IBV_ACCESS_LOCAL_WRITE, REX_POOL_HUGE);

	/* Remote write without local write is invalid in verbs: the device
	 * refuses it, and the pool passes the refusal on instead of adding
	 * IBV_ACCESS_LOCAL_WRITE behind its creator's back. */
	capture_begin(&cap);
	errno = 0;
	CHECK_TRUE(rex_pool_create(pd, &attr) == NULL);
	CHECK_INT_EQ(errno, EINVAL);
	text = capture_end(&cap);
	CHECK_STR_CONTAINS(text, "ibv_reg_mr of ");
	CHECK_STR_CONTAINS(text, " bytes: Invalid argument");
	printf("pool_registered: remote write without local write: %s", text);
	free(text);

	CHECK_INT_EQ(ibv_dealloc_pd(pd), 0);
	CHECK_INT_EQ(ibv_close_device(ctx), 0);
	ibv_free_device_list(list);
	return check_finish();
}
