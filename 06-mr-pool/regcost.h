/* SPDX-License-Identifier: MIT */
/*
 * regcost.h: what regcost.c and regcost_mw.c (the memory window's column)
 * share.
 */
#ifndef RC_REGCOST_H
#define RC_REGCOST_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "stats.h"

/* Untimed pairs before the timed ones: the first calls fault in the
 * library's and the kernel's code and data. */
#define RC_WARMUP 10

/* CLOCK_MONOTONIC, in microseconds. */
double rc_now_us(void);

/* A QP connected to itself, to bind windows on, and its CQ. */
struct rc_mw_rig {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
};

int rc_mw_rig_create(struct rc_mw_rig *rig, struct ibv_context *ctx, struct ibv_pd *pd);
int rc_mw_rig_destroy(struct rc_mw_rig *rig);

/* Time \p calls pairs of bind + invalidate of a type 2 window over the
 * \p size bytes at \p addr (registered once, untimed), into \p out (us per
 * pair); \p samples has room for \p calls. 0, or a negative errno (printed). */
int rc_time_window(struct rc_mw_rig *rig, struct ibv_pd *pd, void *addr, uint64_t size,
                   uint64_t calls, double *samples, struct mp_summary *out);

#endif /* RC_REGCOST_H */
