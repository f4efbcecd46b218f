/* SPDX-License-Identifier: MIT */
/*
 * exercises/06-size-classes/my_pools.h: size classes over rex_pool, the
 * interface of chapter 06's exercise 3 (docs/06-mr-pool.md). You write
 * my_pools.c; test.c (exercise-06-size-classes) tries it on a real device.
 */
#ifndef MY_POOLS_H
#define MY_POOLS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rex_pool.h"

/** The classes, smallest first: 4 KiB, 64 KiB, 1 MiB. */
#define MY_CLASSES 3

/** The buffer size of class \p i (0 .. MY_CLASSES-1). */
static inline size_t my_class_size(int i)
{
	return (size_t)4096 << (4 * i);
}

/** Three rex_pools, one per class: pool[i] has buffers of my_class_size(i). */
struct my_pools {
	struct rex_pool *pool[MY_CLASSES];
};

/**
 * Create the three pools on \p pd, \p count buffers each, registered with
 * IBV_ACCESS_LOCAL_WRITE. \return 0, or a negative errno value with nothing
 * left created.
 */
int my_pools_create(struct my_pools *p, struct ibv_pd *pd, uint32_t count);

/** Destroy the three pools (every buffer back first). \return 0 or a negative errno value. */
int my_pools_destroy(struct my_pools *p);

/**
 * A buffer of at least \p bytes: from the smallest class that fits, or, when
 * that class has none free, from the next larger class that has one.
 * \return the buffer, or NULL when no class that fits has a free buffer (or
 * \p bytes is more than the largest class).
 */
struct rex_pool_buf *my_get(struct my_pools *p, size_t bytes);

/** Give \p b back to the pool it came from. \return 0, or -EINVAL for a buffer of none of them. */
int my_put(struct my_pools *p, struct rex_pool_buf *b);

#endif
