/* SPDX-License-Identifier: MIT */
/*
 * client_figures.c: the figures of 06's client that are more than a
 * division (see client.h): BW peak (ours, and perftest's with
 * --as-perftest), the per-QP figures, the CPU of both sides.
 */
#include "client.h"

/* Note the bytes completed at time \p t (see struct bw_mark). */
void mark(struct client *cl, uint64_t t)
{
	size_t i;

	if (cl->mark_skip++ % cl->mark_stride)
		return;
	if (cl->nmarks == MAX_MARKS) {
		for (i = 0; i < MAX_MARKS / 2; i++)
			cl->marks[i] = cl->marks[2 * i];
		cl->nmarks = MAX_MARKS / 2;
		cl->mark_stride *= 2;
	}
	cl->marks[cl->nmarks++] = (struct bw_mark){.t = t, .bytes = cl->bytes_done};
}

/* BW peak, after the run: the best rate over any stretch between two marks
 * that carries at least 1/PEAK_SHARE of the run's bytes and lasts at least
 * 1/PEAK_SHARE of its time (two pointers over the marks, whose bytes and
 * times only grow). The time matters for small messages: there 1/16 of the
 * bytes can be one signalled completion, and two of those polled a moment
 * apart made a "peak" hundreds of times the average. Never below the
 * average. In bytes/s. */
/* [bw-peak] */
double peak_rate(const struct client *cl)
{
	const struct bw_mark *m = cl->marks;
	size_t i, j = 0, n = cl->nmarks;
	uint64_t want, span;
	double best = 0, rate;

	if (n < 2 || m[n - 1].t == m[0].t)
		return 0;
	want = (m[n - 1].bytes - m[0].bytes) / PEAK_SHARE;
	span = (m[n - 1].t - m[0].t) / PEAK_SHARE;
	for (i = 0; i < n; i++) {
		if (j < i)
			j = i;
		while (j < n && (m[j].bytes - m[i].bytes < want || m[j].t - m[i].t < span))
			j++;
		if (j == n)
			break;
		if (m[j].t > m[i].t) {
			rate = (double)(m[j].bytes - m[i].bytes) * 1e9 / (double)(m[j].t - m[i].t);
			best = rate > best ? rate : best;
		}
	}
	return best;
}
/* [bw-peak] */

/* BW peak as perftest computes it (print_report_bw): the shortest time per
 * message over any stretch from a post to a later signalled completion, in
 * whole ns (perftest: whole cycles). In bytes/s; 0 when not stamped. */
double peak_rate_perftest(const struct client *cl)
{
	uint64_t best = UINT64_MAX, per;
	size_t i, j;

	for (i = 0; i < cl->nposts; i++)
		for (j = 0; j < cl->ndone; j++) {
			if (cl->done_msgs[j] < i + 1 || cl->done_ns[j] < cl->post_ns[i])
				continue;
			per = (cl->done_ns[j] - cl->post_ns[i]) / (cl->done_msgs[j] - i);
			best = per < best ? per : best;
		}
	return best == UINT64_MAX || best == 0 ? 0 : (double)cl->size * 1e9 / (double)best;
}

static void stop_stamps(struct client *cl)
{
	free(cl->post_ns);
	free(cl->done_ns);
	free(cl->done_msgs);
	cl->post_ns = cl->done_ns = cl->done_msgs = NULL;
	cl->stamp_cap = 0;
}

/* --as-perftest: room for \p msgs stamps of posts and of completions. */
int start_stamps(struct client *cl, uint64_t msgs)
{
	size_t len = msgs * sizeof(uint64_t);

	cl->post_ns = malloc(len);
	cl->done_ns = malloc(len);
	cl->done_msgs = malloc(len);
	if (!cl->post_ns || !cl->done_ns || !cl->done_msgs) {
		rex_report_errno("malloc", ENOMEM);
		stop_stamps(cl);
		return -ENOMEM;
	}
	/* Written now, so that the timed run takes no page fault for them. */
	memset(cl->post_ns, 0, len);
	memset(cl->done_ns, 0, len);
	memset(cl->done_msgs, 0, len);
	cl->stamp_cap = msgs;
	cl->nposts = cl->ndone = 0;
	return 0;
}

double cpu_seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

/* Each QP's messages over its own time, from the run's start at \p t0 to
 * its last completion. */
