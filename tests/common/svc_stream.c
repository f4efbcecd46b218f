/* SPDX-License-Identifier: MIT */
/*
 * svc_stream: common/rex_svc.h's messages with credits, pushed hard. Both
 * sides of every connection stream messages at once, as fast as their send
 * slots allow, with few receive slots (4), so credits run out all the time
 * and come back alone (credit-only messages) as often as with messages.
 * The transport's RNR retry is 0: a single message sent to a receiver
 * with no receive posted fails its connection, and the test.
 *
 *     svc_stream server ADDR PORT
 *     svc_stream client ADDR PORT CONNECTIONS MESSAGES
 *
 * The client sends MESSAGES, and asks for them in its private data; the
 * server answers "ok" and the number in its own, and sends half as many:
 * once it has sent its half, only credit-only messages can give the client
 * its credits back. One more connection asks for 0:
 * the server rejects it, and the client expects that. Message k carries k
 * (8 bytes, big-endian) and k % 193 bytes of a pattern of k; every one is
 * checked. The server sends one last message once it has all of the
 * client's; the client disconnects when it has that one.
 *
 * Exit status: 0 when all came intact, 1 otherwise, 2 on a bad command line.
 */
#include <endian.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rex_svc.h"

#define MSG_MAX 200

struct flow {
	uint64_t total;   /* what the client sends; the server sends half of it */
	uint64_t out, in; /* messages this side sends, and expects (its last one apart) */
	uint64_t sent, got;
	bool acked; /* server: the last message is queued; client: it arrived */
};

static bool server;
static unsigned ends, failed, rejected, wanted;
static uint64_t intact;
static struct rex_svc_msg_stats sum;

static size_t make(uint64_t k, uint8_t *buf)
{
	uint64_t be = htobe64(k);
	size_t len = (size_t)(k % 193), i;

	memcpy(buf, &be, 8);
	for (i = 0; i < len; i++)
		buf[8 + i] = (uint8_t)(k * 7 + i);
	return 8 + len;
}

static void pump(struct rex_svc_conn *c)
{
	struct flow *f = rex_svc_conn_user(c);
	uint8_t buf[MSG_MAX];
	int ret = 0;

	while (ret == 0 && f->sent < f->out) {
		ret = rex_svc_send(c, buf, (uint32_t)make(f->sent, buf));
		f->sent += ret == 0;
	}
	if (ret == 0 && server && f->got == f->in && f->sent == f->out && !f->acked) {
		ret = rex_svc_send(c, buf, (uint32_t)make(f->out, buf));
		f->acked = ret == 0;
		if (f->acked)
			rex_svc_conn_peer_done(c); /* the client may go now */
	}
	if (ret && ret != -ENOBUFS) {
		fprintf(stderr, "svc_stream: %s: rex_svc_send: %s\n", rex_svc_conn_name(c),
		        strerror(-ret));
		rex_svc_close(c, true);
	}
}

static int request(struct rex_svc_conn *c, const void *pdata, size_t len, void *reply,
                   size_t *reply_len)
{
	struct flow *f;
	uint32_t n = 0;

	if (len >= 4)
		memcpy(&n, pdata, 4);
	n = be32toh(n);
	if (n == 0 || !(f = calloc(1, sizeof(*f)))) {
		*reply_len = 0;
		rejected++;
		return -1;
	}
	f->total = n;
	f->out = n / 2;
	f->in = n;
	rex_svc_conn_set_user(c, f);
	memcpy(reply, "ok", 2);
	n = htobe32(n);
	memcpy((char *)reply + 2, &n, 4);
	*reply_len = 6;
	return 0;
}

static void established(struct rex_svc_conn *c, const void *pdata, size_t len)
{
	struct flow *f = rex_svc_conn_user(c);
	uint32_t n = htobe32((uint32_t)f->total);

	if (!server &&
	    (len != 6 || memcmp(pdata, "ok", 2) || memcmp((const char *)pdata + 2, &n, 4))) {
		fprintf(stderr, "svc_stream: %s: the server's answer is not ok and %u\n",
		        rex_svc_conn_name(c), (unsigned)f->total);
		rex_svc_close(c, true);
		return;
	}
	pump(c);
}

