/* SPDX-License-Identifier: MIT */
/*
 * rex_pool.c: a pre-registered memory pool (see rex_pool.h). Chapter
 * 06-mr-pool's walkthrough shows this file step by step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* MAP_HUGETLB, MADV_HUGEPAGE, sysconf() under -std=c11 */
#endif
#include "rex_pool.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rex_error.h"

/* Checks of rex_pool_put(): on unless NDEBUG (a release build) says otherwise. */
#ifndef REX_POOL_CHECKS
#ifdef NDEBUG
#define REX_POOL_CHECKS 0
#else
#define REX_POOL_CHECKS 1
#endif
#endif

/* The end of the free list: no buffer has this index (count < 2^32 - 1). */
#define FREE_LIST_END UINT32_MAX
/* Buffers start at least a cache line apart, so two never share one: the
 * device writing one buffer and the CPU reading its neighbour do not fight
 * over a line. */
#define BUF_ALIGN 64
/* When /proc/meminfo does not say: the huge page size of x86-64. */
#define DEFAULT_HUGE_PAGE (2u << 20)

struct rex_pool {
	struct rex_pool_mem mem;             /* the region */
	struct ibv_mr *mr;                   /* its one registration */
	struct rex_pool_registrar registrar; /* how it was registered */
	struct rex_pool_buf *bufs;           /* count descriptors */
	size_t stride;                       /* bytes from one buffer to the next */
	uint32_t free_head;                  /* index of the first free buffer, or FREE_LIST_END */
	struct rex_pool_stats stats;
};

const char *rex_pool_pages_name(enum rex_pool_pages pages)
{
	switch (pages) {
	case REX_POOL_PAGES_NORMAL:
		return "normal";
	case REX_POOL_PAGES_THP:
		return "THP";
	case REX_POOL_PAGES_HUGETLB:
		return "MAP_HUGETLB";
	}
	return "unknown";
}

/* The default huge page size, from /proc/meminfo ("Hugepagesize: 2048 kB"). */
static size_t huge_page_size(void)
{
	char line[128];
	unsigned long kb = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return DEFAULT_HUGE_PAGE;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb ? (size_t)kb * 1024 : DEFAULT_HUGE_PAGE;
}

/* Does the kernel hand out transparent huge pages to a region that asks
 * (madvise)? No when THP is off ("[never]") or absent. */
static bool thp_possible(void)
{
	char line[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (!f)
		return false;
	if (!fgets(line, sizeof(line), f))
		line[0] = '\0';
	fclose(f);
	return strstr(line, "[always]") || strstr(line, "[madvise]");
}

/* [map-region] */
int rex_pool_mem_map(struct rex_pool_mem *m, size_t len, bool huge)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t hp = huge_page_size();
	char why[160] = "";
	int err;

	memset(m, 0, sizeof(*m));
	if (len == 0 || len > SIZE_MAX / 4) {
		rex_errorf("rex_pool_mem_map: %zu bytes: not a size", len);
		return -EINVAL;
	}
	m->pages = REX_POOL_PAGES_NORMAL;
	m->page_size = page;
	m->len = (len + page - 1) / page * page;
	/* [map-hugetlb] */
	if (huge) {
		/* Reserved huge pages: a 2 MiB page needs one translation entry
		 * where 4 KiB pages need 512. They come only from the pool the
		 * administrator reserved (vm.nr_hugepages); mmap() fails at once
		 * when there are too few, it does not wait. */
		size_t hlen = (len + hp - 1) / hp * hp;

		m->map_addr = mmap(NULL, hlen, PROT_READ | PROT_WRITE,
		                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		if (m->map_addr != MAP_FAILED) {
			m->map_len = m->len = hlen;
			m->page_size = hp;
			m->pages = REX_POOL_PAGES_HUGETLB;
			goto touch;
		}
		snprintf(why, sizeof(why), "MAP_HUGETLB: %s (reserved huge pages: vm.nr_hugepages)",
		         strerror(errno));
		/* [map-hugetlb] */
		/* Transparent huge pages: normal memory, aligned to the huge
		 * page size, that asks the kernel for huge pages. Map one huge
		 * page more than needed, to find an aligned start in it. */
		if (thp_possible()) {
			m->map_addr = mmap(NULL, hlen + hp, PROT_READ | PROT_WRITE,
			                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m->map_addr == MAP_FAILED) {
				err = errno;
				rex_report_errno("mmap", err);
				memset(m, 0, sizeof(*m));
				return -err;
			}
			m->map_len = hlen + hp;
			m->addr = (void *)(((uintptr_t)m->map_addr + hp - 1) / hp * hp);
			if (madvise(m->addr, hlen, MADV_HUGEPAGE) == 0) {
				m->len = hlen;
				m->page_size = hp;
				m->pages = REX_POOL_PAGES_THP;
				rex_errorf(
				    "rex_pool_mem_map: %s; got transparent huge pages instead",
				    why);
				goto touch;
			}
			snprintf(why + strlen(why), sizeof(why) - strlen(why),
			         ", madvise(MADV_HUGEPAGE): %s", strerror(errno));
			goto normal_pages; /* keep the mapping, use it as normal pages */
		}
		snprintf(why + strlen(why), sizeof(why) - strlen(why),
		         ", transparent huge pages are off");
	}
	/* [map-normal] */
	m->map_addr =
	    mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m->map_addr == MAP_FAILED) {
		err = errno;
		rex_report_errno("mmap", err);
		memset(m, 0, sizeof(*m));
		return -err;
	}
	m->map_len = m->len;
	m->addr = m->map_addr;
	/* Normal means normal: where THP is "always", the kernel would
	 * otherwise make large, aligned regions huge behind our back. (No THP
	 * in the kernel: EINVAL, and the pages are normal anyway.) */
	madvise(m->addr, m->len, MADV_NOHUGEPAGE);
normal_pages:
	if (huge)
		rex_errorf("rex_pool_mem_map: %s; got normal pages instead", why);
touch:
	if (!m->addr)
		m->addr = m->map_addr;
	/* Fault every page in now, writable: registration would pin them
	 * anyway, and a page that was never written could be pinned as the
	 * shared zero page. The memory starts as zeros, not as old data. */
	memset(m->addr, 0, m->len);
	/* [map-normal] */
	return 0;
}
/* [map-region] */

