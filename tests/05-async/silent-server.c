/* SPDX-License-Identifier: MIT */
/*
 * silent-server: a hostile peer for 05-async-client's idle deadline. It
 * accepts like 05-async-server (rex_svc, the same hello and credits) and
 * takes every message, but answers none: the client must drop its
 * connection at its idle deadline instead of waiting for ever. Once that
 * connection is gone, it exits.
 *
 *     silent-server -a ADDR -p PORT
 *
 * Exit status: 0 a client came and went; 1 otherwise; 2 bad command line;
 * 77 no RDMA device.
 */
#include <errno.h>
#include <stdio.h>

#include "echo.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"

#define PROGRAM "silent-server"

/* The client is gone: we are done. */
static void on_closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	printf(PROGRAM ": %s: closed (%s)\n", rex_svc_conn_name(c), rex_svc_why_name(why));
	rex_svc_stop(rex_svc_conn_svc(c));
}

static void on_stopped(struct rex_svc *svc)
{
	rex_loop_stop(rex_svc_user(svc));
}

int main(int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "accept one 05-async-client connection, never answer it",
	    .is_server = true,
	};
	/* No message callback: every message is taken, none answered. */
	static const struct rex_svc_ops ops = {.closed = on_closed, .stopped = on_stopped};
	struct rex_svc_config cfg;
	struct rex_options opts;
	struct rex_loop *loop;
	struct rex_svc *svc = NULL;
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = rex_options_parse(&spec, argc, argv, &opts, stdout, stderr);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	as_config(&cfg, "server");
	cfg.msg_size = AS_TYPE_SIZE + AS_MAX_PAYLOAD;
	cfg.peer_may_leave = true; /* the client leaves at its deadline: that is the test */
	cfg.attr.idle_timeout_ms = 0; /* we wait as long as it takes */
	loop = rex_loop_create();
	if (loop && (svc = rex_svc_create(loop, &cfg, &ops, loop)) &&
	    rex_svc_serve(svc, opts.addr, opts.port) == 0) {
		printf(PROGRAM ": listening on %s port %u\n", opts.addr ? opts.addr : "0.0.0.0",
		       (unsigned)opts.port);
		if (rex_loop_run(loop) == 0)
			status = REX_EXIT_OK;
	}
	if (rex_svc_destroy(svc) || rex_loop_destroy(loop))
		status = REX_EXIT_FAILURE;
	return status;
}
