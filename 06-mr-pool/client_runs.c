/* SPDX-License-Identifier: MIT */
/*
 * client_runs.c: a size's runs in 06's client (see client.h): the window
 * refilled as chains, completions taken, bandwidth and latency timed, the
 * data checked after the timed region.
 */
#include "client.h"

/* [atomic] */
/* The operands of atomic number \p n on the counter (from 0, since START):
 * FETCH_AND_ADD adds 1; COMPARE_AND_SWAP finds n and leaves n + 1, which
 * holds because one QP's atomics are carried out in the order posted. So
 * after N of either, the counter is N. */
static void set_atomic(const struct client *cl, const struct qp *q, struct ibv_send_wr *wr,
                       uint64_t n)
{
	if (!bench_op_atomic(cl->o.op))
		return;
	wr->wr.atomic.remote_addr = q->peer.addr;
	wr->wr.atomic.rkey = q->peer.rkey;
	wr->wr.atomic.compare_add = cl->o.op == BENCH_OP_FADD ? 1 : n;
	wr->wr.atomic.swap = n + 1;
}
/* [atomic] */

/* [post-list] */
/* Post -l work requests (1 by default, as perftest: one call, one doorbell
 * each), chained. Every sig-th work request is signalled, and the run's last. */
int post_list(struct qp *q, uint64_t k)
{
	struct client *cl = q->cl;
	uint64_t i, j, t = cl->stamp_cap ? run_clock(cl) : 0;
	int ret;

	for (i = 0; i < k; i++) {
		j = q->posted + i + 1;
		q->wr[i].wr_id = q->base + j; /* its number among all our sends */
		q->wr[i].send_flags =
		    cl->send_flags | (j % cl->sig == 0 || j == q->target ? IBV_SEND_SIGNALED : 0);
		set_atomic(cl, q, &q->wr[i], q->atomics + i);
		if (cl->stamp_cap && cl->nposts < cl->stamp_cap)
			cl->post_ns[cl->nposts++] = t;
	}
	q->wr[k - 1].next = NULL;
	ret = q->conn ? rex_svc_post_send(q->conn, q->wr) : -ENOTCONN;
	q->wr[k - 1].next = k < cl->o.depth ? &q->wr[k] : NULL;
	if (ret)
		return ret;
	q->posted += k;
	q->seq += k;
	q->atomics += bench_op_atomic(cl->o.op) ? k : 0;
	return 0;
}
/* [post-list] */

/* Keep the window full, -l at a time. */
static int refill(struct qp *q)
{
	struct client *cl = q->cl;
	uint64_t room = cl->o.depth - (q->posted - q->done), left = q->target - q->posted;
	uint64_t k = room < left ? room : left;
	int ret;

	while (k > 0) {
		ret = post_list(q, k < cl->o.post_list ? k : cl->o.post_list);
		if (ret)
			return ret;
		k -= k < cl->o.post_list ? k : cl->o.post_list;
	}
	return 0;
}

/* [step] */
/* Receives for control messages and latency answers. */
int post_recvs(struct qp *q, unsigned n)
{
	struct ibv_recv_wr wr[CLIENT_RECVS];
	unsigned i;

	for (i = 0; i < n; i++)
		wr[i] = (struct ibv_recv_wr){.sg_list = &q->recv_sge,
		                             .num_sge = q->recv_sge.length ? 1 : 0,
		                             .next = i + 1 < n ? &wr[i + 1] : NULL};
	return rex_svc_post_recv(q->conn, wr);
}