static void message(struct rex_svc_conn *c, const void *msg, uint32_t len)
{
	struct flow *f = rex_svc_conn_user(c);
	uint8_t want[MSG_MAX];
	size_t n = make(f->got, want);

	if (len != n || memcmp(msg, want, n)) {
		fprintf(stderr, "svc_stream: %s: message %llu: %u bytes, not the %zu expected\n",
		        rex_svc_conn_name(c), (unsigned long long)f->got, len, n);
		rex_svc_close(c, true);
		return;
	}
	intact++;
	f->got++;
	if (!server && f->got == f->in + 1) {
		f->acked = true; /* the server's last message: all came */
		rex_svc_close(c, false);
	} else if (server && f->got > f->in) {
		fprintf(stderr, "svc_stream: %s: more messages than asked\n", rex_svc_conn_name(c));
		rex_svc_close(c, true);
	} else {
		pump(c);
	}
}

static void closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	struct flow *f = rex_svc_conn_user(c);
	struct rex_svc_msg_stats st;
	bool asked_zero = !server && f && f->total == 0;

	rex_svc_conn_msg_stats(c, &st);
	sum.sent += st.sent;
	sum.credit_only += st.credit_only;
	sum.waits += st.waits;
	if (asked_zero)
		rejected += why == REX_SVC_REJECTED;
	else
		failed += why != REX_SVC_DONE || !f || f->got != f->in + !server || !f->acked;
	if (!server || f)
		free(f);
	if (!server && ++ends == wanted)
		rex_loop_stop(rex_svc_user(rex_svc_conn_svc(c)));
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

static int dial_all(struct rex_svc *svc, const char *addr, uint16_t port, unsigned conns,
                    uint32_t messages)
{
	unsigned i;

	wanted = conns + 1;
	for (i = 0; i <= conns; i++) {
		struct flow *f = calloc(1, sizeof(*f));
		uint32_t n = htobe32(i < conns ? messages : 0);

		if (!f)
			return -1;
		f->total = i < conns ? messages : 0;
		f->out = f->total;
		f->in = f->total / 2;
		if (rex_svc_dial(svc, addr, port, &n, sizeof(n), f)) {
			free(f);
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const int signals[] = {SIGINT, SIGTERM};
	static const struct rex_svc_ops ops = {.request = request,
	                                       .established = established,
	                                       .message = message,
	                                       .send_ready = pump,
	                                       .closed = closed,
	                                       .stopped = stopped};
	struct rex_svc_config cfg;
	struct rex_loop *loop;
	struct rex_svc *svc = NULL;
	unsigned conns = 0;
	uint32_t messages = 0;
	int status = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	server = argc == 4 && strcmp(argv[1], "server") == 0;
	if (!server && !(argc == 6 && strcmp(argv[1], "client") == 0 &&
	                 (conns = (unsigned)atoi(argv[4])) >= 1 && conns <= 64 &&
	                 (messages = (uint32_t)atoi(argv[5])) >= 1)) {
		fprintf(stderr,
		        "usage: svc_stream server ADDR PORT | client ADDR PORT CONNS MESSAGES\n");
		return 2;
	}
	rex_svc_config_default(&cfg);
	cfg.who = argv[1];
	cfg.msg_size = MSG_MAX;
	cfg.msg_recvs = 4;
	cfg.msg_sends = 6;
	cfg.send_depth = 8;
	cfg.attr.rnr_retry_count = 0; /* one RNR fails the connection */
	loop = rex_loop_create();
	if (!loop || !(svc = rex_svc_create(loop, &cfg, &ops, loop)) ||
	    rex_loop_add_signals(loop, signals, 2, on_signal, svc))
		goto out;
	if (server) {
		if (rex_svc_serve(svc, argv[2], (uint16_t)atoi(argv[3])))
			goto out;
		printf("server: listening on port %s\n", argv[3]);
	} else if (dial_all(svc, argv[2], (uint16_t)atoi(argv[3]), conns, messages)) {
		goto out;
	}
	if (rex_loop_run(loop) == 0)
		status = 0;
	if (server)
		printf("server: done: %u failed, %u rejected; %llu messages intact\n", failed,
		       rejected, (unsigned long long)intact);
	else
		printf("client: %u connections, %u failed, %u rejected as asked; %llu messages "
		       "intact\n",
		       conns, failed, rejected, (unsigned long long)intact);
	printf("%s: %llu messages sent, %llu credit-only, %llu waits for a credit\n", argv[1],
	       (unsigned long long)sum.sent, (unsigned long long)sum.credit_only,
	       (unsigned long long)sum.waits);
	if (!server && (failed || rejected != 1 || intact != (uint64_t)conns * (messages / 2 + 1)))
		status = 1;
out:
	if (rex_svc_destroy(svc) || rex_loop_destroy(loop))
		status = 1;
	return status;
}
