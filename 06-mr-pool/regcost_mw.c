/* SPDX-License-Identifier: MIT */
/*
 * regcost_mw.c: the memory window's column of 06-mr-pool-regcost (see
 * regcost.c): what a narrow grant costs, bind + invalidate of a type 2
 * window over a buffer of the same size, beside registering it.
 *
 * A type 2 window is bound by a work request on a QP's send queue, so the
 * measurement needs a QP that can send: one RC QP connected to itself
 * (its own QP number at its own GID). A bind and an invalidate are local:
 * nothing goes on the wire.
 */
#include <errno.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "regcost.h"
#include "rex_error.h"
#include "rex_mw.h"

#define PORT      1
#define GID_INDEX 0 /* every RoCE port has it; a QP talking to itself needs no other */
#define CQ_DEPTH  4
#define WAIT_MS   5000

/* [loopback-qp] */
/* INIT, RTR towards our own QP number and GID, RTS. */
static int connect_to_self(struct ibv_context *ctx, struct ibv_qp *qp)
{
	struct ibv_port_attr port;
	struct ibv_qp_attr a;
	union ibv_gid gid;
	int ret;

	if ((ret = ibv_query_port(ctx, PORT, &port)) != 0) {
		rex_report_errno("ibv_query_port", ret);
		return -ret;
	}
	if ((ret = ibv_query_gid(ctx, PORT, GID_INDEX, &gid)) != 0) {
		rex_report_errno("ibv_query_gid", ret);
		return -ret;
	}
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = PORT};
	ret = ibv_modify_qp(qp, &a,
	                    IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret == 0) {
		a = (struct ibv_qp_attr){
		    .qp_state = IBV_QPS_RTR,
		    .path_mtu = port.active_mtu,
		    .dest_qp_num = qp->qp_num,
		    .min_rnr_timer = 12,
		    .ah_attr = {.is_global = 1,
		                .grh = {.dgid = gid, .sgid_index = GID_INDEX, .hop_limit = 1},
		                .port_num = PORT}};
		ret = ibv_modify_qp(qp, &a,
		                    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
		                        IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		                        IBV_QP_MIN_RNR_TIMER);
	}
	if (ret == 0) {
		a = (struct ibv_qp_attr){
		    .qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 6, .rnr_retry = 6};
		ret = ibv_modify_qp(qp, &a,
		                    IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
		                        IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	}
	if (ret) {
		rex_report_errno("ibv_modify_qp (to itself)", ret);
		return -ret;
	}
	return 0;
}
/* [loopback-qp] */

int rc_mw_rig_create(struct rc_mw_rig *rig, struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_qp_init_attr init = {
	    .qp_type = IBV_QPT_RC,
	    .cap = {
	        .max_send_wr = CQ_DEPTH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	int ret;

	memset(rig, 0, sizeof(*rig));
	rig->cq = ibv_create_cq(ctx, CQ_DEPTH, NULL, NULL, 0);
	if (!rig->cq) {
		ret = -errno;
		rex_report_errno("ibv_create_cq", errno);
		return ret;
	}
	init.send_cq = init.recv_cq = rig->cq;
	rig->qp = ibv_create_qp(pd, &init);
	if (!rig->qp) {
		ret = -errno;
		rex_report_errno("ibv_create_qp", errno);
		goto out_cq;
	}
	ret = connect_to_self(ctx, rig->qp);
	if (ret)
		goto out_qp;
	return 0;
out_qp:
	ibv_destroy_qp(rig->qp);
out_cq:
	ibv_destroy_cq(rig->cq);
	memset(rig, 0, sizeof(*rig));
	return ret;
}

int rc_mw_rig_destroy(struct rc_mw_rig *rig)
{
	int ret = 0, err;

	if (rig->qp && (err = ibv_destroy_qp(rig->qp)) != 0) {
		rex_report_errno("ibv_destroy_qp", err);
		ret = -err;
	}
	if (rig->cq && (err = ibv_destroy_cq(rig->cq)) != 0) {
		rex_report_errno("ibv_destroy_cq", err);
		ret = -err;
	}
	memset(rig, 0, sizeof(*rig));
	return ret;
}

/* [time-window] */
int rc_time_window(struct rc_mw_rig *rig, struct ibv_pd *pd, void *addr, uint64_t size,
                   uint64_t calls, double *samples, struct mp_summary *out)
{
	/* The buffer registered once, as a pool's region is: no remote rights
	 * of its own, the right to bind windows. */
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	struct ibv_send_wr wr;
	struct rex_mw w;
	uint64_t i;
	double t0;
	int ret, err;

	if (!mr) {
		ret = -errno;
		rex_report_reg_errno("ibv_reg_mr", errno, size);
		return ret;
	}
	ret = rex_mw_create(&w, pd);
	if (ret)
		goto out_dereg;
	for (i = 0; i < RC_WARMUP + calls; i++) {
		t0 = rc_now_us();
		rex_mw_bind_wr(&w, mr, addr, size, IBV_ACCESS_REMOTE_WRITE, &wr);
		ret = rex_mw_post_wait(rig->qp, rig->cq, &wr, WAIT_MS);
		if (ret == 0) {
			rex_mw_invalidate_wr(&w, &wr);
			ret = rex_mw_post_wait(rig->qp, rig->cq, &wr, WAIT_MS);
		}
		if (ret)
			break;
		if (i >= RC_WARMUP)
			samples[i - RC_WARMUP] = rc_now_us() - t0;
	}
	if (ret == 0)
		mp_summarize(samples, calls, out);
	if (rex_mw_destroy(&w) && ret == 0)
		ret = -EIO;
out_dereg:
	err = ibv_dereg_mr(mr);
	if (err) {
		rex_report_errno("ibv_dereg_mr", err);
		ret = ret ? ret : -err;
	}
	return ret;
}
/* [time-window] */
