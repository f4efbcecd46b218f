/* SPDX-License-Identifier: MIT */
/*
 * aconn-square-client: the client of aconn-square-server, on copies of
 * common/'s asynchronous half only (see server.c). Each of -q connections
 * sends -n requests, one at a time, and checks every reply.
 *
 *     aconn-square-client -a ADDR -p PORT -q CONNECTIONS -n REQUESTS
 *
 * Exit status: 0 when every reply came and was right, 1 otherwise.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rex_aconn.h"
#include "rex_error.h"

#define SLOTS 2 /* sends: one request in flight, one whose completion may lag */
#define MSG   8

struct client;

struct conn {
	struct rex_aconn ac; /* first: rex_aconn's callbacks get &ac */
	struct client *cl;
	struct rex_buffers recv, send;
	uint64_t sent, answered;
	bool waiting; /* a request is out, its reply not in */
};

struct client {
	struct rex_loop *loop;
	struct rex_aconn_devs devs;
	struct conn *conns;
	unsigned qps, open, failed;
	uint64_t count, answered;
};

static uint64_t request(const struct conn *cn)
{
	return (uint64_t)(cn - cn->cl->conns) << 32 | (cn->sent + 1);
}

static int post_recv(struct conn *cn)
{
	struct ibv_sge sge = rex_buffers_sge(&cn->recv, 0, MSG);
	struct ibv_recv_wr wr = {.wr_id = 0, .sg_list = &sge, .num_sge = 1};

	return rex_aconn_post_recv(&cn->ac, &wr);
}

/* The next request, once the previous one is answered and a slot is free. */
static int send_next(struct conn *cn)
{
	uint32_t slot = (uint32_t)(cn->ac.sq_posted % SLOTS);
	uint64_t x = htobe64(request(cn));
	struct ibv_sge sge = rex_buffers_sge(&cn->send, slot, MSG);
	struct ibv_send_wr wr = {
	    .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED};
	int ret;

	if (cn->waiting || cn->sent == cn->cl->count || cn->ac.sq_posted - cn->ac.sq_done >= SLOTS)
		return 0;
	memcpy(rex_buffers_slot(&cn->send, slot), &x, MSG);
	ret = rex_aconn_post_send(&cn->ac, &wr);
	if (ret == 0)
		cn->waiting = true;
	return ret;
}

static int check_reply(struct conn *cn, const struct ibv_wc *wc)
{
	uint64_t want = request(cn), got;

	memcpy(&got, rex_buffers_slot(&cn->recv, 0), MSG);
	got = be64toh(got);
	if (!cn->waiting || wc->byte_len != MSG || got != want * want) {
		fprintf(stderr, "client: %s: bad reply to %" PRIu64 ": %" PRIu64 "\n", cn->ac.name,
		        want, got);
		return -EPROTO;
	}
	cn->waiting = false;
	cn->sent++;
	cn->answered++;
	cn->cl->answered++;
	return post_recv(cn);
}

static void on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	struct conn *cn = lcq->arg;
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	int good, taken, i;

	(void)loop;
	do {
		good = rex_aconn_poll(&cn->ac, wc, REX_ACONN_WC_BATCH, &taken);
		for (i = 0; i < good; i++)
			if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV && check_reply(cn, &wc[i]))
				rex_aconn_close(&cn->ac, true);
	} while (taken == REX_ACONN_WC_BATCH);
	if (cn->ac.state != REX_STATE_ESTABLISHED)
		return;
	if (cn->answered == cn->cl->count)
		rex_aconn_close(&cn->ac, false); /* done: disconnect */
	else if (send_next(cn))
		rex_aconn_close(&cn->ac, true);
}

