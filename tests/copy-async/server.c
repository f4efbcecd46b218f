/* SPDX-License-Identifier: MIT */
/*
 * aconn-square-server: a request/reply service for many clients at once,
 * written as an engineer who copied common/'s asynchronous half would
 * write it: built from copies of the files common/rex_svc.h says to copy,
 * and nothing else of this project (tests/copy-async/build.sh).
 *
 * A request is a message of 8 bytes, a number in network byte order; the
 * reply is its square, the same way. The helper's credits keep a client
 * from sending more than the server has receives for.
 *
 *     aconn-square-server ADDR PORT [libevent]     until SIGINT or SIGTERM
 *
 * With "libevent", the helpers run inside a libevent loop (evloop.c), as
 * in a service that has one already.
 *
 * Exit status: 0 after a signal, 1 on a failure of its own, 2 on a bad
 * command line.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_svc.h"

int evloop_run(struct rex_loop *loop); /* evloop.c: inside libevent's loop */

static unsigned long served, failed;
static uint64_t replies;

static void message(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	uint64_t x;
	int ret;

	if (len != sizeof(x)) {
		fprintf(stderr, "server: %s: bad request (%u bytes)\n", rex_svc_conn_name(c), len);
		rex_svc_close(c, true);
		return;
	}
	memcpy(&x, msg, sizeof(x));
	x = htobe64(be64toh(x) * be64toh(x));
	ret = rex_svc_send(c, &x, sizeof(x));
	if (ret == -ENOBUFS) /* every send slot taken: this request again later */
		rex_svc_hold(c);
	else if (ret)
		rex_svc_close(c, true);
	else
		replies++;
}

static void closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	(void)c;
	served++;
	failed += why != REX_SVC_DONE;
}

static void stopped(struct rex_svc *svc)
{
	rex_loop_stop(rex_svc_user(svc));
}

static void on_signal(struct rex_loop *loop, int signo, void *svc)
{
	(void)loop;
	(void)signo;
	rex_svc_stop(svc);
}

int main(int argc, char **argv)
{
	static const int signals[] = {SIGINT, SIGTERM};
	static const struct rex_svc_ops ops = {
	    .message = message, .closed = closed, .stopped = stopped};
	struct rex_svc_config cfg;
	struct rex_loop *loop;
	struct rex_svc *svc = NULL;
	int status = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "libevent"))) {
		fprintf(stderr, "usage: %s ADDR PORT [libevent]\n", argv[0]);
		return 2;
	}
	rex_svc_config_default(&cfg);
	cfg.msg_size = 8;          /* a request, a reply */
	cfg.peer_may_leave = true; /* a client leaves when it has its replies */
	loop = rex_loop_create();
	if (!loop || !(svc = rex_svc_create(loop, &cfg, &ops, loop)) ||
	    rex_loop_add_signals(loop, signals, 2, on_signal, svc) ||
	    rex_svc_serve(svc, argv[1], (uint16_t)atoi(argv[2])))
		goto out;
	printf("server: listening on port %s\n", argv[2]);
	if ((argc == 4 ? evloop_run(loop) : rex_loop_run(loop)) == 0)
		status = 0;
	printf("server: done: %lu connections served, %lu failed; %" PRIu64 " replies\n", served,
	       failed, replies);
out:
	if (rex_svc_destroy(svc) || rex_loop_destroy(loop))
		status = 1;
	return status;
}
