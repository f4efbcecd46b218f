/* SPDX-License-Identifier: MIT */
/*
 * The passive side answers a disconnect at once: the server sees the
 * client's DISCONNECTED in rex_conn_wait_disconnect(), which replies with
 * rdma_disconnect(), and only then lingers LINGER_MS before it tears down.
 * The client's rex_conn_disconnect() must therefore complete in well under
 * LINGER_MS. (When the passive side did not call rdma_disconnect(), the
 * reply went out only when it destroyed its id, and the client waited for
 * the whole linger.)
 *
 *   disconnect_pair server -a ADDR -p PORT
 *   disconnect_pair client -a ADDR -p PORT
 *
 * Exit: 0 as expected; 1 a failure, or a disconnect slower than MAX_MS;
 * 2 bad command line; 77 no RDMA device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rex_conn.h"
#include "rex_device.h"
#include "rex_options.h"

#define LINGER_MS 4000 /* the server's pause between the disconnect and its teardown */
#define MAX_MS    1500 /* the client's disconnect must take less: one round trip, really */

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

static int serve(const struct rex_options *o, const struct rex_conn_attr *attr)
{
	struct rex_listener *listener = rex_listener_create(o->addr, o->port);
	struct rex_conn *conn;
	int status = REX_EXIT_FAILURE;
	int ret;

	if (!listener)
		return REX_EXIT_FAILURE;
	printf("server: listening on %s\n", listener->name);
	conn = rex_listener_get_request(listener, attr);
	if (!conn)
		goto out_destroy_listener;
	/* The client leaves at once: its disconnect may come in place of
	 * ESTABLISHED (-ECONNRESET, conn->peer_left), and is answered below. */
	ret = rex_conn_accept(conn, NULL, 0);
	if (ret && ret != -ECONNRESET)
		goto out_destroy_conn;
	if (!ret)
		printf("server: connection established\n");
	if (rex_conn_wait_disconnect(conn))
		goto out_destroy_conn;
	printf("server: client disconnected, lingering %d ms before the teardown\n", LINGER_MS);
	usleep(LINGER_MS * 1000);
	status = REX_EXIT_OK;
out_destroy_conn:
	if (rex_conn_destroy(conn))
		status = REX_EXIT_FAILURE;
out_destroy_listener:
	if (rex_listener_destroy(listener))
		status = REX_EXIT_FAILURE;
	return status;
}

static int connect_and_leave(const struct rex_options *o, const struct rex_conn_attr *attr)
{
	struct rex_conn *conn = rex_conn_create_client(o->addr, o->port, attr);
	int status = REX_EXIT_FAILURE;
	long long start, took;

	if (!conn)
		return REX_EXIT_FAILURE;
	if (rex_conn_connect(conn, NULL, 0))
		goto out_destroy_conn;
	printf("client: connected\n");
	start = now_ms();
	if (rex_conn_disconnect(conn))
		goto out_destroy_conn;
	took = now_ms() - start;
	printf("client: disconnect took %lld ms\n", took);
	if (took >= MAX_MS) {
		fprintf(stderr, "client: FAIL: the disconnect took %lld ms, not under %d: did the "
		        "server answer it before its teardown?\n", took, MAX_MS);
		goto out_destroy_conn;
	}
	status = REX_EXIT_OK;
out_destroy_conn:
	if (rex_conn_destroy(conn))
		status = REX_EXIT_FAILURE;
	return status;
}

int main(int argc, char **argv)
{
	struct rex_options_spec spec = {.program = "disconnect_pair", .is_server = true};
	struct rex_conn_attr attr;
	struct rex_options o;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 2 || (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: disconnect_pair server|client -a ADDR [-p PORT]\n");
		return REX_EXIT_USAGE;
	}
	spec.is_server = strcmp(argv[1], "server") == 0;
	ret = rex_options_parse(&spec, argc - 1, argv + 1, &o, stdout, stderr);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;
	rex_conn_attr_default(&attr);
	return spec.is_server ? serve(&o, &attr) : connect_and_leave(&o, &attr);
}