const struct bench_qp *fill_per_qp(const struct client *cl, uint64_t t0, struct bench_qp *out)
{
	unsigned i;

	for (i = 0; i < cl->o.qps; i++) {
		const struct qp *q = &cl->qps[i];
		double s = q->end_ns > t0 ? (double)(q->end_ns - t0) / 1e9 : 0;

		out[i] = (struct bench_qp){.iterations = q->done, .seconds = s};
		if (s > 0)
			out[i].bw_avg_mib_s = (double)q->done * cl->size / s / (1 << 20);
	}
	return out;
}

/* The server's CPU for the run: each connection's session measured the
 * whole server process over its own START to DONE, so with several QPs they
 * overlap: the largest is the run's. Negative when a QP's did not come. */
void server_cpu(const struct client *cl, struct bench_row *row)
{
	double *to[2] = {&row->srv_cpu_user_s, &row->srv_cpu_sys_s};
	unsigned i, k;

	for (k = 0; k < 2; k++) {
		*to[k] = 0;
		for (i = 0; i < cl->o.qps; i++) {
			uint32_t us = cl->qps[i].srv_cpu[k];

			if (us == BENCH_CPU_UNKNOWN) {
				*to[k] = -1;
				break;
			}
			*to[k] = (double)us / 1e6 > *to[k] ? (double)us / 1e6 : *to[k];
		}
	}
}

/* --cycles: the cycle counter's rate, read against the clock over
 * CYCLES_CAL_NS of busy waiting; the clock's own cost (a system call
 * where it has no user-space reading: 0.9 us in the lab's VM) is then
 * one part in 20,000. perftest measures the same rate, from the CPU's
 * frequency or a loop of its own. */
int calibrate_cycles(struct client *cl)
{
	uint64_t n0 = now_ns(), c0 = cycles_now(), n1, c1;

	do {
		n1 = now_ns();
		c1 = cycles_now();
	} while (n1 - n0 < CYCLES_CAL_NS);
	if (c1 <= c0) {
		fprintf(stderr, "client: --cycles: the cycle counter did not advance\n");
		return -EIO;
	}
	cl->ns_per_cycle_q32 = (uint64_t)((double)(n1 - n0) * 4294967296.0 / (double)(c1 - c0));
	cl->cycles0 = c1;
	cl->cycles_ns0 = n1;
	if (cl->o.verbose)
		fprintf(stderr, "client: --cycles: %.4f cycles a ns\n",
		        (double)(c1 - c0) / (double)(n1 - n0));
	return 0;
}

/* --cycles: each CPU has its own cycle counter, and they need not be in
 * step (the lab VM's kernel finds them not, at boot): a thread moved to
 * another CPU reads another count. So from the rate's measure to the end
 * of the timed run the client stays on the CPU it is on. */
static int stay_on_cpu(struct client *cl)
{
	int cpu = sched_getcpu(), err;
	cpu_set_t one;

	if (cpu < 0 || sched_getaffinity(0, sizeof(cl->cpus), &cl->cpus)) {
		err = errno;
		rex_report_errno(cpu < 0 ? "sched_getcpu" : "sched_getaffinity", err);
		return -err;
	}
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		err = errno;
		rex_report_errno("sched_setaffinity", err);
		return -err;
	}
	cl->pinned = true;
	if (cl->o.verbose)
		fprintf(stderr, "client: --cycles: on CPU %d for the timed run\n", cpu);
	return 0;
}

/* After a timed run: the stamps freed, the CPUs we may run on as before. */
void end_timing(struct client *cl)
{
	stop_stamps(cl);
	if (cl->pinned && sched_setaffinity(0, sizeof(cl->cpus), &cl->cpus))
		rex_report_errno("sched_setaffinity", errno);
	cl->pinned = false;
}

/* Before a timed run: --as-perftest's BW peak stamps, when perftest has a
 * peak at all (-n, at most PEAK_MAX_MSGS messages), and --cycles' CPU and
 * rate. On failure, nothing of it is left. */
int prepare_timing(struct client *cl, uint64_t n)
{
	const struct options *o = &cl->o;
	int ret = 0;

	if (o->mode == BENCH_MODE_BW && !o->load && o->as_perftest && n &&
	    n * o->qps <= PEAK_MAX_MSGS)
		ret = start_stamps(cl, n * o->qps);
	if (o->cycles && ret == 0)
		ret = stay_on_cpu(cl);
	if (o->cycles && ret == 0)
		ret = calibrate_cycles(cl);
	if (ret)
		end_timing(cl);
	return ret;
}
