/* SPDX-License-Identifier: MIT */
/*
 * aconn-square-server: a request/reply service for many clients at once,
 * written as an engineer who copied common/'s asynchronous half would
 * write it. It is built from copies of the files common/rex_aconn.h says
 * to copy, and nothing else of this project (tests/copy-async/build.sh).
 *
 * A request is a SEND of 8 bytes, a number in network byte order; the reply
 * is its square, the same way. Each connection keeps RECVS receives posted;
 * a client has one request in flight at a time, so it never finds none.
 *
 *     aconn-square-server -a ADDR -p PORT     until SIGINT or SIGTERM
 *
 * Exit status: 0 after a signal, 1 on a failure of its own.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rex_aconn.h"
#include "rex_error.h"

#define RECVS 4
#define SENDS 4
#define MSG   8 /* bytes of a request and of a reply */

struct server;

struct session {
	struct rex_aconn ac; /* first: rex_aconn's callbacks get &ac */
	struct server *s;
	struct rex_buffers recv, send;
	uint64_t replies;
	struct session *next;
};

struct server {
	struct rex_loop *loop;
	struct rdma_cm_id *listener;
	struct rex_aconn_devs devs;
	struct session *sessions;
	unsigned long numbered, open, served, failed;
	uint64_t replies;
	int stopping;
};

static void on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq);
static void released(struct rex_aconn *c);
static bool left(struct rex_aconn *c)
{
	(void)c;
	return true; /* a client may leave whenever it has its replies */
}
static const struct rex_aconn_ops ops = {.peer_left = left, .released = released};

static int post_recv(struct session *ss, uint32_t slot)
{
	struct ibv_sge sge = rex_buffers_sge(&ss->recv, slot, MSG);
	struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1};

	return rex_aconn_post_recv(&ss->ac, &wr);
}

/* A request came into receive slot \p slot: reply, then post it again. */
static int reply(struct session *ss, const struct ibv_wc *wc)
{
	uint32_t rslot = rex_wr_id_slot(wc->wr_id);
	uint32_t slot = (uint32_t)(ss->ac.sq_posted % SENDS); /* sends complete in order */
	uint64_t x;
	struct ibv_sge sge = rex_buffers_sge(&ss->send, slot, MSG);
	struct ibv_send_wr wr = {
	    .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
	int ret;

	if (wc->byte_len != MSG || ss->ac.sq_posted - ss->ac.sq_done >= SENDS) {
		fprintf(stderr, "server: %s: bad request (%u bytes)\n", ss->ac.name, wc->byte_len);
		return -EPROTO;
	}
	memcpy(&x, rex_buffers_slot(&ss->recv, rslot), MSG);
	x = be64toh(x);
	x = htobe64(x * x);
	memcpy(rex_buffers_slot(&ss->send, slot), &x, MSG);
	ret = rex_aconn_post_send(&ss->ac, &wr);
	if (ret == 0)
		ret = post_recv(ss, rslot);
	if (ret == 0) {
		ss->replies++;
		ss->s->replies++;
	}
	return ret;
}

static void on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	struct session *ss = lcq->arg;
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	int good, taken, i;

	(void)loop;
	do {
		good = rex_aconn_poll(&ss->ac, wc, REX_ACONN_WC_BATCH, &taken);
		for (i = 0; i < good; i++)
			if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV && reply(ss, &wc[i]))
				rex_aconn_close(&ss->ac, true);
	} while (taken == REX_ACONN_WC_BATCH);
}

static void reject(struct rdma_cm_id *id)
{
	if (rdma_reject(id, NULL, 0))
		rex_report_errno("rdma_reject", errno);
	if (rdma_destroy_id(id))
		rex_report_errno("rdma_destroy_id", errno);
}

