/* SPDX-License-Identifier: MIT */
/*
 * no-recv-server: a hostile peer for 02-send-recv-client's RNR test.
 *
 * It accepts a client with a hello that grants credits, but posts no
 * receive at all: the client's first SEND finds no receive, our side answers
 * with "receiver not ready" (RNR) NAKs, the client's device retries
 * rnr_retry times (6, from our accept) and then fails the send with
 * IBV_WC_RNR_RETRY_EXC_ERR. The client must say so and exit 1; we wait for
 * its disconnect and exit 0.
 *
 *     no-recv-server -a ADDR -p PORT
 *
 * Exit status: 0 the client connected and disconnected; 1 otherwise;
 * 2 bad command line; 77 no RDMA device.
 */
#include <errno.h>
#include <stdio.h>

#include "rex_conn.h"
#include "rex_device.h"
#include "rex_options.h"
#include "wire.h"

#define PROGRAM "no-recv-server"
/* Credits we grant without a single receive behind them. */
#define FAKE_CREDITS 16
/* The client's device spends about 7 x 655 ms on RNR retries before it
 * gives up and disconnects: wait well beyond that, in ms. */
#define CM_TIMEOUT_MS 30000

int main(int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "accept one 02-send-recv client, grant credits, post no receive",
	    .is_server = true,
	};
	struct rex_options opts;
	struct rex_listener *listener;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct sr_hello hello;
	uint8_t data[SR_HELLO_WIRE_SIZE];
	char why[SR_WHY_SIZE];
	int status = REX_EXIT_FAILURE;
	int ret;

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

	rex_conn_attr_default(&attr); /* rnr_retry_count 6: the client retries 6 times */
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
	/* The lie: credits granted, no receive posted. */
	sr_hello_init(&hello, FAKE_CREDITS, hello.max_payload);
	sr_hello_encode(&hello, data);
	/* A client that leaves at once may be seen to go before ESTABLISHED. */
	ret = rex_conn_accept(conn, data, sizeof(data));
	if (ret && ret != -ECONNRESET)
		goto out_destroy_connection;
	printf(PROGRAM ": accepted with %d credits and no receive posted\n", FAKE_CREDITS);
	if (rex_conn_wait_disconnect(conn))
		goto out_destroy_connection;
	printf(PROGRAM ": client disconnected\n");
	status = REX_EXIT_OK;

out_destroy_connection:
	rex_conn_destroy(conn);
out_destroy_listener:
	rex_listener_destroy(listener);
	return status;
}
