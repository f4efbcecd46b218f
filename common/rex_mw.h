/* SPDX-License-Identifier: MIT */
/**
 * \file rex_mw.h
 * \brief Narrow, revocable grants of registered memory: type 2 memory
 *        windows over part of a region, as chapter 06-mr-pool uses them over
 *        its pool's buffers.
 *
 * A memory region's rkey opens the whole region, with the region's rights,
 * for as long as the region lives. A pool registered once for many peers
 * cannot give each peer such a key: any of them could reach every buffer.
 * A memory window can: it is a second key over part of a registered region,
 * with rights of its own, bound and revoked cheaply, without registering:
 *
 *     pool = rex_pool_create(pd, &(struct rex_pool_attr){
 *             .buf_size = 65536, .count = 8,
 *             // the region grants nothing remote itself:
 *             .access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND});
 *     struct rex_mw w;
 *     rex_mw_create(&w, pd);                 // once per peer (a system call)
 *     struct ibv_send_wr wr;
 *     uint32_t rkey = rex_mw_bind_wr(&w, rex_pool_mr(pool), buf->addr, 65536,
 *                                    IBV_ACCESS_REMOTE_WRITE, &wr);
 *     ... post wr on the peer's QP (signalled); when it completes, tell the
 *     ... peer rkey: it can WRITE those 65536 bytes, nothing else
 *     rex_mw_invalidate_wr(&w, &wr);         // revoke: post, wait for it
 *     ... or the peer revokes it itself with a SEND WITH INVALIDATE of rkey
 *     rex_mw_destroy(&w);                     // before the QP is destroyed
 *
 * The rules the verbs (and the IB specification) set:
 *
 * - The region must be registered with IBV_ACCESS_MW_BIND, and with
 *   IBV_ACCESS_LOCAL_WRITE for a window that grants remote write or remote
 *   atomic (C10-74). Its own rkey then opens nothing to a peer, unless the
 *   region also has remote rights: give it none.
 * - A type 2 window is bound by a work request on a QP's send queue, and is
 *   tied to that QP (type 2B): a peer using the key on any other QP,
 *   another client's, is refused. Tell the peer its key only once the
 *   bind's completion has come.
 * - Every bind gives the window a new key: the same 24-bit index and a new
 *   8-bit "key" byte (ibv_inc_rkey()). A peer keeping the key of an earlier
 *   grant is refused: a stale key fails, until the byte wraps after 256
 *   binds of that window.
 * - A local invalidate (IBV_WR_LOCAL_INV) on the QP, or the peer's SEND WITH
 *   INVALIDATE naming the key, revokes it; the local invalidate's
 *   completion says it is done.
 * - ibv_dealloc_mw() revokes whatever the window's state; a region with a
 *   bound window cannot be deregistered (rxe refuses with EINVAL), and a
 *   window bound to a QP should go before the QP.
 *
 * What rxe (Soft-RoCE, Linux 6.1) does differently. Seen in the lab: it
 * checks an access through a window against the *region's* bounds, not the
 * window's, so a peer can reach past its window's end into the rest of the
 * region (check_rkey() in drivers/infiniband/sw/rxe/rxe_resp.c); and it
 * flags a receive that took a SEND WITH INVALIDATE with the wrong bit
 * (rex_mw_wc_invalidated()). Read in its source, not tried: it lets a SEND
 * WITH INVALIDATE from any QP of the device revoke a type 2 window
 * (rxe_invalidate_mw() does not compare the QP). The window's rights, its
 * QP and its key are enforced.
 *
 * Copy rex_mw.c with rex_mw.h, rex_error.c and rex_error.h; they need only
 * libibverbs.
 */
#ifndef REX_MW_H
#define REX_MW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/** One type 2 memory window and the grant it carries. */
struct rex_mw {
	struct ibv_mw *mw; /**< from ibv_alloc_mw() */
	uint32_t rkey;     /**< the key of the latest bind (what the peer is told) */
	uint64_t addr;     /**< what the latest bind covers: first byte */
	uint64_t length;   /**< and bytes */
	unsigned access;   /**< and the rights it grants (IBV_ACCESS_REMOTE_*) */
	unsigned inv_flag; /**< the wc_flags bits that mean "invalidated" on its device */
};

