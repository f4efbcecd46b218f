/* SPDX-License-Identifier: MIT */
/**
 * \file rex_pool.h
 * \brief A pre-registered memory pool: one registration for a whole region,
 *        carved into fixed-size buffers that are handed out and taken back in
 *        O(1). What chapter 06-mr-pool teaches, written as a library.
 *
 * Registering memory (ibv_reg_mr()) pins its pages and builds the device's
 * translation for them: it costs microseconds to milliseconds, grows with the
 * size, and is a system call. A program that registers per message pays it
 * on every message. A pool pays it once:
 *
 *     struct rex_pool_attr attr = {
 *             .buf_size = 4096, .count = 64,
 *             .access = IBV_ACCESS_LOCAL_WRITE,   // receive buffers
 *     };
 *     struct rex_pool *pool = rex_pool_create(pd, &attr);
 *     ...
 *     struct rex_pool_buf *b = rex_pool_get(pool);
 *     if (!b)
 *             ... every buffer is out: wait for completions, then try again
 *     sge.addr = (uintptr_t)b->addr; sge.lkey = b->lkey; wr.wr_id = b->index;
 *     ... the completion of wr_id: rex_pool_put(pool, rex_pool_buf_at(pool, wc.wr_id));
 *     ...
 *     rex_pool_destroy(pool);    // -EBUSY while buffers are still out
 *
 * A pool shared by several peers should grant nothing remote by itself: its
 * one rkey would open every buffer to every peer. Register it with
 * IBV_ACCESS_MW_BIND (and IBV_ACCESS_LOCAL_WRITE, which the IB rules require
 * under a window that grants remote write or atomic access, as well as for
 * receives) and give each peer a memory window over its own buffer, with
 * just the rights it needs (rex_mw.h).
 *
 * One pool has one buffer size. A program that needs several sizes makes
 * one pool per size class (say 4 KiB, 64 KiB, 1 MiB) and takes each request
 * from the smallest class that fits it.
 *
 * The pool takes nothing from the device after it is created: rex_pool_get()
 * and rex_pool_put() touch only the pool's own memory, never block, never
 * allocate and never make a system call. The pool is not thread-safe: use one
 * per thread, or a lock around it.
 *
 * Releasing a buffer twice, or a buffer of another pool, is caught when the
 * file is built with checks (the default unless NDEBUG is defined; force
 * them with -DREX_POOL_CHECKS=1): rex_pool_put() then prints what is wrong and
 * returns -EINVAL. Built without checks, either mistake is undefined
 * behaviour: the free list is corrupted and one buffer may be handed out twice.
 *
 * Copy rex_pool.c with rex_pool.h, rex_error.c and rex_error.h; they need
 * only libibverbs.
 */
#ifndef REX_POOL_H
#define REX_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/** What kind of page backs a region (rex_pool_mem::pages). */
enum rex_pool_pages {
	REX_POOL_PAGES_NORMAL = 0, /**< the base page size (4 KiB on x86-64) */
	REX_POOL_PAGES_THP, /**< transparent huge pages asked for (madvise); the kernel may still
	                       use small ones */
	REX_POOL_PAGES_HUGETLB, /**< reserved huge pages (MAP_HUGETLB), 2 MiB on x86-64 by default
	                         */
};

/** \brief "normal", "THP" or "MAP_HUGETLB" (a static string). */
const char *rex_pool_pages_name(enum rex_pool_pages pages);

/** A region of memory mapped for a pool: page aligned, zeroed, touched. */
struct rex_pool_mem {
	void *addr;                /**< first byte; aligned to page_size */
	size_t len;                /**< bytes usable: a whole number of page_size */
	size_t page_size;          /**< the size of the pages backing it */
	enum rex_pool_pages pages; /**< which kind it got */
	void *map_addr;            /**< what munmap() takes (THP maps more, to align) */
	size_t map_len;            /**< and its length */
};

/**
 * \brief Map at least \p len bytes of anonymous memory, zeroed and touched
 *        (every page faulted in), aligned to the page size it got.
 *
 * With \p huge false: normal pages (madvise(MADV_NOHUGEPAGE), so that a
 * kernel whose THP setting is "always" does not make them huge). With
 * \p huge true: first reserved huge pages (mmap() with MAP_HUGETLB; there
 * must be enough in /proc/sys/vm/nr_hugepages), else transparent huge pages
 * (a region aligned to the huge page size, with madvise(MADV_HUGEPAGE);
 * unless /sys/kernel/mm/transparent_hugepage/enabled says "never"), else
 * normal pages. When it falls back it says so in one line on stderr, naming what
 * it got and why.
 *
 * \param m     filled in; on failure it holds nothing to release.
 * \param len   bytes wanted (> 0); rounded up to whole pages.
 * \param huge  try huge pages.
 * \return 0, or a negative errno after printing the failing call (-EINVAL for
 *         a zero or absurd \p len, -ENOMEM when even normal pages are refused).
 */
int rex_pool_mem_map(struct rex_pool_mem *m, size_t len, bool huge);

/** \brief Unmap what rex_pool_mem_map() mapped; accepts an all-zero \p m, and zeroes it. */
void rex_pool_mem_unmap(struct rex_pool_mem *m);

/**
 * How a pool registers and deregisters its region. rex_pool_create() uses
 * ibv_reg_mr() and ibv_dereg_mr() when rex_pool_attr::registrar is NULL; a
 * program can pass its own (another registration call, or a fake one for
 * tests without a device). Both keep verbs' conventions.
 */
