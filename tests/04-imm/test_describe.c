/* SPDX-License-Identifier: MIT */
/*
 * How a -v line shows a completion (04-imm/wire.h): opcode, wc_flags,
 * byte_len and, only when IBV_WC_WITH_IMM says it is valid, the immediate
 * in host order. The lab test 04-imm.completions checks the real ones.
 */
#include <arpa/inet.h>
#include <string.h>

#include "check.h"
#include "wire.h"

int main(void)
{
	struct ibv_wc wc;
	char buf[128];

	/* A WRITE WITH IMM at its target, as Soft-RoCE reports it: RoCE
	 * packets carry a GRH, and the flag says so. */
	memset(&wc, 0, sizeof(wc));
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.wc_flags = IBV_WC_GRH | IBV_WC_WITH_IMM;
	wc.byte_len = 64;
	wc.imm_data = im_imm_encode(3, 64);
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_RECV_RDMA_WITH_IMM, wc_flags IBV_WC_GRH|IBV_WC_WITH_IMM, "
	                  "byte_len 64, imm_data 0x03000040");

	/* A SEND WITH IMM at its target: a receive, with the flag. */
	wc.opcode = IBV_WC_RECV;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.byte_len = 0;
	wc.imm_data = im_credit_encode(4);
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_RECV, wc_flags IBV_WC_WITH_IMM, byte_len 0, imm_data 0x00000004");

	/* Without the flag, imm_data means nothing and is not shown. */
	wc.wc_flags = 0;
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_RECV, wc_flags 0, byte_len 0");

	/* The sender's completions: no immediate shown, even with the flag. */
	wc.opcode = IBV_WC_RDMA_WRITE;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.byte_len = 4096;
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_RDMA_WRITE, wc_flags IBV_WC_WITH_IMM, byte_len 4096");
	wc.opcode = IBV_WC_SEND;
	wc.byte_len = 0;
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_SEND, wc_flags IBV_WC_WITH_IMM, byte_len 0");

	/* Flags without a name, alone and beside named ones, in hex. */
	wc.wc_flags = 1u << 7;
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_SEND, wc_flags 0x80, byte_len 0");
	wc.wc_flags = IBV_WC_GRH | (1u << 7);
	im_wc_describe(&wc, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "IBV_WC_SEND, wc_flags IBV_WC_GRH|0x80, byte_len 0");

	/* An opcode it has no name for, and a buffer too small: cut, terminated. */
	wc.opcode = IBV_WC_TSO;
	wc.wc_flags = 0;
	im_wc_describe(&wc, buf, 12);
	CHECK_STR_EQ(buf, "opcode 7, w");
	return check_finish();
}
