/* SPDX-License-Identifier: MIT */
/*
 * connection.c: the protection domain, completion queue and queue pair of a
 * connection (see connection.h). The server runs these steps on the new id
 * of the client's connect request, the client on its own id.
 */
#include "connection.h"

#include <errno.h>
#include <stdio.h>

#include "rex_device.h"
#include "rex_error.h"

/* [create-pd] */
int create_pd(struct rdma_cm_id *id, struct connection *conn, const char *who)
{
	int err;

	/*
	 * A protection domain groups the queue pairs and the memory regions that
	 * may be used together: a QP can only touch memory registered in its own
	 * PD. One PD per connection keeps connections apart. The id already
	 * knows its device (id->verbs): on the server, the one the request came
	 * in on; on the client, the one address resolution chose.
	 */
	conn->pd = ibv_alloc_pd(id->verbs);
	if (!conn->pd) {
		err = errno;
		rex_report_errno("ibv_alloc_pd", err);
		return -err;
	}
	printf("%s: protection domain allocated\n", who);
	return 0;
}
/* [create-pd] */

int create_cq(struct rdma_cm_id *id, struct connection *conn, const char *who)
{
	int err;
	int ret;

	/* Devices differ in how big their queues may be: ask, do not assume. */
	ret = rex_device_check_queues(id->verbs, CQ_ENTRIES, QUEUE_DEPTH, SGE_PER_WR);
	if (ret)
		return ret;

	/* [create-cq] */
	/*
	 * The device reports each finished work request as a completion in a
	 * completion queue (CQ). A program can poll the CQ, or sleep until the
	 * CQ signals its completion channel, a file descriptor like the CM's
	 * event channel. Chapter 02 uses both; here we only create them.
	 */
	conn->comp_channel = ibv_create_comp_channel(id->verbs);
	if (!conn->comp_channel) {
		err = errno;
		rex_report_errno("ibv_create_comp_channel", err);
		return -err;
	}
	conn->cq = ibv_create_cq(id->verbs, CQ_ENTRIES, NULL, conn->comp_channel, 0);
	if (!conn->cq) {
		err = errno;
		rex_report_errno("ibv_create_cq", err);
		goto out_destroy_comp_channel;
	}
	/* The device may round the size up: cqe is what we really got. */
	printf("%s: completion queue created: %d entries, with a completion channel\n", who,
	       conn->cq->cqe);
	return 0;
	/* [create-cq] */

out_destroy_comp_channel:
	ret = ibv_destroy_comp_channel(conn->comp_channel); /* returns an errno value */
	if (ret)
		rex_report_errno("ibv_destroy_comp_channel", ret);
	conn->comp_channel = NULL;
	return -err;
}

/* [create-qp] */
int create_qp(struct rdma_cm_id *id, struct connection *conn, const char *who)
{
	struct ibv_qp_init_attr attr = {
	    .send_cq = conn->cq, /* one CQ for both queues: simple, and enough here */
	    .recv_cq = conn->cq,
	    .cap =
	        {
	            .max_send_wr = QUEUE_DEPTH,
	            .max_recv_wr = QUEUE_DEPTH,
	            .max_send_sge = SGE_PER_WR,
	            .max_recv_sge = SGE_PER_WR,
	        },
	    .qp_type = IBV_QPT_RC, /* reliable connected: ordered, acknowledged */
	};
	int err;

	/*
	 * The queue pair (QP) is the connection's engine: a send queue and a
	 * receive queue of work requests that the device executes. Created
	 * through the CM, the QP belongs to the id, and the CM moves it through
	 * its states (INIT, ready to receive, ready to send) while connecting.
	 */
	if (rdma_create_qp(id, conn->pd, &attr)) {
		err = errno;
		rex_report_errno("rdma_create_qp", err);
		return -err;
	}
	printf("%s: queue pair created: RC, number %u\n", who, id->qp->qp_num);
	return 0;
}
/* [create-qp] */
