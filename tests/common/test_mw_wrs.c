/* SPDX-License-Identifier: MIT */
/*
 * rex_mw without a device: a bind's work request covers exactly what was
 * asked, with the right asked, under a new key byte each time (the index
 * kept), signalled; an invalidate names the current key; a receive is read
 * as a SEND WITH INVALIDATE by the verbs flag, by rxe's (the kernel's
 * bit) on a window of an rxe device only, and not otherwise; destroying a window never created is
 * harmless.
 */
#include <string.h>

#include "check.h"
#include "rex_mw.h"

int main(void)
{
	struct ibv_mw fake = {.rkey = 0x123400ff};
	struct ibv_mr mr = {.lkey = 0x55};
	struct rex_mw w = {.mw = &fake, .rkey = fake.rkey};
	struct ibv_send_wr wr;
	struct ibv_wc wc;
	char buf[64];
	uint32_t k1, k2, rkey = 0;

	k1 = rex_mw_bind_wr(&w, &mr, buf + 8, 16, IBV_ACCESS_REMOTE_WRITE, &wr);
	CHECK_U64_EQ(k1, 0x12340000); /* the key byte wraps; the index stays */
	CHECK_INT_EQ(wr.opcode, IBV_WR_BIND_MW);
	CHECK_INT_EQ(wr.send_flags, IBV_SEND_SIGNALED);
	CHECK_TRUE(wr.bind_mw.mw == &fake && wr.bind_mw.bind_info.mr == &mr);
	CHECK_U64_EQ(wr.bind_mw.rkey, k1);
	CHECK_U64_EQ(wr.bind_mw.bind_info.addr, (uintptr_t)(buf + 8));
	CHECK_U64_EQ(wr.bind_mw.bind_info.length, 16);
	CHECK_INT_EQ(wr.bind_mw.bind_info.mw_access_flags, IBV_ACCESS_REMOTE_WRITE);
	CHECK_TRUE(wr.next == NULL && wr.num_sge == 0);
	CHECK_U64_EQ(fake.rkey, 0x123400ff); /* the window, named by its key now */
	k2 = rex_mw_bind_wr(&w, &mr, buf, 8, IBV_ACCESS_REMOTE_ATOMIC, &wr);
	CHECK_U64_EQ(k2, 0x12340001); /* a new grant, a new key: the old one is stale */
	CHECK_U64_EQ(fake.rkey, k1);  /* the first bind's key, which it has now */
	CHECK_U64_EQ(w.rkey, k2);
	CHECK_U64_EQ(w.length, 8);

	rex_mw_invalidate_wr(&w, &wr);
	CHECK_INT_EQ(wr.opcode, IBV_WR_LOCAL_INV);
	CHECK_U64_EQ(wr.invalidate_rkey, k2);
	CHECK_INT_EQ(wr.send_flags, IBV_SEND_SIGNALED);

	memset(&wc, 0, sizeof(wc));
	wc.opcode = IBV_WC_RECV;
	wc.invalidated_rkey = k2;
	wc.wc_flags = IBV_WC_WITH_INV;
	CHECK_TRUE(rex_mw_wc_invalidated(&w, &wc, &rkey) && rkey == k2);
	/* A window on rxe (rex_mw_create() sets this from the vendor id). */
	w.inv_flag = IBV_WC_WITH_INV | IBV_WC_IP_CSUM_OK;
	wc.wc_flags = IBV_WC_GRH | IBV_WC_IP_CSUM_OK; /* rxe, Linux 6.1: flags 0x5 */
	rkey = 0;
	CHECK_TRUE(rex_mw_wc_invalidated(&w, &wc, &rkey) && rkey == k2);
	/* Any other device: that bit is a checksum, not an invalidate. */
	w.inv_flag = IBV_WC_WITH_INV;
	rkey = 0;
	CHECK_TRUE(!rex_mw_wc_invalidated(&w, &wc, &rkey) && rkey == 0);
	wc.wc_flags = IBV_WC_GRH | IBV_WC_WITH_IMM; /* a control message */
	CHECK_TRUE(!rex_mw_wc_invalidated(&w, &wc, &rkey));
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.wc_flags = IBV_WC_WITH_INV;
	CHECK_TRUE(!rex_mw_wc_invalidated(&w, &wc, &rkey));

	memset(&w, 0, sizeof(w));
	CHECK_INT_EQ(rex_mw_destroy(&w), 0);
	return check_finish();
}