/* What a receive brought: a control message, or a latency answer. */
static void handle_recv(struct qp *q, const struct ibv_wc *wc)
{
	struct client *cl = q->cl;
	uint32_t imm = be32toh(wc->imm_data);
	bool lat = cl->o.mode == BENCH_MODE_LAT;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		if (lat && cl->o.op == BENCH_OP_WRITE_IMM &&
		    bench_ctrl_type(imm) == BENCH_CTRL_DATA) {
			q->answers++;
			return;
		}
	} else if (wc->wc_flags & IBV_WC_WITH_IMM) {
		if (bench_ctrl_type(imm) == BENCH_CTRL_ALIVE)
			return; /* the server's probe: its receive goes back, that is all */
		if (bench_ctrl_type(imm) == BENCH_CTRL_READY && !q->ready) {
			q->ready = true;
			return;
		}
		if (bench_ctrl_type(imm) == BENCH_CTRL_RESULT && !q->result_in) {
			q->result = bench_ctrl_value(imm);
			q->result_in = true;
			return;
		}
		if (bench_ctrl_type(imm) == BENCH_CTRL_ENDED && !q->ended) {
			q->ended = true;
			/* Ours, or a lease that ran out as we ended: ended either way. */
			if (q->ending)
				return;
			/* Not asked for: our lease ran out (or a server gone wrong). */
			fprintf(stderr,
			        "client: %s: the server revoked our rkey: %s (lease %" PRIu32
			        " ms)\n",
			        rex_svc_conn_name(q->conn),
			        bench_ctrl_value(imm) == BENCH_ENDED_LEASE ? "its lease ran out"
			                                                   : "unasked",
			        q->peer.lease_ms);
			rex_svc_close(q->conn, true);
			return;
		}
		/* The server's CPU comes just before its RESULT. */
		if ((bench_ctrl_type(imm) == BENCH_CTRL_CPU_USER ||
		     bench_ctrl_type(imm) == BENCH_CTRL_CPU_SYS) &&
		    q->ready && !q->result_in) {
			q->srv_cpu[bench_ctrl_type(imm) - BENCH_CTRL_CPU_USER] =
			    bench_ctrl_value(imm);
			return;
		}
	} else if (lat && cl->o.op == BENCH_OP_SEND && wc->byte_len == cl->size) {
		q->answers++;
		return;
	}
	fprintf(stderr,
	        "client: %s: unexpected message from the server (opcode %d, %u bytes, "
	        "immediate 0x%08x)\n",
	        rex_svc_conn_name(q->conn), wc->opcode, wc->byte_len, imm);
	rex_svc_close(q->conn, true);
}

/* ops.recv(): a receive completed; taken, then posted again. */
void qp_recv(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc)
{
	struct qp *q = rex_svc_conn_user(c);
	int ret;

	(void)wr_id;
	handle_recv(q, wc);
	ret = post_recvs(q, 1);
	if (ret && ret != -ENOTCONN) /* -ENOTCONN: closing, nothing to receive */
		rex_svc_close(c, true);
}

/* ops.done(): a signalled send numbered wr_id completed, and every send
 * before it. In a bandwidth run: counted, and the window refilled. */
void qp_done(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc)
{
	struct qp *q = rex_svc_conn_user(c);
	struct client *cl = q->cl;
	uint64_t done;

	(void)wc;
	q->completed = wr_id;
	if (cl->phase == PHASE_LOAD && wr_id > q->base)
		load_done(q, wr_id - q->base);
	if (cl->phase != PHASE_BW || wr_id <= q->base)
		return;
	done = wr_id - q->base;
	cl->bytes_done += (done - q->done) * cl->size;
	q->done = done;
	cl->progress = true;
	if (cl->stamp_cap && cl->ndone < cl->stamp_cap) {
		cl->done_ns[cl->ndone] = run_clock(cl);
		cl->done_msgs[cl->ndone++] = cl->bytes_done / cl->size;
	}
	if (q->done == q->target && cl->o.qps > 1)
		q->end_ns = run_clock(cl); /* its own end, for the per-QP figures */
	if (refill(q))
		rex_svc_close(c, true);
}

/* Busy polling: take the QP's completions now (ops.recv(), ops.done()). */
void qp_step(struct qp *q)
{
	if (q->conn)
		rex_svc_conn_poll(q->conn);
}
/* [step] */
/* [step] */

