/* SPDX-License-Identifier: MIT */
/*
 * silent-client: a peer for 05-async-server's idle deadline. It connects
 * like a real client (a valid hello, receives posted behind its credits),
 * then says nothing at all, and measures how long the server takes to drop
 * it. It is written without rex_svc, with chapter 01's blocking helpers:
 * the hello's bytes are spelt out here, as a peer of another code base
 * would write them (rex_svc.h: a 4-byte header, then the program's data).
 *
 *     silent-client -a ADDR -p PORT
 *
 * Prints "silent-client: dropped by the server after N ms" once the
 * server's disconnect arrives. Exit status: 0 the server dropped us within
 * WAIT_MS; 1 otherwise; 2 bad command line; 77 no RDMA device.
 */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include "rex_buffers.h"
#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "echo.h"
#include "rex_wire.h"

#define PROGRAM     "silent-client"
#define MAX_PAYLOAD 64
#define RECVS       4     /* the credits it gives: rex_svc wants 4 at least */
#define WAIT_MS     30000 /* far beyond any idle deadline worth having */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "connect to 05-async-server, then say nothing until it drops us",
	    .is_server = false,
	};
	struct rex_options opts;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct rex_buffers recv;
	uint8_t data[4 + AS_HELLO_SIZE];
	int status = REX_EXIT_FAILURE;
	unsigned posted = 0, i;
	long long start;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rex_options_parse(&spec, argc, argv, &opts, stdout, stderr);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	rex_conn_attr_default(&attr);
	attr.timeout_ms = WAIT_MS;
	conn = rex_conn_create_client(opts.addr, opts.port, &attr);
	if (!conn)
		return REX_EXIT_FAILURE;
	if (rex_buffers_create(&recv, conn->pd, RECVS, REX_SVC_MSG_HEADER + 1 + MAX_PAYLOAD,
	                       IBV_ACCESS_LOCAL_WRITE))
		goto out_destroy_conn;
	for (i = 0; i < RECVS; i++) {
		if (rex_buffers_post_recv(conn->qp, &recv, i, i))
			goto out_drain;
		posted++;
	}
	/* rex_svc's header (version 1, 4 bytes of ours, our credits), then
	 * the chapter's hello: the payload size we would send. */
	data[0] = 1;
	data[1] = AS_HELLO_SIZE;
	rex_put_be16(data + 2, RECVS);
	rex_put_be32(data + 4, MAX_PAYLOAD);
	if (rex_conn_connect(conn, data, sizeof(data)))
		goto out_drain;
	printf(PROGRAM ": connected; saying nothing\n");
	start = now_ms();
	/* Waits for the server's disconnect request, and answers it. */
	if (rex_conn_wait_disconnect(conn) == 0) {
		printf(PROGRAM ": dropped by the server after %lld ms\n", now_ms() - start);
		status = REX_EXIT_OK;
	}
out_drain:
	/* The QP is in the error state (connect failed or disconnected). */
	if (posted && rex_cq_drain(conn->cq, posted, 5000))
		goto out_destroy_conn; /* leak rather than free under the device */
	if (rex_buffers_destroy(&recv))
		status = REX_EXIT_FAILURE;
out_destroy_conn:
	if (rex_conn_destroy(conn))
		status = REX_EXIT_FAILURE;
	return status;
}
