/* SPDX-License-Identifier: MIT */
/*
 * rex_buffers.c: registered message buffers (see rex_buffers.h). Chapter
 * 02-send-recv's walkthrough shows this file step by step.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sysconf() under -std=c11 */
#endif
#include "rex_buffers.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rex_error.h"

/* [register-buffers] */
int rex_buffers_create(struct rex_buffers *b, struct ibv_pd *pd, uint32_t count, size_t slot_size,
                       int access)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len;
	int err;

	memset(b, 0, sizeof(*b));
	if (count == 0 || slot_size == 0 || slot_size > (SIZE_MAX - page) / count) {
		rex_errorf("rex_buffers_create: %u slots of %zu bytes: not a size", (unsigned)count,
		           slot_size);
		return -EINVAL;
	}
	/* Registration pins whole pages: a page-aligned buffer of whole pages
	 * shares none of them with anything else malloc() hands out. */
	len = (slot_size * count + page - 1) / page * page;
	b->mem = aligned_alloc(page, len);
	if (!b->mem) {
		err = errno;
		rex_report_errno("aligned_alloc", err);
		return -err;
	}
	memset(b->mem, 0, len);
	/* [reg-mr] */
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
		rex_report_reg_errno("ibv_reg_mr", err, len);
		free(b->mem);
		b->mem = NULL;
		return -err;
	}
	/* [reg-mr] */
	b->len = len;
	b->slot_size = slot_size;
	b->count = count;
	return 0;
}
/* [register-buffers] */

int rex_buffers_destroy(struct rex_buffers *b)
{
	int ret;

	if (b->mr) {
		ret = ibv_dereg_mr(b->mr); /* an errno value */
		if (ret) {
			/*
			 * The registration is still there, so a device may
			 * still use this memory: it must not go back to
			 * malloc() for something else. Keep mem and mr as they
			 * are and leak them, on purpose.
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
int rex_buffers_post_recv(struct ibv_qp *qp, const struct rex_buffers *b, uint32_t i,
                          uint64_t wr_id)
{
	/* A scatter/gather entry names a piece of registered memory: where the
	 * device may put an incoming message. One SGE per work request here. */
	struct ibv_sge sge = {
	    .addr = (uintptr_t)rex_buffers_slot(b, i),
	    .length = (uint32_t)b->slot_size,
	    .lkey = b->mr->lkey,
	};
	/* The work request: "the next message that arrives goes here". wr_id
	 * comes back in the completion and tells us which buffer it was. */
	struct ibv_recv_wr wr = {
	    .wr_id = wr_id,
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

/* [post-send] */
int rex_buffers_post_send(struct ibv_qp *qp, const struct rex_buffers *b, uint32_t i,
                          uint32_t len, uint64_t wr_id, unsigned int send_flags)
{
	struct ibv_sge sge = {
	    .addr = (uintptr_t)rex_buffers_slot(b, i),
	    .length = len,
	    .lkey = b->mr->lkey,
	};
	/* A SEND takes its bytes from the SGE and lands in the buffer of the
	 * peer's next posted receive. An empty message needs no SGE at all. */
	struct ibv_send_wr wr = {
	    .wr_id = wr_id,
	    .sg_list = &sge,
	    .num_sge = len ? 1 : 0,
	    .opcode = IBV_WR_SEND,
	    .send_flags = send_flags,
	};
	struct ibv_send_wr *bad;
	int ret;

	if (len > b->slot_size) {
		rex_errorf("rex_buffers_post_send: %u bytes do not fit a slot of %zu",
		           (unsigned)len, b->slot_size);
		return -EINVAL;
	}
	ret = ibv_post_send(qp, &wr, &bad); /* an errno value, not -1 */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	return 0;
}
/* [post-send] */