static void on_connect_request(struct server *s, struct rdma_cm_id *id)
{
	struct rdma_conn_param param = {0};
	struct rex_aconn_dev *dev;
	struct session *ss = calloc(1, sizeof(*ss));
	uint32_t i;

	if (!ss) {
		rex_report_errno("calloc", errno);
		reject(id);
		return;
	}
	ss->s = s;
	ss->next = s->sessions;
	s->sessions = ss;
	s->open++;
	rex_aconn_init(&ss->ac, &s->devs, id, REX_STATE_CONNECTING, &ops);
	snprintf(ss->ac.name, sizeof(ss->ac.name), "connection %lu", ++s->numbered);
	ss->ac.lcq.arg = ss;
	dev = rex_aconn_dev_get(&s->devs, id->verbs);
	if (!dev || rex_aconn_create_queues(&ss->ac, dev, SENDS, RECVS, 0, on_cq) ||
	    rex_buffers_create(&ss->recv, dev->pd, RECVS, MSG, IBV_ACCESS_LOCAL_WRITE) ||
	    rex_buffers_create(&ss->send, dev->pd, SENDS, MSG, 0))
		goto out_close;
	for (i = 0; i < RECVS; i++)
		if (post_recv(ss, i))
			goto out_close;
	if (rex_aconn_accept(&ss->ac, &param) == 0)
		return;
out_close:
	rex_aconn_close(&ss->ac, true);
}

static void on_cm(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct server *s = arg;

	(void)devs;
	if (ev->type != RDMA_CM_EVENT_CONNECT_REQUEST)
		fprintf(stderr, "server: listener: %s\n", rdma_event_str(ev->type));
	else if (s->stopping)
		reject(ev->id);
	else
		on_connect_request(s, ev->id);
}

static void released(struct rex_aconn *c)
{
	struct session *ss = (struct session *)c, **p;
	struct server *s = ss->s;

	if (rex_buffers_destroy(&ss->send) | rex_buffers_destroy(&ss->recv))
		c->failed = true;
	for (p = &s->sessions; *p != ss; p = &(*p)->next)
		;
	*p = ss->next;
	s->open--;
	s->served++;
	s->failed += c->failed || c->drain_cut;
	free(ss);
	if (s->stopping && s->open == 0)
		rex_loop_stop(s->loop);
}

static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct server *s = arg;
	struct session *ss;

	(void)signo;
	s->stopping = 1;
	if (s->listener && rdma_destroy_id(s->listener))
		rex_report_errno("rdma_destroy_id", errno);
	s->listener = NULL;
	for (ss = s->sessions; ss; ss = ss->next)
		rex_aconn_close(&ss->ac, false);
	if (s->open == 0)
		rex_loop_stop(loop);
}

int main(int argc, char **argv)
{
	static const int signals[] = {SIGINT, SIGTERM};
	struct server s = {0};
	const char *addr = NULL;
	uint16_t port = 20886;
	int opt, status = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "a:p:")) != -1) {
		if (opt == 'a')
			addr = optarg;
		else if (opt == 'p')
			port = (uint16_t)strtoul(optarg, NULL, 10);
		else
			return 2;
	}
	s.loop = rex_loop_create();
	if (!s.loop || rex_loop_add_signals(s.loop, signals, 2, on_signal, &s))
		goto out_destroy_loop;
	if (rex_aconn_devs_create(&s.devs, s.loop, "server", NULL, on_cm, &s) ||
	    rex_aconn_listen(&s.devs, addr, port, 64, &s.listener))
		goto out_release;
	printf("server: listening on port %u\n", (unsigned)port);
	if (rex_loop_run(s.loop) == 0)
		status = 0;
	printf("server: done: %lu connections served, %lu failed; %" PRIu64 " replies\n", s.served,
	       s.failed, s.replies);
out_release:
	if (s.listener)
		rdma_destroy_id(s.listener);
	if (rex_aconn_devs_destroy(&s.devs))
		status = 1;
out_destroy_loop:
	rex_loop_destroy(s.loop);
	return status;
}