static int route_resolved(struct rex_aconn *c)
{
	struct conn *cn = (struct conn *)c;
	struct rdma_conn_param param = {0};
	struct rex_aconn_dev *dev = rex_aconn_dev_get(&cn->cl->devs, c->id->verbs);

	c->lcq.arg = cn;
	if (!dev || rex_aconn_create_queues(c, dev, SLOTS, 1, 0, on_cq) ||
	    rex_buffers_create(&cn->recv, dev->pd, 1, MSG, IBV_ACCESS_LOCAL_WRITE) ||
	    rex_buffers_create(&cn->send, dev->pd, SLOTS, MSG, 0) || post_recv(cn))
		return -EIO;
	return rex_aconn_connect(c, &param);
}

static int established(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	(void)ev;
	return send_next((struct conn *)c);
}

static void released(struct rex_aconn *c)
{
	struct conn *cn = (struct conn *)c;
	struct client *cl = cn->cl;

	if (rex_buffers_destroy(&cn->send) | rex_buffers_destroy(&cn->recv))
		c->failed = true;
	cl->failed += c->failed || cn->answered < cl->count;
	if (--cl->open == 0)
		rex_loop_stop(cl->loop);
}

/* No peer_left: the server leaving first is a failure, rex_aconn's default. */
static const struct rex_aconn_ops ops = {
    .route_resolved = route_resolved, .established = established, .released = released};

static void on_cm(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct client *cl = arg;
	unsigned i;

	(void)devs;
	fprintf(stderr, "client: %s: closing every connection\n", rdma_event_str(ev->type));
	for (i = 0; i < cl->qps; i++)
		if (cl->conns[i].ac.id)
			rex_aconn_close(&cl->conns[i].ac, true);
}

int main(int argc, char **argv)
{
	struct client cl = {.qps = 1, .count = 100};
	struct addrinfo hints = {.ai_flags = AI_NUMERICSERV, .ai_family = AF_INET}, *res = NULL;
	const char *addr = NULL, *port = "20886";
	struct rdma_cm_id *id;
	int opt, status = 1;
	unsigned i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "a:p:q:n:")) != -1) {
		if (opt == 'a')
			addr = optarg;
		else if (opt == 'p')
			port = optarg;
		else if (opt == 'q')
			cl.qps = (unsigned)strtoul(optarg, NULL, 10);
		else if (opt == 'n')
			cl.count = strtoull(optarg, NULL, 10);
		else
			return 2;
	}
	if (!addr || cl.qps < 1 || cl.qps > 256 || cl.count < 1 || getaddrinfo(addr, port, &hints, &res))
		return 2;
	cl.conns = calloc(cl.qps, sizeof(*cl.conns));
	cl.loop = rex_loop_create();
	if (!cl.conns || !cl.loop ||
	    rex_aconn_devs_create(&cl.devs, cl.loop, "client", NULL, on_cm, &cl))
		goto out_free;
	for (i = 0; i < cl.qps; i++) {
		struct conn *cn = &cl.conns[i];

		cn->cl = &cl;
		if (rdma_create_id(cl.devs.channel, &id, NULL, RDMA_PS_TCP)) {
			rex_report_errno("rdma_create_id", errno);
			break;
		}
		rex_aconn_init(&cn->ac, &cl.devs, id, REX_STATE_RESOLVING, &ops);
		snprintf(cn->ac.name, sizeof(cn->ac.name), "connection %u", i);
		cl.open++;
		if (rex_aconn_resolve(&cn->ac, res->ai_addr))
			rex_aconn_close(&cn->ac, true);
	}
	if (cl.open && rex_loop_run(cl.loop) == 0 && i == cl.qps && cl.failed == 0)
		status = 0;
	printf("client: %u connections, %u failed; %" PRIu64 " of %" PRIu64 " replies right\n",
	       cl.qps, cl.failed, cl.answered, (uint64_t)cl.qps * cl.count);
out_free:
	if (rex_aconn_devs_destroy(&cl.devs))
		status = 1;
	rex_loop_destroy(cl.loop);
	free(cl.conns);
	freeaddrinfo(res);
	return status;
}
