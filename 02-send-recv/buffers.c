/* SPDX-License-Identifier: MIT */
/*
 * buffers.c: registered message buffers for chapter 02 (see buffers.h).
 */
#include "buffers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rex_error.h"

/* Buffers start on a page: registration pins whole pages anyway. */
#define BUFFER_ALIGN 4096

/* [register-buffers] */
int sr_buffers_register(struct sr_buffers *b, struct ibv_pd *pd, uint32_t count, size_t slot_size,
                        int access)
{
	size_t len = (slot_size * count + BUFFER_ALIGN - 1) / BUFFER_ALIGN * BUFFER_ALIGN;
	int err;

	memset(b, 0, sizeof(*b));
	b->mem = aligned_alloc(BUFFER_ALIGN, len);
	if (!b->mem) {
		err = errno;
		rex_report_errno("aligned_alloc", err);
		return -err;
	}
	memset(b->mem, 0, len);
	/*
	 * Registration pins the pages and gives the device a translation for
	 * them, with a key: lkey for our own work requests. The access flags
	 * are what the device may do beyond reading: a receive buffer is
	 * written by the device (IBV_ACCESS_LOCAL_WRITE); a send buffer is only
	 * read, which needs no flag at all. Neither is open to the peer.
	 */
	b->mr = ibv_reg_mr(pd, b->mem, len, access);
	if (!b->mr) {
		err = errno;
		rex_report_errno("ibv_reg_mr", err);
		free(b->mem);
		b->mem = NULL;
		return -err;
	}
	b->slot_size = slot_size;
	b->count = count;
	return 0;
}
/* [register-buffers] */

int sr_buffers_release(struct sr_buffers *b)
{
	int ret;

	if (b->mr) {
		ret = ibv_dereg_mr(b->mr); /* an errno value */
		if (ret) {
			/*
			 * The registration is still there, so the device may
			 * still write this memory: it must not go back to
			 * malloc() for something else to use. Keep mem and mr
			 * as they are and leak them, on purpose.
			 */
			rex_report_errno("ibv_dereg_mr", ret);
			return -ret;
		}
	}
	free(b->mem);
	memset(b, 0, sizeof(*b));
	return 0;
}

/* [post-receive] */
int sr_buffers_post_recv(struct ibv_qp *qp, const struct sr_buffers *b, uint32_t i)
{
	/* A scatter/gather entry names a piece of registered memory: where the
	 * device may put an incoming message. One SGE per work request here. */
	struct ibv_sge sge = {
	    .addr = (uintptr_t)sr_buffers_slot(b, i),
	    .length = (uint32_t)b->slot_size,
	    .lkey = b->mr->lkey,
	};
	/* The work request: "the next message that arrives goes here". wr_id
	 * comes back in the completion and tells us which buffer it was. */
	struct ibv_recv_wr wr = {
	    .wr_id = sr_wr_id(SR_WR_RECV, i),
	    .sg_list = &sge,
	    .num_sge = 1,
	};
	struct ibv_recv_wr *bad;
	int ret;

	ret = ibv_post_recv(qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_recv", ret);
		return -ret;
	}
	return 0;
}
/* [post-receive] */