/* [prepare] */
/* Before a size: the work requests, the pattern, the server told. */
static int start_size(struct client *cl, uint32_t size)
{
	const struct options *o = &cl->o;
	unsigned i, k;

	cl->size = size;
	cl->pings = 0;
	cl->sig = signal_every(o, size);
	cl->send_flags = o->op != BENCH_OP_READ && !bench_op_atomic(o->op) && size <= o->inline_size
	                     ? IBV_SEND_INLINE
	                     : 0;
	for (i = 0; i < o->qps; i++) {
		struct qp *q = &cl->qps[i];
		static const enum ibv_wr_opcode opcodes[BENCH_OP_COUNT] = {
		    IBV_WR_SEND,      IBV_WR_RDMA_WRITE,           IBV_WR_RDMA_WRITE_WITH_IMM,
		    IBV_WR_RDMA_READ, IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_CMP_AND_SWP};

		for (k = 0; k < o->depth; k++) {
			q->sge[k] = (struct ibv_sge){
			    .addr = (uintptr_t)q->mem, .length = size, .lkey = q->buf->lkey};
			q->wr[k] = (struct ibv_send_wr){
			    .sg_list = &q->sge[k],
			    .num_sge = 1,
			    .opcode = opcodes[o->op],
			    .imm_data = htobe32(bench_ctrl_imm(BENCH_CTRL_DATA, 0)),
			    .wr.rdma = {.remote_addr = q->peer.addr, .rkey = q->peer.rkey},
			    .next = k + 1 < o->depth ? &q->wr[k + 1] : NULL};
		}
		/* What we send carries the pattern; what we read or get back
		 * lands on zeros, so the check proves it came. */
		if (o->op == BENCH_OP_READ || bench_op_atomic(o->op))
			memset(q->mem, 0, size);
		else
			bench_pattern_fill(q->mem, size, bench_seed(q->index, size, 0));
		if (q->dest != q->mem)
			memset(q->dest, 0, size);
		q->ready = q->result_in = false;
		q->answers = q->atomics = 0;
		q->srv_cpu[0] = q->srv_cpu[1] = BENCH_CPU_UNKNOWN;
		if (send_ctrl(q, bench_ctrl_imm(BENCH_CTRL_START, size)))
			return -EIO;
	}
	return drive(cl, all_ready, CTRL_TIMEOUT_MS, "READY", true);
}
/* [prepare] */

/* Look at the loop: signals and CM events (busy polling only). */
int look_at_loop(struct client *cl)
{
	if (rex_loop_run_once(cl->loop, 0) < 0)
		return -EIO;
	if (cl->broken || !all_established(cl)) {
		cl->broken = true;
		return -ECONNRESET;
	}
	return 0;
}

/* \p count messages per QP (0: until \p end_ns), the window kept full. */
static int run_bw(struct client *cl, uint64_t count, uint64_t end_ns, double *peak_bps)
{
	uint64_t t, t0 = run_clock(cl), looked = t0, active = t0;
	unsigned i, idle = 0, pending;
	bool timed_out = false;

	cl->bytes_done = 0;
	cl->nmarks = 0;
	cl->mark_stride = 1;
	cl->mark_skip = 0;
	mark(cl, t0);
	for (i = 0; i < cl->o.qps; i++) {
		struct qp *q = &cl->qps[i];

		q->base = q->seq;
		q->posted = q->done = q->end_ns = 0;
		q->target = count ? count : UINT64_MAX;
	}
	cl->phase = PHASE_BW;
	for (i = 0; i < cl->o.qps; i++)
		if (refill(&cl->qps[i]) && cl->qps[i].conn)
			rex_svc_close(cl->qps[i].conn, true);
	cl->progress = false;
	/* [bw] */
	for (;;) {
		pending = 0;
		if (cl->o.events) {
			if (rex_loop_run_once(cl->loop, 100) < 0 || cl->broken ||
			    !all_established(cl))
				goto out_broken;
		} else {
			for (i = 0; i < cl->o.qps; i++)
				qp_step(&cl->qps[i]);
		}
		for (i = 0; i < cl->o.qps; i++)
			pending += cl->qps[i].done < cl->qps[i].target;
		/* One clock read per batch of completions, or per 256 empty polls. */
		if (!cl->progress && ++idle % 256 && pending)
			continue;
		t = run_clock(cl);
		if (cl->progress) {
			cl->progress =
			    false; /* sticky until here: completions the loop took count too */
			active = t;
			mark(cl, t);
		}
		if (!pending) {
			cl->end_ns = t; /* the timed region ends here, before the peak */
			break;
		}
		/* [bw] */
		if (end_ns && t >= end_ns && !timed_out) {
			/* -D: post no more; the last posted must be signalled. */
			timed_out = true;
			for (i = 0; i < cl->o.qps; i++) {
				struct qp *q = &cl->qps[i];

				q->target = q->posted + (q->posted % cl->sig != 0);
				refill(q);
			}
		}
		if (t - active > STALL_NS) {
			fprintf(stderr, "client: no completion for %llu ms: is the server gone?\n",
			        STALL_NS / 1000000);
			goto out_broken;
		}
		if (!cl->o.events && t - looked >= LOOK_AT_LOOP_NS) {
			looked = t;
			if (look_at_loop(cl))
				goto out_broken;
		}
	}
	cl->phase = PHASE_CONTROL;
	*peak_bps = cl->o.as_perftest ? peak_rate_perftest(cl) : peak_rate(cl);
	return 0;
out_broken:
	cl->phase = PHASE_CONTROL;
	cl->broken = true;
	return -ECONNRESET;
}

