/* SPDX-License-Identifier: MIT */
/*
 * rex_format_peer_wc(): a failed receive is told from the responder's side,
 * with what we granted; rex_format_wc_brief(): what a stray completion was.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "rex_error.h"

int main(void)
{
	struct ibv_wc wc;
	char buf[1024];

	/* A flushed receive: the requester's hint points at "the first failed
	 * completion"; the responder's names what the peer did to us. */
	memset(&wc, 0, sizeof(wc));
	wc.status = IBV_WC_WR_FLUSH_ERR;
	wc.wr_id = 7;
	rex_format_peer_wc(buf, sizeof(buf), "receive", &wc, "16 x 64 bytes, remote write only");
	CHECK_STR_CONTAINS(buf, "receive: work completion failed: ");
	CHECK_STR_CONTAINS(buf, "(IBV_WC_WR_FLUSH_ERR 5, wr_id 7,");
	CHECK_STR_CONTAINS(buf, "\n  hint: our queue pair went to the error state");
	CHECK_STR_CONTAINS(buf, "as responder, we refused a WRITE or READ of the peer's");
	CHECK_STR_CONTAINS(buf, "\n  granted: 16 x 64 bytes, remote write only");
	CHECK_TRUE(strcmp(buf + strlen(buf) - 9, "rite only") == 0); /* the last line */

	/* The same status from the requester's side keeps its own hint. */
	rex_format_wc(buf, sizeof(buf), "send", &wc);
	CHECK_STR_CONTAINS(buf, "the first failed completion says why");
	CHECK_STR_LACKS(buf, "granted:");

	/* A remote access error on a receive: we refused, not the peer. */
	wc.status = IBV_WC_REM_ACCESS_ERR;
	rex_format_peer_wc(buf, sizeof(buf), "receive", &wc, NULL);
	CHECK_STR_CONTAINS(buf, "as responder, we refused the peer's WRITE WITH IMM");
	CHECK_STR_LACKS(buf, "granted:");
	rex_format_wc(buf, sizeof(buf), "WRITE", &wc);
	CHECK_STR_CONTAINS(buf, "the peer, as responder, refused the access");

	/* A message too large for the receive, as Soft-RoCE and NICs say it. */
	wc.status = IBV_WC_LOC_QP_OP_ERR;
	CHECK_STR_CONTAINS(rex_wc_responder_hint(wc.status), "did not fit this receive");
	CHECK_TRUE(rex_wc_responder_hint(IBV_WC_LOC_LEN_ERR) ==
	           rex_wc_responder_hint(IBV_WC_LOC_QP_OP_ERR));
	/* Others fall back to the generic hint. */
	CHECK_TRUE(rex_wc_responder_hint(IBV_WC_RETRY_EXC_ERR) ==
	           rex_wc_hint(IBV_WC_RETRY_EXC_ERR));

	/* Brief: a message that arrived where none should. */
	memset(&wc, 0, sizeof(wc));
	wc.opcode = IBV_WC_RECV_RDMA_WITH_IMM;
	wc.byte_len = 64;
	wc.wc_flags = IBV_WC_WITH_IMM;
	wc.imm_data = htonl(0x01000040);
	rex_format_wc_brief(buf, sizeof(buf), &wc);
	CHECK_STR_EQ(buf, "IBV_WC_RECV_RDMA_WITH_IMM of 64 bytes, immediate 0x01000040");
	wc.wc_flags = 0;
	wc.opcode = IBV_WC_RECV;
	rex_format_wc_brief(buf, sizeof(buf), &wc);
	CHECK_STR_EQ(buf, "IBV_WC_RECV of 64 bytes");
	wc.opcode = (enum ibv_wc_opcode)77;
	rex_format_wc_brief(buf, sizeof(buf), &wc);
	CHECK_STR_EQ(buf, "opcode 77 of 64 bytes");
	wc.status = IBV_WC_LOC_LEN_ERR;
	rex_format_wc_brief(buf, sizeof(buf), &wc);
	CHECK_STR_EQ(buf, "failed: IBV_WC_LOC_LEN_ERR");

	return check_finish();
}