struct rex_pool_registrar {
	/** Like ibv_reg_mr(): the memory region, or NULL with errno set. */
	struct ibv_mr *(*reg)(void *ctx, struct ibv_pd *pd, void *addr, size_t len, int access);
	/** Like ibv_dereg_mr(): 0, or an errno value. */
	int (*dereg)(void *ctx, struct ibv_mr *mr);
	void *ctx; /**< handed to both */
};

/** Flags of rex_pool_attr::flags. */
enum rex_pool_flag {
	REX_POOL_HUGE =
	    1u << 0, /**< back the region with huge pages if it can (rex_pool_mem_map()) */
};

/** What a pool is made of. */
struct rex_pool_attr {
	size_t buf_size; /**< bytes per buffer (>= 1); buffers start 64 bytes apart at least */
	uint32_t count;  /**< buffers (1 .. 2^32 - 2) */
	int access;      /**< ibv_access_flags, registered exactly as given (0: send only) */
	unsigned flags;  /**< OR of ::rex_pool_flag */
	/** NULL: ibv_reg_mr() / ibv_dereg_mr(). The pool keeps a copy. */
	const struct rex_pool_registrar *registrar;
};

/**
 * One buffer of a pool. The pool owns these: read the fields, change none of
 * them, and free none.
 */
struct rex_pool_buf {
	void *addr;  /**< first byte: rex_pool_attr::buf_size bytes are the caller's while it holds
	                the buffer */
	size_t size; /**< rex_pool_attr::buf_size */
	uint32_t lkey; /**< for the SGEs of our own work requests */
	uint32_t rkey; /**< the region's rkey, for a peer's READ or WRITE if the access flags allow
	                  it: every buffer's is the same (a window gives one buffer, rex_mw.h) */
	uint32_t
	    index; /**< 0 .. count-1: put it in wr_id, find the buffer with rex_pool_buf_at() */
	uint32_t next_free; /**< private: the free list */
	bool in_use;        /**< private: held by the caller */
};

/** Counters of a pool (rex_pool_stats()). */
struct rex_pool_stats {
	uint32_t count;      /**< buffers in the pool */
	uint32_t in_use;     /**< buffers held by the caller now */
	uint32_t high_water; /**< the most ever held at once */
	uint64_t gets;       /**< buffers handed out since the pool was made */
	uint64_t refused;    /**< rex_pool_get() calls that found every buffer out */
};

/** An opaque pool: rex_pool_create() makes one. */
struct rex_pool;

/**
 * \brief Map a region for \p attr->count buffers, register it once in \p pd
 *        with exactly \p attr->access, and put every buffer on the free list.
 *
 * The region is aligned to its page size; buffers lie buf_size apart, rounded
 * up to a multiple of 64 bytes (a cache line, so two buffers never share one):
 * a buf_size of 4096 gives page-aligned buffers.
 *
 * \param pd    the protection domain of the QPs that will use the buffers
 *              (may be NULL only with a registrar that does not need it).
 * \param attr  sizes, access and flags; not kept.
 * \return the pool, or NULL with errno set after printing why: EINVAL for a
 *         zero or too large size or count, the errno of mmap() or of the
 *         registration (ENOMEM from ibv_reg_mr() is most often the memlock
 *         limit, and the hint says so). Nothing is left to release.
 */
struct rex_pool *rex_pool_create(struct ibv_pd *pd, const struct rex_pool_attr *attr);

/**
 * \brief Deregister, unmap and free the pool; accepts NULL.
 *
 * \return 0; or -EBUSY, after printing how many buffers are still out, when
 *         the caller holds any (the pool is left as it was: release them
 *         after their completions, then destroy again); or the negative errno
 *         of a failing deregistration (printed), when the pool is also left
 *         as it was: the registration still stands, so the memory is not
 *         handed back while a device may use it.
 */
int rex_pool_destroy(struct rex_pool *pool);

/**
 * \brief Take a free buffer, in O(1).
 *
 * \return a buffer, now the caller's; or NULL when every buffer is out. NULL
 *         is back-pressure, not an error: post nothing more, wait for
 *         completions (which bring buffers back), and try again. It is
 *         counted in rex_pool_stats::refused and prints nothing.
 */
struct rex_pool_buf *rex_pool_get(struct rex_pool *pool);

/**
 * \brief Give a buffer back, in O(1): it is the next one rex_pool_get()
 *        hands out (the most recently used memory is the warmest in cache).
 *
 * Give it back only when no work request uses it any more: after its
 * completion, or after the QP is in the error state and its flushed
 * completions are polled.
 * \return 0. With checks built in (see the file's description): -EINVAL,
 *         after printing why, for NULL, a buffer of another pool, or one that
 *         is already free; the pool is left as it was. Without checks those
 *         are undefined behaviour.
 */
int rex_pool_put(struct rex_pool *pool, struct rex_pool_buf *buf);

/**
 * \brief The buffer with index \p index (as carried in a wr_id), held or
 *        free, or NULL when \p index is not below the pool's count.
 */
struct rex_pool_buf *rex_pool_buf_at(struct rex_pool *pool, uint64_t index);

/** \brief Fill \p st with the pool's counters. */
void rex_pool_stats(const struct rex_pool *pool, struct rex_pool_stats *st);

/** \brief The memory region that covers the whole pool (for its lkey, rkey, length). */
struct ibv_mr *rex_pool_mr(const struct rex_pool *pool);

/** \brief The region behind the pool: where it is, how long, which pages it got. */
const struct rex_pool_mem *rex_pool_region(const struct rex_pool *pool);

#endif /* REX_POOL_H */
