/* SPDX-License-Identifier: MIT */
/*
 * bad-header-client: a hostile peer for 02-send-recv-server's header checks.
 *
 * It connects with a valid hello, then sends one DATA whose header claims
 * more payload than arrives. The server must refuse it by name without
 * using the payload, disconnect us, count the client as failed and exit 1.
 * We wait for that disconnect and exit 0.
 *
 *     bad-header-client -a ADDR -p PORT
 *
 * Exit status: 0 the server sent the message's completion and disconnected
 * us; 1 otherwise; 2 bad command line; 77 no RDMA device.
 *
 * Built a second time, with VANISH defined, as vanish-client: it connects
 * with a valid hello and then exits at once, with no message, no BYE and no
 * disconnect of its own, as a killed client would. The server must notice
 * through the CM at once, not when its wait for the next message times out.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

#ifdef VANISH
#define PROGRAM "vanish-client"
#else
#define PROGRAM "bad-header-client"
#endif
#define MAX_PAYLOAD 64 /* what our hello says we send */
#define CLAIMED     32 /* what the header claims */
#define SENT        16 /* what really follows the header */
#define TIMEOUT_MS  10000

int main(int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary =
	        "connect to 02-send-recv-server and send a header that lies about its length",
	    .is_server = false,
	};
	static uint8_t recv_buf[SR_HEADER_SIZE + MAX_PAYLOAD];
	static uint8_t send_buf[SR_HEADER_SIZE + SENT];
	struct rex_options opts;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct ibv_mr *recv_mr, *send_mr;
	struct sr_hello hello;
	struct sr_header hdr = {.type = SR_DATA, .credits = 0, .length = CLAIMED};
	uint8_t data[SR_HELLO_WIRE_SIZE];
	struct ibv_wc wc;
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rex_options_parse(&spec, argc, argv, &opts, stdout, stderr);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	rex_conn_attr_default(&attr);
	attr.timeout_ms = TIMEOUT_MS;
	conn = rex_conn_create_client(opts.addr, opts.port, &attr);
	if (!conn)
		return REX_EXIT_FAILURE;
	recv_mr = ibv_reg_mr(conn->pd, recv_buf, sizeof(recv_buf), IBV_ACCESS_LOCAL_WRITE);
	if (!recv_mr) {
		rex_report_errno("ibv_reg_mr", errno);
		goto out_destroy_connection;
	}
	send_mr = ibv_reg_mr(conn->pd, send_buf, sizeof(send_buf), 0);
	if (!send_mr) {
		rex_report_errno("ibv_reg_mr", errno);
		goto out_deregister_recv;
	}
	struct ibv_sge rsge = {
	    .addr = (uintptr_t)recv_buf, .length = sizeof(recv_buf), .lkey = recv_mr->lkey};
	struct ibv_recv_wr rwr = {.wr_id = 1, .sg_list = &rsge, .num_sge = 1};
	struct ibv_recv_wr *rbad;
	ret = ibv_post_recv(conn->qp, &rwr, &rbad);
	if (ret) {
		rex_report_errno("ibv_post_recv", ret);
		goto out_deregister_send;
	}
	sr_hello_init(&hello, 1, MAX_PAYLOAD);
	sr_hello_encode(&hello, data);
	if (rex_conn_connect(conn, data, sizeof(data)))
		goto out_deregister_send;
	printf(PROGRAM ": connected\n");
#ifdef VANISH
	/* Like a crash: the kernel closes our CM id, and the server's CM sees
	 * a disconnect; nothing of ours is released by hand. */
	printf(PROGRAM ": leaving without a word\n");
	_exit(REX_EXIT_OK);
#endif

	/* The lie: the header claims CLAIMED bytes, SENT follow. */
	sr_header_encode(&hdr, send_buf);
	memset(send_buf + SR_HEADER_SIZE, 0x5a, SENT);
	struct ibv_sge ssge = {
	    .addr = (uintptr_t)send_buf, .length = sizeof(send_buf), .lkey = send_mr->lkey};
	struct ibv_send_wr swr = {.wr_id = 2,
	                          .sg_list = &ssge,
	                          .num_sge = 1,
	                          .opcode = IBV_WR_SEND,
	                          .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *sbad;
	ret = ibv_post_send(conn->qp, &swr, &sbad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		goto out_disconnect;
	}
	ret = rex_cq_wait(conn->comp_channel, conn->cq, &wc, 1, TIMEOUT_MS);
	if (ret < 0)
		goto out_disconnect;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc(PROGRAM ": send", &wc);
		goto out_disconnect;
	}
	printf(PROGRAM ": sent a DATA header claiming %d bytes with %d bytes\n", CLAIMED, SENT);
	if (rex_conn_wait_disconnect(conn))
		goto out_disconnect;
	printf(PROGRAM ": the server disconnected us\n");
	status = REX_EXIT_OK;
	goto out_deregister_send;

out_disconnect:
	rex_conn_disconnect(conn);
out_deregister_send:
	ret = ibv_dereg_mr(send_mr);
	if (ret)
		rex_report_errno("ibv_dereg_mr", ret);
out_deregister_recv:
	ret = ibv_dereg_mr(recv_mr);
	if (ret)
		rex_report_errno("ibv_dereg_mr", ret);
out_destroy_connection:
	rex_conn_destroy(conn);
	return status;
}