/**
 * \brief Allocate a type 2 window in \p pd (ibv_alloc_mw()).
 * \param w   filled in; all zero on failure.
 * \param pd  the protection domain of the region and of the QP it will be bound on.
 * \return 0, or a negative errno after naming the call: -EOPNOTSUPP when
 *         the device has no type 2B windows (IBV_DEVICE_MEM_WINDOW_TYPE_2B in
 *         its device_cap_flags), which tie a window to the QP it is bound
 *         on, the property a grant to one peer rests on.
 */
int rex_mw_create(struct rex_mw *w, struct ibv_pd *pd);

/**
 * \brief Free the window (ibv_dealloc_mw()): whatever grant it carried is
 *        revoked. Accepts a window never created (all zero), and zeroes it.
 * \param w  the window.
 * \return 0, or a negative errno after naming the call.
 */
int rex_mw_destroy(struct rex_mw *w);

/**
 * \brief Fill \p wr (zeroed first) with a bind of the window over
 *        [\p addr, \p addr + \p length) of \p mr, granting \p access, under a
 *        new key. Post it signalled; the grant holds once it completes. Bind
 *        the window again only after that: the next bind names the window
 *        by this key (ibv_mw::rkey, which this function keeps up to date).
 * \param w       the window; its new key, bounds and rights are kept in it.
 * \param mr      the registered region (IBV_ACCESS_MW_BIND) the window lies in.
 * \param addr    the window's first byte, inside \p mr.
 * \param length  the window's bytes.
 * \param access  IBV_ACCESS_REMOTE_READ, _WRITE and/or _ATOMIC: what the
 *                peer may do, nothing more.
 * \param wr      the work request, zeroed and filled in; post it on the QP
 *                the window is for.
 * \return the new key, for the peer; also kept in \p w.
 */
uint32_t rex_mw_bind_wr(struct rex_mw *w, struct ibv_mr *mr, void *addr, size_t length,
                        unsigned access, struct ibv_send_wr *wr);

/**
 * \brief Fill \p wr (zeroed first) with a local invalidate of the window's
 *        current key. Post it signalled; the grant is revoked once it completes.
 * \param w   the window.
 * \param wr  the work request, zeroed and filled in.
 */
void rex_mw_invalidate_wr(const struct rex_mw *w, struct ibv_send_wr *wr);

/**
 * \brief Post \p wr (signalled) on \p qp and wait, polling \p cq for up to
 *        \p timeout_ms, for its completion: for a program with nothing else
 *        on that CQ (a measurement, a test). A program with a loop takes the
 *        completion there instead (IBV_WC_BIND_MW, IBV_WC_LOCAL_INV).
 * \return 0; or, after naming the call or the completion's status, a
 *         negative errno (-ETIMEDOUT when nothing came; -EIO when the work
 *         request failed, or another completion came first).
 */
int rex_mw_post_wait(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr,
                     int timeout_ms);

/**
 * \brief Whether the receive completion \p wc took a SEND WITH INVALIDATE;
 *        if so, the key the sender revoked goes in \p rkey.
 *
 * The verbs flag is IBV_WC_WITH_INV. Soft-RoCE (rxe, Linux 6.1) sets the
 * kernel's value of that flag instead (1 << 2), which user space reads as
 * IBV_WC_IP_CSUM_OK. That bit is read as the invalidate only on rxe (known
 * by its vendor id, 0xffffff, when the window was created); elsewhere it
 * means what it says, a checksum, and only IBV_WC_WITH_INV counts.
 * \param w     the window (a zeroed one: IBV_WC_WITH_INV only).
 * \param wc    a successful receive completion.
 * \param rkey  the key the sender revoked, when it returns true.
 * \return true when \p wc took a SEND WITH INVALIDATE.
 */
bool rex_mw_wc_invalidated(const struct rex_mw *w, const struct ibv_wc *wc, uint32_t *rkey);

#endif /* REX_MW_H */
