/* SPDX-License-Identifier: MIT */
/*
 * silent-server: a hostile peer for 02-send-recv-client's CQ-timeout test.
 *
 * It plays by the rules up to the accept: it posts a receive for every
 * credit it grants, so the client's messages land. Then it never answers.
 * The client's sends complete, but no echo ever comes: the client must give
 * up after its completion-channel timeout, say so and exit 1, instead of
 * sleeping forever. We wait for its disconnect and exit 0.
 *
 *     silent-server -a ADDR -p PORT
 *
 * Exit status: 0 the client connected and disconnected; 1 otherwise;
 * 2 bad command line; 77 no RDMA device.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "rex_conn.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

#define PROGRAM "silent-server"
/* Receives posted, and credits granted: a real one behind each credit. */
#define RECVS 4
/* The client waits 10 s for an echo, then disconnects: wait beyond that, in ms. */
#define CM_TIMEOUT_MS 30000

int main(int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "accept one 02-send-recv client, take its messages, never answer",
	    .is_server = true,
	};
	struct rex_options opts;
	struct rex_listener *listener;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct ibv_mr *mr = NULL;
	struct sr_hello hello;
	uint8_t data[SR_HELLO_WIRE_SIZE];
	uint8_t *mem = NULL;
	size_t slot_size;
	char why[SR_WHY_SIZE];
	int status = REX_EXIT_FAILURE;
	int i, ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rex_options_parse(&spec, argc, argv, &opts, stdout, stderr);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	listener = rex_listener_create(opts.addr, opts.port);
	if (!listener)
		return REX_EXIT_FAILURE;
	printf(PROGRAM ": listening on %s\n", listener->name);

	rex_conn_attr_default(&attr);
	attr.timeout_ms = CM_TIMEOUT_MS;
	conn = rex_listener_get_request(listener, &attr);
	if (!conn)
		goto out_destroy_listener;
	ret = sr_hello_decode(conn->peer_data, conn->peer_data_len, &hello, why, sizeof(why));
	if (ret) {
		fprintf(stderr, PROGRAM ": bad hello: %s\n", why);
		rex_conn_reject(conn, NULL, 0);
		goto out_destroy_connection;
	}
	slot_size = SR_HEADER_SIZE + hello.max_payload;
	mem = calloc(RECVS, slot_size);
	if (!mem) {
		rex_report_errno("calloc", errno);
		goto out_destroy_connection;
	}
	mr = ibv_reg_mr(conn->pd, mem, RECVS * slot_size, IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		rex_report_errno("ibv_reg_mr", errno);
		goto out_free;
	}
	for (i = 0; i < RECVS; i++) {
		struct ibv_sge sge = {.addr = (uintptr_t)(mem + i * slot_size),
		                      .length = (uint32_t)slot_size,
		                      .lkey = mr->lkey};
		struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1};
		struct ibv_recv_wr *bad;

		ret = ibv_post_recv(conn->qp, &wr, &bad);
		if (ret) {
			rex_report_errno("ibv_post_recv", ret);
			goto out_deregister;
		}
	}
	sr_hello_init(&hello, RECVS, hello.max_payload);
	sr_hello_encode(&hello, data);
	/* A client that leaves at once may be seen to go before ESTABLISHED. */
	ret = rex_conn_accept(conn, data, sizeof(data));
	if (ret && ret != -ECONNRESET)
		goto out_deregister;
	printf(PROGRAM ": accepted with %d receives posted; never answering\n", RECVS);
	if (rex_conn_wait_disconnect(conn))
		goto out_deregister;
	printf(PROGRAM ": client disconnected\n");
	status = REX_EXIT_OK;

out_deregister:
	ret = ibv_dereg_mr(mr);
	if (ret)
		rex_report_errno("ibv_dereg_mr", ret);
out_free:
	free(mem);
out_destroy_connection:
	rex_conn_destroy(conn);
out_destroy_listener:
	rex_listener_destroy(listener);
	return status;
}
