/* SPDX-License-Identifier: MIT */
/*
 * client_conn.c: the connections of 06's client (see client.h): set up on
 * common/rex_aconn, driven through the loop until a condition holds, and
 * torn down. Every connection is up before any clock runs.
 */
#include "client.h"

bool all_established(const struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (cl->qps[i].conn.state != REX_STATE_ESTABLISHED)
			return false;
	return true;
}

void close_all(struct client *cl, bool failed)
{
	unsigned i;

	for (i = 0; cl->qps && i < cl->o.qps; i++)
		if (cl->qps[i].conn.id && !cl->qps[i].released)
			rex_aconn_close(&cl->qps[i].conn, failed);
}

static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct client *cl = arg;

	(void)loop;
	if (cl->stopping)
		_exit(REX_EXIT_FAILURE);
	cl->stopping = true;
	cl->broken = true;
	fprintf(stderr, "client: %s: stopping\n", signo == SIGINT ? "SIGINT" : "SIGTERM");
	close_all(cl, true);
}

/* Run the loop (control traffic, CM events) until \p done says so, the
 * connections break, or \p timeout_ms passes. */
int drive(struct client *cl, bool (*done)(struct client *), int timeout_ms, const char *what,
          bool watch)
{
	uint64_t end = now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (!done(cl)) {
		if (watch &&
		    (cl->broken || (cl->established == cl->o.qps && !all_established(cl)))) {
			cl->broken = true;
			return -ECONNRESET;
		}
		if (now_ns() > end) {
			fprintf(stderr, "client: no %s from the server within %d ms\n", what,
			        timeout_ms);
			return -ETIMEDOUT;
		}
		if (rex_loop_run_once(cl->loop, 100) < 0)
			return -EIO;
	}
	return 0;
}

bool all_ready(struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (!cl->qps[i].ready)
			return false;
	return true;
}

bool all_results(struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (!cl->qps[i].result_in)
			return false;
	return true;
}

/* [connect] */
static int connect_qp(struct rex_aconn *c)
{
	struct qp *q = (struct qp *)c; /* conn is its first member */
	struct client *cl = q->cl;
	const struct options *o = &cl->o;
	bool lat = o->mode == BENCH_MODE_LAT;
	bool answers_by_write = lat && (o->op == BENCH_OP_WRITE || o->op == BENCH_OP_WRITE_IMM);
	uint32_t max = largest(o);
	uint8_t data[BENCH_HELLO_LEN];
	struct bench_hello h;
	struct rex_aconn_dev *dev;
	struct rdma_conn_param param = {.private_data = data, .private_data_len = sizeof(data)};
	/* Least privilege: READ and latency answers land in our memory. */
	struct rex_pool_attr attr = {.buf_size = (size_t)max * (lat ? 2 : 1),
	                             .count = o->qps,
	                             .access =
	                                 (o->op == BENCH_OP_READ || bench_op_atomic(o->op) || lat
	                                      ? IBV_ACCESS_LOCAL_WRITE
	                                      : 0) |
	                                 (answers_by_write ? IBV_ACCESS_REMOTE_WRITE : 0)};

	/* The device is known now: on iWARP, say why not (once) and stop. */
	if (cl->iwarp || rex_device_refuse_iwarp(c->id->verbs, BENCH_IWARP_LACKS)) {
		cl->iwarp = true;
		return -EPROTONOSUPPORT;
	}
	dev = rex_aconn_dev_get(&cl->devices, c->id->verbs);
	if (!dev)
		return -ENODEV;
	/* One pool for all our connections on the device, registered once. */
	if (!dev->user && !(dev->user = rex_pool_create(dev->pd, &attr)))
		return -ENOMEM;
	q->pool = dev->user;
	q->buf = rex_pool_get(q->pool);
	if (!q->buf)
		return -ENOBUFS;
	q->mem = q->buf->addr;
	q->dest = lat ? q->mem + max : q->mem;
	if (lat && o->op == BENCH_OP_SEND)
		q->recv_sge = (struct ibv_sge){
		    .addr = (uintptr_t)q->dest, .length = max, .lkey = q->buf->lkey};
	c->lcq.arg = q;
	if (rex_aconn_create_queues(c, dev, o->depth + 16, CLIENT_RECVS, o->inline_size,
	                            on_completions))
		return -EIO;
	if (rex_aconn_post_recvs(c, q->recv_sge.length ? &q->recv_sge : NULL, CLIENT_RECVS))
		return -EIO;
	h = (struct bench_hello){.op = (uint8_t)o->op,
	                         .mode = (uint8_t)o->mode,
	                         .max_size = max,
	                         .depth = o->depth,
	                         .qp_index = (uint16_t)q->index,
	                         .qps = (uint16_t)o->qps,
	                         .addr = answers_by_write ? (uintptr_t)q->dest : 0,
	                         .rkey = q->buf->rkey};
	bench_hello_encode(&h, data);
	if (o->op == BENCH_OP_READ || bench_op_atomic(o->op)) /* in flight at once */
		param.initiator_depth = dev->attr.max_qp_init_rd_atom < 255
		                            ? (uint8_t)dev->attr.max_qp_init_rd_atom
		                            : 255;
	return rex_aconn_connect(c, &param);
}

