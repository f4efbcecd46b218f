/* SPDX-License-Identifier: MIT */
/* Narrow, revocable grants: type 2 memory windows (see rex_mw.h). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime() under -std=c11 */
#include "rex_mw.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "rex_error.h"

/* Soft-RoCE's vendor id (rxe_param.h: RXE_VENDOR_ID), as ibv_devinfo shows it. */
#define RXE_VENDOR_ID 0xffffffu

int rex_mw_create(struct rex_mw *w, struct ibv_pd *pd)
{
	struct ibv_device_attr attr;
	int err;

	memset(w, 0, sizeof(*w));
	err = ibv_query_device(pd->context, &attr); /* an errno value */
	if (err) {
		rex_report_errno("ibv_query_device", err);
		return -err;
	}
	/* A type 2B window is bound to one QP: the per-session grant rests on
	 * it. A device with type 2A only would let any QP of the PD use it. */
	if (!(attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B)) {
		rex_errorf("ibv_alloc_mw: %s has no type 2B memory windows "
		           "(IBV_DEVICE_MEM_WINDOW_TYPE_2B not in its device_cap_flags)",
		           ibv_get_device_name(pd->context->device));
		return -EOPNOTSUPP;
	}
	w->mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!w->mw) {
		err = errno ? errno : EOPNOTSUPP;
		rex_report_errno("ibv_alloc_mw (type 2)", err);
		return -err;
	}
	w->rkey = w->mw->rkey;
	w->inv_flag = IBV_WC_WITH_INV;
	if (attr.vendor_id == RXE_VENDOR_ID)
		w->inv_flag |= IBV_WC_IP_CSUM_OK; /* see rex_mw_wc_invalidated() */
	return 0;
}

int rex_mw_destroy(struct rex_mw *w)
{
	int ret = 0;

	if (w->mw) {
		ret = ibv_dealloc_mw(w->mw);
		if (ret)
			rex_report_errno("ibv_dealloc_mw", ret);
	}
	memset(w, 0, sizeof(*w));
	return -ret;
}

/* [bind] */
uint32_t rex_mw_bind_wr(struct rex_mw *w, struct ibv_mr *mr, void *addr, size_t length,
                        unsigned access, struct ibv_send_wr *wr)
{
	/* The window's key now is the last bind's (which has completed): the
	 * provider names the window by it (rxe refuses the bind otherwise). */
	w->mw->rkey = w->rkey;
	/* A new key byte each bind: whoever kept the last grant's key is refused. */
	w->rkey = ibv_inc_rkey(w->rkey);
	w->addr = (uintptr_t)addr;
	w->length = length;
	w->access = access;
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IBV_WR_BIND_MW;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->bind_mw.mw = w->mw;
	wr->bind_mw.rkey = w->rkey;
	wr->bind_mw.bind_info = (struct ibv_mw_bind_info){
	    .mr = mr, .addr = w->addr, .length = length, .mw_access_flags = access};
	return w->rkey;
}
/* [bind] */

/* [invalidate] */
void rex_mw_invalidate_wr(const struct rex_mw *w, struct ibv_send_wr *wr)
{
	memset(wr, 0, sizeof(*wr));
	wr->opcode = IBV_WR_LOCAL_INV;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->invalidate_rkey = w->rkey;
}
/* [invalidate] */

/* [invalidated] */
bool rex_mw_wc_invalidated(const struct rex_mw *w, const struct ibv_wc *wc, uint32_t *rkey)
{
	unsigned flag = w->inv_flag ? w->inv_flag : IBV_WC_WITH_INV;
	bool inv = wc->opcode == IBV_WC_RECV && (wc->wc_flags & flag) != 0;

	if (inv)
		*rkey = wc->invalidated_rkey;
	return inv;
}
/* [invalidated] */

static uint64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

int rex_mw_post_wait(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_send_wr *wr, int timeout_ms)
{
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;
	uint64_t end = now_ms() + (uint64_t)timeout_ms;
	int ret, n;

	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(qp, wr, &bad);
	if (ret) {
		rex_report_errno(wr->opcode == IBV_WR_BIND_MW ? "ibv_post_send (bind)"
		                                              : "ibv_post_send (invalidate)",
		                 ret);
		return -ret;
	}
	for (;;) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0) {
			rex_report_errno("ibv_poll_cq", -n);
			return -EIO;
		}
		if (n == 1)
			break;
		if (now_ms() > end) {
			rex_errorf("%s: no completion in %d ms",
			           wr->opcode == IBV_WR_BIND_MW ? "bind" : "invalidate",
			           timeout_ms);
			return -ETIMEDOUT;
		}
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr->wr_id) {
		rex_report_wc(wr->opcode == IBV_WR_BIND_MW ? "bind" : "invalidate", &wc);
		return -EIO;
	}
	return 0;
}
