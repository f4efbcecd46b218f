/* SPDX-License-Identifier: MIT */
/*
 * buffers.h: registered message buffers for chapter 02, used by both the
 * server and the client: one memory region cut into equal slots, one slot
 * per work request in flight.
 */
#ifndef SR_BUFFERS_H
#define SR_BUFFERS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* One registered memory region cut into equal slots. */
struct sr_buffers {
	uint8_t *mem;      /* count * slot_size bytes, page aligned */
	size_t slot_size;  /* header + the largest payload */
	uint32_t count;    /* slots */
	struct ibv_mr *mr; /* the registration: mr->lkey goes into every SGE */
};

/*
 * Allocate count slots of slot_size bytes and register them in pd with
 * access. Returns 0, or a negative errno after printing the failing call;
 * on failure b holds nothing to release.
 */
int sr_buffers_register(struct sr_buffers *b, struct ibv_pd *pd, uint32_t count, size_t slot_size,
                        int access);

/*
 * Deregister and free; accepts buffers never registered, and leaves b empty.
 * Returns 0, or the negative errno of a failing ibv_dereg_mr() (EBUSY: a
 * work request still uses the memory). On that failure nothing is freed and
 * b is left as it was: the memory is leaked on purpose, because the device
 * may still write it.
 */
int sr_buffers_release(struct sr_buffers *b);

/*
 * wr_id of a work request on slot i: the kind in the upper 32 bits, the slot
 * in the lower ones. A completion carries it back and so finds its buffer;
 * it is the only field a failed completion is sure to carry (wr_id
 * 4294967297 in an error message is send slot 1).
 */
enum sr_wr_kind { SR_WR_SEND = 1, SR_WR_RECV = 2 };

static inline uint64_t sr_wr_id(enum sr_wr_kind kind, uint32_t slot)
{
	return (uint64_t)kind << 32 | slot;
}

/*
 * Post one receive for slot i of b on qp. Returns 0, or a negative errno
 * after printing the failing call.
 */
int sr_buffers_post_recv(struct ibv_qp *qp, const struct sr_buffers *b, uint32_t i);

/* The start of slot i. */
static inline uint8_t *sr_buffers_slot(const struct sr_buffers *b, uint32_t i)
{
	return b->mem + (size_t)i * b->slot_size;
}

#endif /* SR_BUFFERS_H */