static int check_accept(struct qp *q, const struct rex_cm_event *ev)
{
	char why[BENCH_WHY_SIZE];
	int ret =
	    bench_accept_decode(ev->private_data, ev->private_data_len, &q->peer, why, sizeof(why));

	if (ret == 0 && q->peer.length < largest(&q->cl->o)) {
		snprintf(why, sizeof(why), "its buffer has %" PRIu32 " bytes, we need %" PRIu32,
		         q->peer.length, largest(&q->cl->o));
		ret = -EMSGSIZE;
	}
	if (ret)
		fprintf(stderr, "client: %s: bad accept from the server: %s\n", q->conn.name, why);
	return ret;
}

/* ESTABLISHED: the server's accept carries its buffer; check it. */
static int qp_established(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	struct qp *q = (struct qp *)c;
	int ret = check_accept(q, ev);

	if (ret == 0)
		q->cl->established++;
	return ret;
}

/* The server disconnected first: a failure, unless we are stopping. */
static bool server_left(struct rex_aconn *c)
{
	struct qp *q = (struct qp *)c;

	if (q->cl->stopping)
		return true;
	fprintf(stderr, "client: %s: the server disconnected\n", c->name);
	q->cl->broken = true;
	return false;
}

/* A failed CM event (rex_aconn printed it): the run is broken. A server's
 * rejection says why in its private data. */
static void qp_failed(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	struct qp *q = (struct qp *)c;
	struct bench_reject r;
	char why[128];

	q->cl->broken = true;
	if (ev->type != RDMA_CM_EVENT_REJECTED)
		return;
	if (ev->status == REJ_BY_SERVER &&
	    bench_reject_decode(ev->private_data, ev->private_data_len, &r) == 0)
		fprintf(stderr, "client: %s: rejected by the server: %s\n", c->name,
		        bench_reject_format(&r, why, sizeof(why)));
	else if (ev->status == REJ_NO_LISTENER)
		fprintf(stderr, "  hint: %s\n", rex_options_hint("rdma_connect", ECONNREFUSED));
}
/* [connect] */

/* Every id of ours is a connection, whose events rex_aconn routes: what
 * comes here is the channel itself failing. */
static void on_cm_event(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct client *cl = arg;

	(void)devs;
	fprintf(stderr, "client: %s\n",
	        ev->status == -EIO ? "the CM event channel failed" : rdma_event_str(ev->type));
	cl->broken = true;
	close_all(cl, true);
}

static void qp_released(struct rex_aconn *c)
{
	struct qp *q = (struct qp *)c;

	/* The pool buffer goes back only now: no work request can use it. */
	if (q->buf)
		rex_pool_put(q->pool, q->buf);
	q->buf = NULL;
	q->released = true;
	q->cl->open--;
}

/* What the client does at the steps of a connection's life. */
static const struct rex_aconn_ops qp_ops = {
    .route_resolved = connect_qp,
    .established = qp_established,
    .peer_left = server_left,
    .cm_failed = qp_failed,
    .released = qp_released,
};

/* Before the device's PD goes: its pool (-EBUSY while a buffer is out). */
static int release_pool(struct rex_aconn_dev *dev)
{
	return rex_pool_destroy(dev->user);
}

int create_loop(struct client *cl)
{
	static const int signals[] = {SIGINT, SIGTERM};

	cl->loop = rex_loop_create();
	if (!cl->loop)
		return -errno;
	return rex_loop_add_signals(cl->loop, signals, 2, on_signal, cl);
}

static bool connected(struct client *cl)
{
	return cl->established == cl->o.qps;
}