void rex_pool_mem_unmap(struct rex_pool_mem *m)
{
	if (m->map_addr && m->map_addr != MAP_FAILED)
		munmap(m->map_addr, m->map_len);
	memset(m, 0, sizeof(*m));
}

static struct ibv_mr *default_reg(void *ctx, struct ibv_pd *pd, void *addr, size_t len, int access)
{
	(void)ctx;
	return ibv_reg_mr(pd, addr, len, access);
}

static int default_dereg(void *ctx, struct ibv_mr *mr)
{
	(void)ctx;
	return ibv_dereg_mr(mr);
}

static const struct rex_pool_registrar verbs_registrar = {
    .reg = default_reg,
    .dereg = default_dereg,
};

/* [pool-create] */
struct rex_pool *rex_pool_create(struct ibv_pd *pd, const struct rex_pool_attr *attr)
{
	struct rex_pool *pool;
	size_t stride;
	uint8_t *base;
	uint32_t i;
	int err;

	if (!attr || attr->buf_size == 0 || attr->count == 0 || attr->count >= FREE_LIST_END ||
	    attr->buf_size > SIZE_MAX / 8 ||
	    (attr->buf_size + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN > SIZE_MAX / 4 / attr->count) {
		rex_errorf("rex_pool_create: %u buffers of %zu bytes: not a pool",
		           attr ? (unsigned)attr->count : 0u, attr ? attr->buf_size : (size_t)0);
		errno = EINVAL;
		return NULL;
	}
	stride = (attr->buf_size + BUF_ALIGN - 1) / BUF_ALIGN * BUF_ALIGN;

	pool = calloc(1, sizeof(*pool));
	if (!pool) {
		err = errno;
		rex_report_errno("calloc", err);
		goto out;
	}
	pool->registrar = attr->registrar ? *attr->registrar : verbs_registrar;
	pool->bufs = calloc(attr->count, sizeof(*pool->bufs));
	if (!pool->bufs) {
		err = errno;
		rex_report_errno("calloc", err);
		goto out_free_pool;
	}
	err = -rex_pool_mem_map(&pool->mem, stride * attr->count, attr->flags & REX_POOL_HUGE);
	if (err)
		goto out_free_bufs;

	/* [pool-register] */
	/*
	 * One registration for the whole region: the pages are pinned and the
	 * device gets its translation for them once, here, and never again
	 * while the pool lives. Every buffer shares the region's lkey and
	 * rkey. The access flags are the caller's, exactly: the pool adds
	 * none (a peer gets no access the creator did not ask for).
	 */
	errno = 0;
	pool->mr = pool->registrar.reg(pool->registrar.ctx, pd, pool->mem.addr, pool->mem.len,
	                               attr->access);
	if (!pool->mr) {
		err = errno ? errno : EIO;
		rex_report_reg_errno("ibv_reg_mr", err, pool->mem.len);
		goto out_unmap;
	}

	/* Carve the region into buffers and chain them all into the free
	 * list, in order: buffer 0 is handed out first. */
	base = pool->mem.addr;
	for (i = 0; i < attr->count; i++) {
		struct rex_pool_buf *b = &pool->bufs[i];

		b->addr = base + (size_t)i * stride;
		b->size = attr->buf_size;
		b->lkey = pool->mr->lkey;
		b->rkey = pool->mr->rkey;
		b->index = i;
		b->next_free = i + 1 < attr->count ? i + 1 : FREE_LIST_END;
		b->in_use = false;
	}
	/* [pool-register] */
	pool->free_head = 0;
	pool->stride = stride;
	pool->stats.count = attr->count;
	return pool;

out_unmap:
	rex_pool_mem_unmap(&pool->mem);
out_free_bufs:
	free(pool->bufs);
out_free_pool:
	free(pool);
out:
	errno = err;
	return NULL;
}
/* [pool-create] */

int rex_pool_destroy(struct rex_pool *pool)
{
	int ret;

	if (!pool)
		return 0;
	if (pool->stats.in_use) {
		/* A held buffer may be in a work request the device has not
		 * finished: unmapping it now would pull memory out from under
		 * the device. The caller must bring every buffer back first. */
		rex_errorf("rex_pool_destroy: %u of %u buffers are still out: release them "
		           "(after their completions), then destroy the pool",
		           (unsigned)pool->stats.in_use, (unsigned)pool->stats.count);
		return -EBUSY;
	}
	if (pool->mr) {
		ret = pool->registrar.dereg(pool->registrar.ctx, pool->mr); /* an errno value */
		if (ret) {
			/* The registration stands: keep everything, on purpose
			 * (as rex_buffers_destroy() does). */
			rex_report_errno("ibv_dereg_mr", ret);
			return -ret;
		}
		pool->mr = NULL;
	}
	rex_pool_mem_unmap(&pool->mem);
	free(pool->bufs);
	free(pool);
	return 0;
}

/* [pool-get] */
struct rex_pool_buf *rex_pool_get(struct rex_pool *pool)
{
	struct rex_pool_buf *b;

