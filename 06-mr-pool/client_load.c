/* SPDX-License-Identifier: MIT */
/*
 * client_load.c: -m load in 06's client (see client.h): requests at an
 * offered rate, each timed from when it was due.
 *
 * perftest's latency is one request at a time: a ping waits for its pong,
 * so it says what an idle service answers in, not what a busy one does.
 * Here requests are due on a schedule set in advance (--rate per second
 * over all QPs; fixed gaps, or Poisson's exponential ones), whatever the
 * answers do. Each is posted when due on a QP with room in its window (-t);
 * when every window is full, or the loop is behind, it goes out late, and
 * its latency still runs from when it was due. Timing from the post instead
 * would hide a stall behind the requests it delayed ("coordinated
 * omission", in the words of wrk2 and HdrHistogram).
 *
 * A request is one work request, signalled; it is done at its completion,
 * which on RC comes only once the server's device has placed it (WRITE,
 * SEND) or sent the data back (READ, atomics). The server runs a bandwidth
 * run's side of it (it is told BW): it reposts receives for SEND and does
 * nothing for the others.
 */
#include <math.h>

#include "client.h"

/* The gap to the next request, in ns: 1e9 / rate, or an exponential
 * draw of that mean (xorshift64*, a fixed seed: the same schedule for the
 * same options). */
static double next_gap(const struct options *o, uint64_t *rng)
{
	double mean = 1e9 / (double)o->rate, u;

	if (!o->poisson)
		return mean;
	*rng ^= *rng >> 12;
	*rng ^= *rng << 25;
	*rng ^= *rng >> 27;
	u = (double)((*rng * 0x2545F4914F6CDD1Dull) >> 11) / 9007199254740992.0; /* [0, 1) */
	return -log1p(-u) * mean;
}

/* A QP with room in its window, taking turns; NULL when all are full. */
static struct qp *qp_with_room(struct client *cl, unsigned *turn)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[(*turn + i) % cl->o.qps];

		if (q->conn && q->posted - q->done < cl->o.depth) {
			*turn = (*turn + i + 1) % cl->o.qps;
			return q;
		}
	}
	return NULL;
}

/* [load-done] */
/* From qp_done(): requests up to number \p done of this run completed. */
void load_done(struct qp *q, uint64_t done)
{
	struct client *cl = q->cl;
	const uint64_t *due = cl->load_due + (size_t)q->index * cl->o.depth;
	uint64_t t = now_ns();

	for (; q->done < done; q->done++) {
		mp_hist_add(cl->load_hist, t - due[q->done % cl->o.depth]);
		cl->load_completed++;
	}
	cl->end_ns = t;
	cl->progress = true;
}
/* [load-done] */

/* \p count requests in all (0: until \p end_ns), due at -rate. */
int run_load(struct client *cl, uint64_t count, uint64_t end_ns, struct bench_load *out)
{
	const struct options *o = &cl->o;
	uint64_t rng = 0x9E3779B97F4A7C15ull, issued = 0, completed = 0, t, t0, stalled, looked;
	double due;
	unsigned i, turn = 0;
	struct qp *q;
	int ret;

	for (i = 0; i < o->qps; i++) {
		q = &cl->qps[i];
		q->base = q->seq;
		q->posted = q->done = 0;
		q->target = UINT64_MAX; /* post_list() signals every one (sig 1) */
	}
	*out = (struct bench_load){.offered_rps = (double)o->rate};
	cl->load_completed = 0;
	cl->phase = PHASE_LOAD;
	t0 = looked = stalled = cl->end_ns = now_ns();
	mp_hist_reset(cl->load_hist);
	due = (double)t0;
	for (;;) {
		t = now_ns();
		/* [load-due] */
		/* Everything due by now goes out, while a window has room. */
		while ((count ? issued < count : (uint64_t)due < end_ns && t < end_ns) &&
		       (uint64_t)due <= t) {
			q = qp_with_room(cl, &turn);
			if (!q)
				break; /* late, then: it goes when a completion makes room */
			cl->load_due[(size_t)q->index * o->depth + q->posted % o->depth] =
			    (uint64_t)due;
			out->late += t - (uint64_t)due >= BENCH_LATE_US * 1000ull;
			ret = post_list(q, 1);
			if (ret)
				goto out_broken;
			issued++;
			due += next_gap(o, &rng);
		}
		/* [load-due] */
		for (i = 0; i < o->qps; i++)
			qp_step(&cl->qps[i]);
		completed = cl->load_completed;
		if (completed == issued &&
		    (count ? issued == count : (uint64_t)due >= end_ns || t >= end_ns))
			break;
		/* Signals, CM events and deadlines, about once a millisecond; and
		 * a run with requests out and none done for STALL_NS is given up. */
		if (t - looked < LOOK_AT_LOOP_NS)
			continue;
		looked = t;
		ret = look_at_loop(cl);
		if (ret)
			goto out_broken;
		if (cl->progress || completed == issued) {
			cl->progress = false;
			stalled = t;
		} else if (t - stalled > STALL_NS) {
			fprintf(stderr,
			        "client: no request completed for %llu ms: is the server gone?\n",
			        STALL_NS / 1000000);
			ret = -ETIMEDOUT;
			goto out_broken;
		}
	}
	cl->phase = PHASE_CONTROL;
	out->requests = completed;
	out->achieved_rps =
	    cl->end_ns > t0 ? (double)completed * 1e9 / (double)(cl->end_ns - t0) : 0;
	out->p90 = (double)mp_hist_quantile(cl->load_hist, 0.9) / 1e3;
	return 0;
out_broken:
	cl->phase = PHASE_CONTROL;
	cl->broken = true;
	return ret;
}
