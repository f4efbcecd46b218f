/* SPDX-License-Identifier: MIT */
/*
 * aconn-square-client: the client of aconn-square-server, on copies of
 * common/'s asynchronous half only (see server.c). Each of -q connections
 * CONNECTIONS sends REQUESTS requests, up to WINDOW of them in flight, and
 * checks every reply (request k of connection i is i << 32 | k; its reply,
 * its square).
 *
 *     aconn-square-client ADDR PORT CONNECTIONS REQUESTS
 *
 * Exit status: 0 when every reply came and was right, 1 otherwise, 2 on a
 * bad command line.
 */
#include <endian.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_svc.h"

#define WINDOW 8 /* requests in flight: the server has 8 send slots for replies */

static struct conn {
	uint64_t sent, answered;
} conns[256];
static unsigned qps, ended, failed;
static uint64_t count, right;

/* Request k of connection i: i << 32 | (k + 1); its reply is its square. */
#define REQUEST(cn, k) ((uint64_t)((cn)-conns) << 32 | ((k) + 1))

/* Requests while fewer than the window are unanswered. */
static void ask(struct rex_svc_conn *c, struct conn *cn)
{
	while (cn->sent < count && cn->sent - cn->answered < WINDOW) {
		uint64_t x = htobe64(REQUEST(cn, cn->sent));

		if (rex_svc_send(c, &x, sizeof(x))) {
			rex_svc_close(c, true);
			return;
		}
		cn->sent++;
	}
}

static void established(struct rex_svc_conn *c, const void *pdata, size_t len)
{
	(void)pdata;
	(void)len;
	ask(c, rex_svc_conn_user(c));
}

static void message(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	struct conn *cn = rex_svc_conn_user(c);
	uint64_t want = REQUEST(cn, cn->answered), got = 0;

	memcpy(&got, msg, len < sizeof(got) ? len : sizeof(got));
	if (len != sizeof(got) || be64toh(got) != want * want) {
		fprintf(stderr, "client: %s: bad reply to %" PRIu64 ": %" PRIu64 " (%u bytes)\n",
		        rex_svc_conn_name(c), want, be64toh(got), len);
		rex_svc_close(c, true);
		return;
	}
	right++;
	if (++cn->answered == count)
		rex_svc_close(c, false); /* done: disconnect */
	else
		ask(c, cn);
}

static void closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	struct conn *cn = rex_svc_conn_user(c);

	failed += why != REX_SVC_DONE || cn->answered != count;
	if (++ended == qps)
		rex_loop_stop(rex_svc_user(rex_svc_conn_svc(c)));
}

int main(int argc, char **argv)
{
	static const struct rex_svc_ops ops = {
	    .established = established, .message = message, .closed = closed};
	struct rex_svc_config cfg;
	struct rex_loop *loop = rex_loop_create();
	struct rex_svc *svc = NULL;

	if (argc != 5 || (qps = (unsigned)atoi(argv[3])) < 1 || qps > 256 ||
	    (count = strtoull(argv[4], NULL, 10)) < 1) {
		fprintf(stderr, "usage: %s ADDR PORT CONNECTIONS(1-256) REQUESTS\n", argv[0]);
		return 2;
	}
	rex_svc_config_default(&cfg);
	cfg.who = "client";
	cfg.msg_size = 8;
	if (loop && (svc = rex_svc_create(loop, &cfg, &ops, loop)) != NULL) {
		for (unsigned i = 0; i < qps; i++)
			if (rex_svc_dial(svc, argv[1], (uint16_t)atoi(argv[2]), NULL, 0, &conns[i]))
				failed++, ended++;
		if (ended < qps)
			rex_loop_run(loop);
	}
	printf("client: %u connections, %u failed; %" PRIu64 " of %" PRIu64 " replies right\n", qps,
	       svc ? failed : qps, right, qps * count);
	/* A connection not closed (-EBUSY) keeps the loop to the process's end. */
	return rex_svc_destroy(svc) || rex_loop_destroy(loop) || failed || right != qps * count;
}
