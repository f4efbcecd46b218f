/* SPDX-License-Identifier: MIT */
/*
 * connection.h: the three verbs objects every connection of chapter 01 needs,
 * created the same way by the server and the client (each on its own CM id).
 *
 *   a protection domain (PD), which groups the queue pairs and memory that
 *       may be used together;
 *   a completion queue (CQ), where the device reports finished work, with a
 *       completion channel to sleep on until it does;
 *   a queue pair (QP) of type RC, the connection's engine.
 *
 * They are created in this order and destroyed in reverse, by the cleanup
 * ladder of each program's main(). The QP hangs on the id (id->qp).
 */
#ifndef CONNECT_CONNECTION_H
#define CONNECT_CONNECTION_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/* [queue-sizes] */
/* Queue sizes. This chapter posts no work at all, but a queue pair needs
 * room for at least one work request per queue; small numbers keep the
 * memory the device reserves for us small (chapter 02 posts real work). */
#define QUEUE_DEPTH 4                 /* work requests per send and per receive queue */
#define CQ_ENTRIES  (2 * QUEUE_DEPTH) /* one completion for every request of both queues */
#define SGE_PER_WR  1                 /* scatter/gather entries per work request */
/* [queue-sizes] */

/* A connection's verbs objects; the queue pair is id->qp. */
struct connection {
	struct ibv_pd *pd;                     /* protection domain */
	struct ibv_comp_channel *comp_channel; /* how the CQ would wake us */
	struct ibv_cq *cq;                     /* completion queue */
};

/*
 * Each step creates its object(s) on the device of id (id->verbs, which the
 * CM chose), prints "WHO: ..." and returns 0; or it prints the failing call
 * and returns a negative errno, having created nothing. create_cq() makes
 * the completion channel and the CQ; create_qp() needs the PD and the CQ.
 */
int create_pd(struct rdma_cm_id *id, struct connection *conn, const char *who);
int create_cq(struct rdma_cm_id *id, struct connection *conn, const char *who);
int create_qp(struct rdma_cm_id *id, struct connection *conn, const char *who);

#endif /* CONNECT_CONNECTION_H */
