/* SPDX-License-Identifier: MIT */
/*
 * exercises/06-size-classes/test.c: tries exercise 06-size-classes's
 * my_pools.c on the first RDMA device (the program exercise-06-size-classes,
 * which scripts/exercise check runs in the lab). Each case prints a line,
 * "ok: ..." or "not yet: ...", and the last line counts them.
 * Exit: 0 every case passed; 1 not; 3 no RDMA device.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "my_pools.h"

#define COUNT 2 /* buffers per class: a class runs dry after two gets */

static int passed, failed;

static void verdict(int ok, const char *what)
{
	printf("size-classes: %s: %s\n", ok ? "ok" : "not yet", what);
	if (ok)
		passed++;
	else
		failed++;
}

/* Whether \p b lies in class \p i's pool. */
static int in_class(const struct my_pools *p, int i, const struct rex_pool_buf *b)
{
	const struct ibv_mr *mr = p->pool[i] ? rex_pool_mr(p->pool[i]) : NULL;
	const char *a = b ? b->addr : NULL;

	return mr && a && a >= (const char *)mr->addr &&
	       a + b->size <= (const char *)mr->addr + mr->length && b->size == my_class_size(i);
}

static void expect_class(struct my_pools *p, struct rex_pool_buf **held, size_t bytes, int want,
                         const char *why)
{
	char what[160];
	struct rex_pool_buf *b = my_get(p, bytes);

	if (want < 0)
		snprintf(what, sizeof(what), "my_get(%zu) %s: NULL", bytes, why);
	else
		snprintf(what, sizeof(what),
		         "my_get(%zu) %s: a buffer of %zu bytes from that class's pool", bytes, why,
		         my_class_size(want));
	verdict(want < 0 ? b == NULL : in_class(p, want, b), what);
	if (b)
		*held = b;
}

/* Every pool has all its buffers back, and gave out what it should have. */
static void expect_all_back(const struct my_pools *p, const char *when)
{
	struct rex_pool_stats st;
	char what[160];
	int i, ok = 1;

	for (i = 0; i < MY_CLASSES; i++) {
		if (!p->pool[i])
			return;
		rex_pool_stats(p->pool[i], &st);
		ok = ok && st.in_use == 0;
	}
	snprintf(what, sizeof(what),
	         "%s: every pool has every buffer back (rex_pool_stats: in_use 0)", when);
	verdict(ok, what);
}

static void run_cases(struct my_pools *p)
{
	struct rex_pool_buf *held[8] = {0};
	int i, put_ok = 1;

	expect_class(p, &held[0], 100, 0, "(fits 4 KiB)");
	expect_class(p, &held[1], 4096, 0, "(exactly 4 KiB)");
	expect_class(p, &held[2], 4097, 1, "(a byte too many for 4 KiB)");
	expect_class(p, &held[3], 1 << 20, 2, "(exactly 1 MiB)");
	expect_class(p, &held[4], (1 << 20) + 1, -1, "(more than the largest class)");
	expect_class(p, &held[5], 10, 1, "(4 KiB class dry: falls back to 64 KiB)");
	expect_class(p, &held[6], 10, 2, "(4 KiB and 64 KiB dry: falls back to 1 MiB)");
	expect_class(p, &held[7], 10, -1, "(every class dry)");
	for (i = 0; i < 8; i++)
		if (held[i] && my_put(p, held[i]))
			put_ok = 0;
	verdict(put_ok, "my_put() of each buffer returned 0");
	expect_all_back(p, "after my_put() of each");
	/* The buffers went back to their own pools: each class serves again. */
	held[0] = NULL;
	expect_class(p, &held[0], 100, 0, "after the puts");
	if (held[0])
		(void)my_put(p, held[0]);
}

int main(void)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_pd *pd = NULL;
	struct my_pools p;
	int n = 0, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	list = ibv_get_device_list(&n);
	if (!list || n == 0) {
		fprintf(stderr, "size-classes: no RDMA device (run it through scripts/lab)\n");
		if (list)
			ibv_free_device_list(list);
		return 3;
	}
	ctx = ibv_open_device(list[0]);
	ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "size-classes: ibv_open_device: %s\n", strerror(errno));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		fprintf(stderr, "size-classes: ibv_alloc_pd: %s\n", strerror(errno));
		ibv_close_device(ctx);
		return 1;
	}
	memset(&p, 0, sizeof(p));
	ret = my_pools_create(&p, pd, COUNT);
	verdict(ret == 0 && p.pool[0] && p.pool[1] && p.pool[2],
	        "my_pools_create() made three pools");
	if (ret == 0) {
		run_cases(&p);
		ret = my_pools_destroy(&p);
		verdict(ret == 0, "my_pools_destroy() returned 0");
	}
	if (ibv_dealloc_pd(pd)) /* fails while a pool's region is still registered */
		verdict(0, "ibv_dealloc_pd(): a pool was left registered");
	ibv_close_device(ctx);
	printf("size-classes: %d of %d passed\n", passed, passed + failed);
	return failed ? 1 : 0;
}
