/* SPDX-License-Identifier: MIT */
/*
 * client_conn.c: the connections of 06's client (see client.h): dialled
 * on common/rex_svc, driven through the loop until a condition holds, and
 * torn down. Every connection is up before any clock runs.
 */
#include "client.h"

bool all_established(const struct client *cl)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++)
		if (!cl->qps[i].up || !rex_svc_conn_open(cl->qps[i].conn))
			return false;
	return true;
}

/* Close what is open; what is still being dialled the service's stop closes. */
void close_all(struct client *cl, bool failed)
{
	unsigned i;

	for (i = 0; cl->qps && i < cl->o.qps; i++)
		if (cl->qps[i].conn)
			rex_svc_close(cl->qps[i].conn, failed);
	if (cl->svc)
		rex_svc_stop(cl->svc);
}

/* A control message: a zero-length SEND WITH IMM, numbered as every send. */
int send_ctrl(struct qp *q, uint32_t imm)
{
	struct ibv_send_wr wr = {.wr_id = q->seq + 1,
	                         .opcode = IBV_WR_SEND_WITH_IMM,
	                         .send_flags = IBV_SEND_SIGNALED,
	                         .imm_data = htobe32(imm)};
	int ret = q->conn ? rex_svc_post_send(q->conn, &wr) : -ENOTCONN;

	if (ret == 0)
		q->seq++;
	return ret;
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
/* ops.ready(): the device is known and the queues exist. One pool on the
 * device for all our connections, a buffer of it, the receives, and the
 * hello that names the buffer (its rkey) for the connect request. */
static int qp_ready(struct rex_svc_conn *c)
{
	struct qp *q = rex_svc_conn_user(c);
	struct client *cl = q->cl;
	const struct options *o = &cl->o;
	bool lat = o->mode == BENCH_MODE_LAT;
	bool answers_by_write = lat && (o->op == BENCH_OP_WRITE || o->op == BENCH_OP_WRITE_IMM);
	uint32_t max = largest(o);
	uint8_t data[BENCH_HELLO_LEN];
	struct bench_hello h;
	struct ibv_pd *pd = rex_svc_conn_pd(c);
	/* Least privilege: READ and latency answers land in our memory. */
	struct rex_pool_attr attr = {.buf_size = (size_t)max * (lat ? 2 : 1),
	                             .count = o->qps,
	                             .access =
	                                 (o->op == BENCH_OP_READ || bench_op_atomic(o->op) || lat
	                                      ? IBV_ACCESS_LOCAL_WRITE
	                                      : 0) |
	                                 (answers_by_write ? IBV_ACCESS_REMOTE_WRITE : 0)};

	q->conn = c;
	/* On iWARP, say why not (once) and stop. */
	if (cl->iwarp || rex_device_refuse_iwarp(pd->context, BENCH_IWARP_LACKS)) {
		cl->iwarp = true;
		return -EPROTONOSUPPORT;
	}
	q->pool = rex_svc_conn_dev_user(c);
	if (!q->pool) {
		q->pool = rex_pool_create(pd, &attr);
		if (!q->pool)
			return -ENOMEM;
		rex_svc_conn_set_dev_user(c, q->pool); /* released in release_pool() */
	}
	q->buf = rex_pool_get(q->pool);
	if (!q->buf)
		return -ENOBUFS;
	q->mem = q->buf->addr;
	q->dest = lat ? q->mem + max : q->mem;
	if (lat && o->op == BENCH_OP_SEND)
		q->recv_sge = (struct ibv_sge){
		    .addr = (uintptr_t)q->dest, .length = max, .lkey = q->buf->lkey};
	if (post_recvs(q, CLIENT_RECVS))
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
	return rex_svc_conn_set_pdata(c, data, sizeof(data));
}

/* ESTABLISHED: the server's accept carries its buffer; check it. */
static void qp_established(struct rex_svc_conn *c, const void *pdata, size_t len)
{
	struct qp *q = rex_svc_conn_user(c);
	uint32_t need = largest(&q->cl->o);
	char why[BENCH_WHY_SIZE];
	int ret = bench_accept_decode(pdata, len, &q->peer, why, sizeof(why));

	if (ret == 0 && q->peer.length < need) {
		snprintf(why, sizeof(why), "its buffer has %" PRIu32 " bytes, we need %" PRIu32,
		         q->peer.length, need);
		ret = -EMSGSIZE;
	}
	if (ret) {
		fprintf(stderr, "client: %s: bad accept from the server: %s\n",
		        rex_svc_conn_name(c), why);
		q->cl->broken = true;
		rex_svc_close(c, true);
		return;
	}
	q->up = true;
	q->cl->established++;
}

/* The server's rejection says why in its answer (the helper printed the rest). */
static void qp_rejected(struct rex_svc_conn *c, const void *pdata, size_t len)
{
	struct bench_reject r;
	char why[128];

	if (bench_reject_decode(pdata, len, &r) == 0)
		fprintf(stderr, "client: %s: rejected by the server: %s\n", rex_svc_conn_name(c),
		        bench_reject_format(&r, why, sizeof(why)));
}
/* [connect] */

/* Its QP is about to go: no more work on it. */
static void qp_releasing(struct rex_svc_conn *c)
{
	struct qp *q = rex_svc_conn_user(c);

	q->up = false;
}

/* Gone: the pool buffer goes back only now, when no work request can use
 * it. Any end but ours (the server left, a failure) breaks the run. */
static void qp_closed(struct rex_svc_conn *c, enum rex_svc_why why)
{
	struct qp *q = rex_svc_conn_user(c);
	struct rex_svc_conn_counts n;

	rex_svc_conn_counts(c, &n);
	rex_debug(q->cl->o.verbose, "client",
	          "%s: %" PRIu64 " work requests posted in %" PRIu64
	          " ibv_post_send() calls; %" PRIu64 " completions taken",
	          rex_svc_conn_name(c), n.sends, n.post_calls, n.completions);
	if (q->buf)
		rex_pool_put(q->pool, q->buf);
	q->buf = NULL;
	q->conn = NULL;
	q->lent = (struct rex_svc_lent){0}; /* its QP and CQ are gone with it */
	q->up = false;
	q->released = true;
	q->cl->open--;
	if (why == REX_SVC_PEER_LEFT && !q->cl->stopping)
		fprintf(stderr, "client: %s: the server disconnected\n", rex_svc_conn_name(c));
	if (why != REX_SVC_DONE)
		q->cl->broken = true;
}

/* Before the device's PD goes: its pool (-EBUSY while a buffer is out). */
static int release_pool(struct rex_svc *svc, struct ibv_pd *pd, void *pool)
{
	(void)svc;
	(void)pd;
	return rex_pool_destroy(pool);
}

/* What the client does at the steps of a connection's life. */
static const struct rex_svc_ops qp_ops = {
    .ready = qp_ready,
    .established = qp_established,
    .rejected = qp_rejected,
    .recv = qp_recv,
    .done = qp_done,
    .releasing = qp_releasing,
    .closed = qp_closed,
    .device_closing = release_pool,
};

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
/* Every connection dialled, connected and set up before any clock runs. */
int connect_all(struct client *cl)
{
	const struct options *o = &cl->o;
	bool reads = o->op == BENCH_OP_READ || bench_op_atomic(o->op);
	unsigned i;
	int ret;

	cl->qps = calloc(o->qps, sizeof(*cl->qps));
	if (!cl->qps) {
		rex_report_errno("calloc", ENOMEM);
		return -ENOMEM;
	}
	/* Our own work requests, no messages: the window and the control
	 * sends; receives for control messages and latency answers. No idle
	 * deadline: a run's control phases have their own. */
	rex_svc_config_default(&cl->cfg);
	cl->cfg.attr.idle_timeout_ms = 0;
	cl->cfg.who = "client";
	cl->cfg.send_depth = o->depth + 16;
	cl->cfg.recv_depth = CLIENT_RECVS;
	cl->cfg.max_inline = o->inline_size;
	cl->cfg.raw_pdata = true;            /* the hello and the accept are bench_wire.h's */
	cl->cfg.rd_atomic = reads ? 255 : 0; /* READs in flight: all the device allows */
	cl->svc = rex_svc_create(cl->loop, &cl->cfg, &qp_ops, cl);
	if (!cl->svc)
		return -EIO;
	for (i = 0; i < o->qps; i++) {
		struct qp *q = &cl->qps[i];

		q->cl = cl;
		q->index = i;
		q->wr = calloc(o->depth, sizeof(*q->wr));
		q->sge = calloc(o->depth, sizeof(*q->sge));
		if (!q->wr || !q->sge) {
			rex_report_errno("calloc", ENOMEM);
			return -ENOMEM;
		}
		ret = rex_svc_dial(cl->svc, o->server, o->port, NULL, 0, q);
		if (ret)
			return ret;
		cl->open++;
	}
	ret = drive(cl, connected, (int)cl->cfg.attr.setup_timeout_ms + 1000, "connection", true);
	if (ret == 0)
		cl->device = ibv_get_device_name(rex_svc_conn_pd(cl->qps[0].conn)->context->device);
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
		    !q->peer.lease_ms) {
			inv.wr_id = q->seq + 1;
			ret = q->conn ? rex_svc_post_send(q->conn, &inv) : -ENOTCONN;
			q->seq += ret == 0;
		} else {
			ret = send_ctrl(q, bench_ctrl_imm(BENCH_CTRL_END, 0));
		}
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
	return drive(cl, all_released, (int)cl->cfg.attr.drain_timeout_ms + 2000, "disconnect",
	             false);
}
/* [disconnect] */

int release_everything(struct client *cl)
{
	int ret = rex_svc_destroy(cl->svc); /* -EBUSY: connections left */
	unsigned i;

	for (i = 0; cl->qps && i < cl->o.qps; i++) {
		free(cl->qps[i].wr);
		free(cl->qps[i].sge);
	}
	free(cl->qps);
	free(cl->samples);
	free(cl->sample_ns);
	free(cl->hists);
	free(cl->load_hist);
	free(cl->load_due);
	free(cl->per_qp);
	free(cl->marks);
	return ret;
}