/* Latency: READ and atomics report the round trip, the others half of it. */
static unsigned lat_scale(unsigned op)
{
	return op == BENCH_OP_READ || bench_op_atomic(op) ? 1 : 2;
}

/* Wait for ping \p i's own completion (\p seq), then for its answer, as
 * perftest does: busy, or through the loop with -e. */
static int wait_answer(struct client *cl, struct qp *q, uint64_t i, uint64_t seq)
{
	const volatile uint8_t *last = q->dest + cl->size - 1;
	uint64_t spins = 0, start = 0, t;
	bool sent;

	for (;;) {
		sent = q->completed >= seq;
		if (sent) {
			if (cl->o.op == BENCH_OP_WRITE) {
				if (*last == bench_tag(i))
					return 0;
			} else if (cl->o.op == BENCH_OP_READ || bench_op_atomic(cl->o.op) ||
			           q->answers > i) {
				return 0; /* a READ's or an atomic's completion is its answer */
			}
		}
		if (cl->o.events) {
			if (rex_loop_run_once(cl->loop, 100) < 0)
				return -EIO;
		} else if (!sent || cl->o.op != BENCH_OP_WRITE || spins % 64 == 0) {
			if (q->lent.qp)
				lent_step(q);
			else
				qp_step(q);
		}
		if (cl->broken)
			return -ECONNRESET;
		if (++spins % 4096 && !cl->o.events)
			continue;
		t = now_ns();
		if (!start)
			start = t;
		if (t - start > STALL_NS) {
			fprintf(stderr, "client: no answer for %llu ms: is the server gone?\n",
			        STALL_NS / 1000000);
			return -ETIMEDOUT;
		}
		if (look_at_loop(cl))
			return -ECONNRESET;
	}
}

/*
 * \p count ping-pongs (0: until \p end_ns). As perftest: a sample runs from
 * one ping's post to the next, so it holds the ping's own completion, its
 * answer and the loop around them; N pings give N - 1 samples. With \p hist
 * (the timed run) every sample is kept in cl->sample_ns while there is room
 * (by count: all of them; lat_samples_done() counts them after the run), else
 * counted in \p hist at once (by duration).
 */
static int run_lat(struct client *cl, uint64_t count, uint64_t end_ns, struct mp_hist *hist,
                   size_t *kept)
{
	struct qp *q = &cl->qps[0];
	uint8_t *tag = q->mem + cl->size - 1;
	struct ibv_send_wr *wr = &q->wr[0];
	uint64_t i, n, t, prev = 0, looked = now_ns();
	int ret;

	*kept = 0;
	wr->next = NULL;
	wr->send_flags = cl->send_flags | IBV_SEND_SIGNALED;
	/* [lat] */
	for (n = 0; !count || n < count; n++) {
		i = cl->pings++; /* numbered across warm-up and timed run, as the server counts */
		if (cl->o.op == BENCH_OP_WRITE)
			*tag = bench_tag(i);
		t = run_clock(cl);
		if (hist && n > 0) {
			if (*kept < cl->max_samples)
				cl->sample_ns[(*kept)++] = t - prev; /* a store, no more */
			else
				mp_hist_add(hist, t - prev);
		}
		prev = t;
		if (end_ns && t >= end_ns)
			break;
		set_atomic(cl, q, wr, q->atomics);
		ret = post_ping(q, wr);
		q->atomics += ret == 0 && bench_op_atomic(cl->o.op);
		q->seq += ret == 0;
		if (ret == 0)
			ret = wait_answer(cl, q, i, q->seq);
		if (ret) {
			cl->broken = true;
			return ret;
		}
		if (!cl->o.events && t - looked >= LOOK_AT_LOOP_NS) {
			looked = t;
			if (look_at_loop(cl))
				return -ECONNRESET;
		}
	}
	/* [lat] */
	return 0;
}

/* After a timed run by count: each sample counted in \p hist, and in
 * microseconds (of the round trip, or half of it) for the exact figures. */