	if (pool->free_head == FREE_LIST_END) {
		/* Exhausted: back-pressure for the caller, not an error. */
		pool->stats.refused++;
		return NULL;
	}
	/* Pop the head of the free list: no search, whatever the pool's size. */
	b = &pool->bufs[pool->free_head];
	pool->free_head = b->next_free;
	b->in_use = true;
	pool->stats.gets++;
	if (++pool->stats.in_use > pool->stats.high_water)
		pool->stats.high_water = pool->stats.in_use;
	return b;
}
/* [pool-get] */

#if REX_POOL_CHECKS
/* Is \p buf one of this pool's descriptors, and held? Prints why not. */
static bool put_is_valid(const struct rex_pool *pool, const struct rex_pool_buf *buf)
{
	uintptr_t p = (uintptr_t)buf, first = (uintptr_t)pool->bufs;
	uintptr_t end = first + (uintptr_t)pool->stats.count * sizeof(*buf);

	if (!buf) {
		rex_errorf("rex_pool_put: no buffer (NULL)");
		return false;
	}
	if (p < first || p >= end || (p - first) % sizeof(*buf) != 0) {
		rex_errorf("rex_pool_put: %p is not a buffer of this pool (released to the wrong "
		           "pool?)",
		           (const void *)buf);
		return false;
	}
	if (!buf->in_use) {
		rex_errorf("rex_pool_put: buffer %u is already free (released twice?)",
		           (unsigned)buf->index);
		return false;
	}
	return true;
}
#endif

/* [pool-put] */
int rex_pool_put(struct rex_pool *pool, struct rex_pool_buf *buf)
{
#if REX_POOL_CHECKS
	if (!put_is_valid(pool, buf))
		return -EINVAL;
#endif
	/* Push it on the head of the free list: the next get takes it. */
	buf->in_use = false;
	buf->next_free = pool->free_head;
	pool->free_head = buf->index;
	pool->stats.in_use--;
	return 0;
}
/* [pool-put] */

struct rex_pool_buf *rex_pool_buf_at(struct rex_pool *pool, uint64_t index)
{
	return index < pool->stats.count ? &pool->bufs[index] : NULL;
}

void rex_pool_stats(const struct rex_pool *pool, struct rex_pool_stats *st)
{
	*st = pool->stats;
}

struct ibv_mr *rex_pool_mr(const struct rex_pool *pool)
{
	return pool->mr;
}

const struct rex_pool_mem *rex_pool_region(const struct rex_pool *pool)
{
	return &pool->mem;
}
