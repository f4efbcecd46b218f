/* SPDX-License-Identifier: MIT */
/**
 * \file rex_buffers.h
 * \brief Registered message buffers, and posting a SEND or a receive from
 *        one: what chapter 02-send-recv teaches, as a helper for the chapters
 *        after it.
 *
 * One allocation, one memory region, cut into \p count equal slots: a slot
 * per work request in flight. A work request names its slot in wr_id, so the
 * completion finds the buffer again:
 *
 *     struct rex_buffers recv;
 *     rex_buffers_create(&recv, conn->pd, 16, 4096, IBV_ACCESS_LOCAL_WRITE);
 *     for (i = 0; i < recv.count; i++)
 *             rex_buffers_post_recv(conn->qp, &recv, i, rex_wr_id(MY_RECV, i));
 *     ... a completion wc: slot rex_wr_id_slot(wc.wr_id), wc.byte_len bytes
 *     ... after the QP is stopped and its flushed completions polled:
 *     rex_buffers_destroy(&recv);
 *
 * Memory is registered with exactly the access the caller names: a receive
 * buffer needs IBV_ACCESS_LOCAL_WRITE (the device writes it), a send buffer
 * nothing at all (the device only reads it). Remote access is for the caller
 * to add when a peer must reach the memory (chapter 03).
 *
 * Copy rex_buffers.c with rex_buffers.h, rex_error.c and rex_error.h; they
 * need only libibverbs.
 */
#ifndef REX_BUFFERS_H
#define REX_BUFFERS_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

/** One registered memory region cut into equal slots. */
struct rex_buffers {
	uint8_t *mem;      /**< count * slot_size bytes, page aligned, zeroed at first */
	size_t len;        /**< bytes allocated and registered: whole pages */
	size_t slot_size;  /**< bytes per slot */
	uint32_t count;    /**< slots */
	struct ibv_mr *mr; /**< the registration: mr->lkey goes into every SGE */
};

/**
 * \brief Allocate \p count slots of \p slot_size bytes, page aligned and
 *        zeroed, and register them in \p pd with \p access.
 *
 * \param b          filled in; on failure it holds nothing to release.
 * \param pd         the protection domain of the QP that will use them.
 * \param count      slots (>= 1).
 * \param slot_size  bytes per slot (>= 1).
 * \param access     ibv_access_flags: 0 for send buffers, IBV_ACCESS_LOCAL_WRITE
 *                   for receive buffers, plus remote flags if a peer reads or
 *                   writes them.
 * \return 0, or a negative errno after printing the failing call (-EINVAL
 *         for a zero count or size, or a size that overflows; -ENOMEM from
 *         ibv_reg_mr is most often the memlock limit, and its hint says so).
 */
int rex_buffers_create(struct rex_buffers *b, struct ibv_pd *pd, uint32_t count, size_t slot_size,
                       int access);

/**
 * \brief Deregister and free; accepts buffers never created (all zeros) and
 *        leaves \p b all zeros.
 *
 * Call it only once no work request uses the memory: after the QP is in the
 * error state (rex_conn_disconnect(), rex_conn_wait_disconnect()) and its
 * flushed completions have been polled.
 * \return 0, or the negative errno of a failing ibv_dereg_mr() (printed). On
 *         that failure nothing is freed and \p b is left as it was: the
 *         registration still stands, so the memory is leaked on purpose
 *         rather than handed back to malloc() while a device may use it.
 */
int rex_buffers_destroy(struct rex_buffers *b);

/** \brief The first byte of slot \p i (no range check: \p i < b->count). */
static inline uint8_t *rex_buffers_slot(const struct rex_buffers *b, uint32_t i)
{
	return b->mem + (size_t)i * b->slot_size;
}

/**
 * \brief The scatter/gather entry of the first \p len bytes of slot \p i:
 *        for a work request built by the caller (rex_aconn_post_send(), say).
 */
static inline struct ibv_sge rex_buffers_sge(const struct rex_buffers *b, uint32_t i, uint32_t len)
{
	struct ibv_sge sge = {.addr = (uintptr_t)rex_buffers_slot(b, i),
	                      .length = len,
	                      .lkey = b->mr->lkey};

	return sge;
}

/**
 * \brief Post one receive of the whole of slot \p i on \p qp.
 * \param qp     the queue pair (INIT state or later).
 * \param b      the buffers, registered with IBV_ACCESS_LOCAL_WRITE.
 * \param i      the slot, below b->count.
 * \param wr_id  comes back in the completion: say which slot (rex_wr_id()).
 * \return 0, or a negative errno after printing the failing ibv_post_recv().
 */
int rex_buffers_post_recv(struct ibv_qp *qp, const struct rex_buffers *b, uint32_t i,
                          uint64_t wr_id);

/**
 * \brief Post one SEND of the first \p len bytes of slot \p i on \p qp.
 *
 * \param qp          the queue pair (RTS state).
 * \param b           the buffers.
 * \param i           the slot, below b->count.
 * \param len         bytes to send, at most b->slot_size (0 sends an empty message).
 * \param wr_id       comes back in the completion.
 * \param send_flags  e.g. IBV_SEND_SIGNALED to get a completion for it; until
 *                    it completes, the slot is the device's.
 * \return 0, or a negative errno after printing why (-EINVAL when \p len
 *         exceeds the slot).
 */
int rex_buffers_post_send(struct ibv_qp *qp, const struct rex_buffers *b, uint32_t i,
                          uint32_t len, uint64_t wr_id, unsigned int send_flags);

/**
 * \brief A wr_id that says what a work request was: \p kind (a number of the
 *        caller's) in the upper 32 bits, \p slot in the lower ones.
 *
 * wr_id is the one field a failed completion is sure to carry, so it is what
 * identifies the request in an error message: wr_id 4294967297 is kind 1,
 * slot 1.
 */
static inline uint64_t rex_wr_id(uint32_t kind, uint32_t slot)
{
	return (uint64_t)kind << 32 | slot;
}

/**
 * \brief Kinds of work request for rex_wr_id(), shared by the helpers that
 *        count work requests (rex_aconn.h) and by programs that want no
 *        kinds of their own. A program may define its own numbers instead.
 */
enum rex_wr_kind {
	REX_WR_SEND = 1,   /**< a send of any opcode (rex_aconn: its number below) */
	REX_WR_RECV = 2,   /**< a receive (its slot below) */
	REX_WR_MARKER = 3, /**< rex_aconn's drain marker, never the program's */
	REX_WR_LENT = 4,   /**< a send the program posted on a QP the helper lent
	                        it (rex_svc_conn_lend()): outside rex_aconn's books */
};

/** \brief The kind of a wr_id made by rex_wr_id(). */
static inline uint32_t rex_wr_id_kind(uint64_t wr_id)
{
	return (uint32_t)(wr_id >> 32);
}

/** \brief The slot of a wr_id made by rex_wr_id(). */
static inline uint32_t rex_wr_id_slot(uint64_t wr_id)
{
	return (uint32_t)wr_id;
}

#endif /* REX_BUFFERS_H */