static void lat_samples_done(struct client *cl, size_t kept, struct mp_hist *hist)
{
	double unit = 1e3 * lat_scale(cl->o.op);
	size_t k;

	for (k = 0; k < kept; k++) {
		mp_hist_add(hist, cl->sample_ns[k]);
		cl->samples[k] = (double)cl->sample_ns[k] / unit;
	}
}

/* [verify] */
/* Atomics: after the timed region, one more atomic that changes nothing
 * (add 0; or swap the expected value for itself) fetches the counter, which
 * must be the number of atomics done on it. 0, or -1 when it is not. */
static int check_counter(struct client *cl, struct qp *q)
{
	const volatile uint64_t *counter = (const uint64_t *)(void *)q->mem;
	struct ibv_send_wr wr = q->wr[0];
	int ret;

	wr.next = NULL;
	wr.send_flags = IBV_SEND_SIGNALED;
	set_atomic(cl, q, &wr, q->atomics);
	wr.wr.atomic.compare_add = cl->o.op == BENCH_OP_FADD ? 0 : q->atomics;
	wr.wr.atomic.swap = q->atomics;
	wr.wr_id = q->seq + 1;
	ret = q->conn ? rex_svc_post_send(q->conn, &wr) : -ENOTCONN;
	q->seq += ret == 0;
	if (ret == 0)
		ret = wait_answer(cl, q, 0, q->seq);
	if (ret)
		return ret;
	if (*counter == q->atomics)
		return 0;
	fprintf(stderr, "client: %s: the counter is %" PRIu64 " after %" PRIu64 " %s\n",
	        rex_svc_conn_name(q->conn), (uint64_t)*counter, q->atomics,
	        bench_op_name(cl->o.op));
	return -1;
}

/* After the timed region: the server checks what it got, we check what we read or got back. */
static int finish_size(struct client *cl, bool *verified)
{
	const struct options *o = &cl->o;
	uint32_t size = cl->size;
	size_t len, off;
	unsigned i;
	int ret, bad_counter = 0;

	for (i = 0; i < o->qps && bench_op_atomic(o->op); i++) {
		ret = check_counter(cl, &cl->qps[i]);
		if (ret < -1)
			return ret;
		bad_counter |= ret;
	}
	for (i = 0; i < o->qps; i++)
		if (send_ctrl(&cl->qps[i], bench_ctrl_imm(BENCH_CTRL_DONE, 0)))
			return -EIO;
	ret = drive(cl, all_results, CTRL_TIMEOUT_MS, "RESULT", true);
	if (ret)
		return ret;
	*verified = bad_counter == 0;
	for (i = 0; i < o->qps; i++) {
		struct qp *q = &cl->qps[i];

		if (q->result != 0 && q->result != BENCH_RESULT_NA) {
			fprintf(stderr,
			        "client: %s: the server found the data of size %" PRIu32
			        " different at offset %" PRIu32 "\n",
			        rex_svc_conn_name(q->conn), size, q->result - 1);
			*verified = false;
		}
		len = o->op == BENCH_OP_WRITE && o->mode == BENCH_MODE_LAT ? size - 1 : size;
		if (bench_op_atomic(o->op))
			off = len; /* the counter, checked above */
		else if (o->op == BENCH_OP_READ)
			off = bench_pattern_check(q->mem, len, bench_seed(q->index, size, 1));
		else if (o->mode == BENCH_MODE_LAT)
			off = bench_pattern_check(q->dest, len, bench_seed(q->index, size, 0));
		else
			off = len;
		if (off != len) {
			fprintf(stderr,
			        "client: %s: data of size %" PRIu32 " differs at offset %zu\n",
			        rex_svc_conn_name(q->conn), size, off);
			*verified = false;
		}
	}
	return 0;
}
/* [verify] */

/* Busy polling: while a size runs, the CQs raise no events (an armed CQ
 * makes the device signal the completion channel for a completion we poll
 * anyway: on Soft-RoCE, kernel work on the CPU that is also the NIC). After
 * it, armed again and polled once, for the control messages. */
static int set_busy_polled(struct client *cl, bool busy)
{
	unsigned i;
	int ret = 0;

	if (!busy && cl->o.lend)
		set_lent(cl, false);
	for (i = 0; i < cl->o.qps; i++)
		if (cl->qps[i].conn)
			rex_svc_conn_set_busy(cl->qps[i].conn, busy);
	if (busy && cl->o.lend)
		ret = set_lent(cl, true); /* --lend: and the latency QP lent to us */
	return ret;
}