/* [connect-all] */
/* Every connection resolved, connected and set up before any clock runs. */
int connect_all(struct client *cl)
{
	struct addrinfo hints = {
	    .ai_flags = AI_NUMERICSERV, .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	char port[8];
	unsigned i;
	int ret;

	snprintf(port, sizeof(port), "%u", (unsigned)cl->o.port);
	ret = getaddrinfo(cl->o.server, port, &hints, &cl->server);
	if (ret) {
		rex_errorf("getaddrinfo %s: %s", cl->o.server, gai_strerror(ret));
		cl->server = NULL;
		return -EINVAL;
	}
	cl->qps = calloc(cl->o.qps, sizeof(*cl->qps));
	if (!cl->qps) {
		rex_report_errno("calloc", ENOMEM);
		return -ENOMEM;
	}
	/* Every connection's life, and the CM channel read in the loop. No
	 * idle deadline: a run's control phases have their own. */
	ret = rex_aconn_devs_create(&cl->devices, cl->loop, "client", NULL, on_cm_event, cl);
	if (ret)
		return ret;
	cl->devices.dev_release = release_pool;
	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[i];
		struct rdma_cm_id *id;

		q->cl = cl;
		q->index = i;
		q->wr = calloc(cl->o.depth, sizeof(*q->wr));
		q->sge = calloc(cl->o.depth, sizeof(*q->sge));
		if (!q->wr || !q->sge) {
			rex_report_errno("calloc", ENOMEM);
			return -ENOMEM;
		}
		if (rdma_create_id(cl->devices.channel, &id, NULL, RDMA_PS_TCP)) {
			ret = -errno;
			rex_report_errno("rdma_create_id", errno);
			return ret;
		}
		rex_aconn_init(&q->conn, &cl->devices, id, REX_STATE_RESOLVING, &qp_ops);
		snprintf(q->conn.name, sizeof(q->conn.name), "connection %u", i);
		cl->open++;
		if (rex_aconn_resolve(&q->conn, cl->server->ai_addr))
			return -EIO;
	}
	ret =
	    drive(cl, connected, (int)cl->devices.attr.setup_timeout_ms + 1000, "connection", true);
	if (ret == 0)
		cl->device = ibv_get_device_name(cl->qps[0].conn.dev->verbs->device);
	return ret;
}
/* [connect-all] */

static bool all_released(struct client *cl)
{
	return cl->open == 0;
}

static bool all_ended(struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (!cl->qps[i].ended)
			return false;
	return true;
}

/* [end-grants] */
/* After the last run: give the server's memory back before leaving. A
 * window's key we revoke ourselves, with a zero-length SEND WITH
 * INVALIDATE: the server's device revokes it as it takes the message. Or,
 * with --end server, a lease (the server may be revoking it as we speak,
 * and a window invalidated twice takes the QP down), or a grant that is
 * not a window, we say END and the server revokes it with a local
 * invalidate. Either way the server answers ENDED once the key opens
 * nothing. */
int end_grants(struct client *cl)
{
	unsigned i;
	int ret;

	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[i];
		struct ibv_send_wr inv = {.opcode = IBV_WR_SEND_WITH_INV,
		                          .send_flags = IBV_SEND_SIGNALED,
		                          .invalidate_rkey = q->peer.rkey};

		q->ending = true;
		if (q->peer.grant == BENCH_GRANT_WINDOW && !cl->o.end_by_server &&
		    !q->peer.lease_ms)
			ret = rex_aconn_post_send(&q->conn, &inv);
		else
			ret = rex_aconn_post_imm(&q->conn, bench_ctrl_imm(BENCH_CTRL_END, 0));
		if (ret)
			return ret;
	}
	return drive(cl, all_ended, CTRL_TIMEOUT_MS, "ENDED", true);
}
/* [end-grants] */

/* [disconnect] */
int disconnect_all(struct client *cl, bool failed)
{
	close_all(cl, failed);
	return drive(cl, all_released, (int)cl->devices.attr.drain_timeout_ms + 2000, "disconnect",
	             false);
}
/* [disconnect] */

int release_everything(struct client *cl)
{
	int ret = rex_aconn_devs_destroy(&cl->devices); /* -EBUSY: connections left */
	unsigned i;

	for (i = 0; cl->qps && i < cl->o.qps; i++) {
		free(cl->qps[i].wr);
		free(cl->qps[i].sge);
	}
	free(cl->qps);
	free(cl->samples);
	free(cl->hists);
	free(cl->per_qp);
	free(cl->marks);
	if (cl->server)
		freeaddrinfo(cl->server);
	return ret;
}