int run_size(struct client *cl, uint32_t size, struct bench_row *row)
{
	const struct options *o = &cl->o;
	struct rusage r0, r1;
	uint64_t t0 = 0, t1 = 0, end = 0;
	double peak = 0;
	size_t kept = 0;
	uint64_t n = o->duration > 0 ? 0 : o->iters;
	uint64_t warmup = o->warmup;
	struct mp_hist *hist = cl->hists ? &cl->hists[cl->nrows] : NULL;
	struct bench_qp *per_qp = cl->per_qp ? &cl->per_qp[cl->nrows * o->qps] : NULL;
	struct bench_load load = {0};
	int ret;

	ret = start_size(cl, size);
	if (ret)
		return ret;
	/* [run-size] */
	if (!o->events)
		ret = set_busy_polled(cl, true);
	/* Warm-up: the same path, untimed. */
	if (ret == 0 && warmup && !o->load)
		ret = o->mode == BENCH_MODE_BW ? run_bw(cl, warmup, 0, &peak)
		                               : run_lat(cl, warmup, 0, NULL, &kept);
	if (ret)
		goto out_events;
	ret = prepare_timing(cl, n); /* --as-perftest's stamps, --cycles' rate */
	if (ret)
		goto out_events;
	getrusage(RUSAGE_SELF, &r0);
	t0 = now_ns(); /* the run's time by the clock, whatever times its parts */
	if (o->duration > 0)
		end = t0 + (uint64_t)(o->duration * 1e9);
	if (hist)
		mp_hist_reset(hist);
	ret = o->load                    ? run_load(cl, n, end, &load)
	      : o->mode == BENCH_MODE_BW ? run_bw(cl, n, end, &peak)
	                                 : run_lat(cl, n, end, hist, &kept);
	/* Bandwidth: the region ends at the last completion, before BW peak
	 * is computed; latency: after the last sample. */
	t1 = o->mode == BENCH_MODE_BW && ret == 0 ? cl->end_ns : now_ns();
	getrusage(RUSAGE_SELF, &r1);
	end_timing(cl); /* the stamps freed, the CPUs as before */
	if (ret == 0 && hist && kept)
		lat_samples_done(cl, kept, hist);
out_events:
	if (!o->events)
		set_busy_polled(cl, false);
	/* [run-size] */
	if (ret)
		return ret;

	*row = (struct bench_row){.op = o->op,
	                          .mode = o->load ? BENCH_MODE_LOAD : o->mode,
	                          .bytes = size,
	                          .qps = o->qps,
	                          .depth = o->depth,
	                          .load = load};
	row->seconds = (double)(t1 - t0) / 1e9;
	row->cpu_user_s = cpu_seconds(&r1.ru_utime) - cpu_seconds(&r0.ru_utime);
	row->cpu_sys_s = cpu_seconds(&r1.ru_stime) - cpu_seconds(&r0.ru_stime);
	if (o->load) {
		bench_lat_from_hist(cl->load_hist, 1, &row->lat);
		row->iterations = row->load.requests;
		row->hist = cl->load_hist;
		row->hist_scale = 1;
	} else if (o->mode == BENCH_MODE_BW) {
		double msgs = (double)cl->bytes_done / size;

		row->iterations = (uint64_t)msgs / o->qps;
		row->bw_avg_mib_s = (double)cl->bytes_done / row->seconds / (1 << 20);
		row->bw_peak_mib_s = o->as_perftest || peak / (1 << 20) > row->bw_avg_mib_s
		                         ? peak / (1 << 20)
		                         : row->bw_avg_mib_s;
		row->msg_rate_mpps = msgs / row->seconds / 1e6;
		if (per_qp)
			row->per_qp = fill_per_qp(cl, t0, per_qp);
	} else {
		/* By count, exact; by duration, from the histogram. */
		if (o->duration > 0)
			bench_lat_from_hist(hist, lat_scale(o->op), &row->lat);
		else
			bench_lat_summarize(cl->samples, kept, o->as_perftest, &row->lat);
		row->iterations = o->duration > 0 ? row->lat.n : kept;
		row->hist = hist;
		row->hist_scale = lat_scale(o->op);
	}
	ret = finish_size(cl, &row->verified);
	server_cpu(cl, row);
	return ret;
}
