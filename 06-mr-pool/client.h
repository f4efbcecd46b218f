/* SPDX-License-Identifier: MIT */
/*
 * client.h: what the four files of 06's client share: its options, a
 * connection of the run (struct qp), the client, and who calls what.
 *
 *   client.c          main(): the table of contents, the sweep, the outputs
 *   client_options.c  the command line, perftest's flags
 *   client_conn.c     connections: set up, driven, torn down (common/rex_svc)
 *   client_runs.c     a size's runs: bandwidth, latency, the data checked
 *   client_figures.c  BW peak, the per-QP figures, the CPU of both sides
 *   client_load.c     -m load: requests at an offered rate, timed from when due
 */
#ifndef BENCH_CLIENT_H
#define BENCH_CLIENT_H

#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "bench_stats.h"
#include "bench_wire.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_loop.h"
#include "rex_options.h"
#include "rex_pool.h"
#include "rex_svc.h"

/* [constants] */
#define PROGRAM "06-mr-pool-client"

/* perftest's defaults (docs: benchmarks.md). */
#define BW_SIZE        65536u
#define LAT_SIZE       2u
#define BW_ITERS       5000u
#define BW_SEND_ITERS  1000u
#define LAT_ITERS      1000u
#define BW_DEPTH       128u
#define BW_SIGNAL      100u  /* one signalled completion per 100 work requests ... */
#define BW_SIGNAL_SIZE 8192u /* ... up to 8 KiB; above, every one (as perftest) */
/* perftest leaves out BW peak (prints 0) above this many messages. */
#define PEAK_MAX_MSGS 20000u
#define SWEEP_MIN     2u
#define SWEEP_MAX     (8u << 20)
#define MAX_ROWS      32
/* Latency samples kept, 8 bytes each (32 MiB). */
#define MAX_SAMPLES  (4u << 20)
#define CLIENT_RECVS 16 /* control messages and latency answers */
/* The loop (signals, CM events, deadlines) is looked at this often while busy-polling. */
#define LOOK_AT_LOOP_NS 1000000ull
/* A connection that completes nothing for this long is given up. */
#define STALL_NS        5000000000ull
#define CTRL_TIMEOUT_MS 10000 /* a control answer (READY, RESULT) */
/* -m load: requests in flight per QP at most (-t), and seconds of a run. */
#define LOAD_DEPTH    16u
#define LOAD_DURATION 5u
/* Exit status of a run whose latency was above --max-p99 (all else fine). */
#define EXIT_ABOVE_MAX 3
/* [constants] */

struct options {
	const char *server;
	uint16_t port;
	unsigned op, mode;
	uint64_t size, max_size, iters, warmup;
	double duration;
	unsigned depth, qps, sig, inline_size, post_list;
	bool sweep, events, verbose, size_set, iters_set, depth_set, sig_set, warmup_set;
	bool as_perftest; /* --as-perftest: the figures computed as perftest does */
	bool end_by_server; /* --end server: END (the server invalidates), not SEND WITH INV */
	bool load;          /* -m load (mode is then BENCH_MODE_BW, as the server sees it) */
	bool poisson;       /* --schedule poisson: exponential gaps, else fixed ones */
	bool schedule_set;
	uint64_t rate;     /* --rate: requests per second, all QPs together */
	double max_p99_us; /* --max-p99: 0, none */
	bool cycles;       /* --cycles: latency pings timed by the cycle counter */
	bool lend;         /* --lend: latency pings posted and polled with the verbs alone */
	const char *json, *csv;
};

struct client;

/* One connection of the run. */
struct qp {
	struct rex_svc_conn *conn; /* from ops.ready() until ops.closed() */
	struct client *cl;
	unsigned index;
	struct bench_accept peer;
	struct rex_pool *pool;    /* its device's */
	struct rex_pool_buf *buf; /* its buffer from the pool, until it is released */
	uint8_t *mem, *dest;      /* buf->addr; dest: where answers land (latency) */
	struct ibv_sge recv_sge;
	struct ibv_send_wr *wr; /* depth prebuilt work requests, chained */
	struct ibv_sge *sge;
	/* Every send of ours has its number as wr_id, from 1: a signalled
	 * one's ops.done() says every send up to it is done. */
	uint64_t seq, completed;       /* sends posted; the highest done */
	uint64_t base;                 /* seq when the run began */
	uint64_t posted, done, target; /* data work requests of this run */
	uint64_t answers;              /* latency answers received in this size's runs */
	uint64_t atomics;              /* atomics posted on the server's counter since START */
	uint64_t end_ns;               /* when its last message of the run completed */
	struct rex_svc_lent lent;      /* --lend: the QP and CQ the helper lent (qp NULL: none) */
	/* --lend: a SEND answer's receive, posted again as it was (lent_answer()) */
	struct ibv_recv_wr answer_recv;
	bool up;                       /* established, its QP not yet going */
	bool ready, result_in, released;
	uint32_t result;
	uint32_t srv_cpu[2]; /* CPU_USER, CPU_SYS of this size's run (BENCH_CPU_UNKNOWN: none) */
	bool ending, ended;  /* our end of the grant: asked for; ENDED came */
};

enum phase { PHASE_CONTROL, PHASE_BW, PHASE_LOAD };

struct client {
	struct options o;
	struct rex_loop *loop;
	struct rex_svc *svc;
	struct rex_svc_config cfg;
	struct qp *qps;
	unsigned open, established;
	bool stopping, broken;
	bool iwarp; /* the device is iWARP: refused (rex_device_refuse_iwarp()) */
	enum phase phase;
	uint32_t size, sig;
	unsigned send_flags;
	uint64_t bytes_done; /* of the run, all QPs */
	uint64_t pings;      /* latency pings of this size, warm-up included: the tags */
	bool progress;       /* a batch of completions since last looked */
	double *samples; /* -n latency: every sample, for exact figures (us) ... */
	uint64_t *sample_ns; /* ... taken in ns in the timed loop, converted after */
	size_t max_samples;
	struct mp_hist *hists;  /* latency: a histogram per row (all of -D's samples) */
	struct bench_qp *per_qp; /* bandwidth with several QPs: qps per row */
	struct bw_mark *marks; /* bandwidth: progress over the timed run, for BW peak */
	size_t nmarks, mark_stride, mark_skip;
	/* --as-perftest's BW peak: when each message was posted, and when each
	 * signalled completion came (with how many messages were done then). */
	uint64_t *post_ns, *done_ns, *done_msgs;
	size_t nposts, ndone, stamp_cap; /* stamp_cap 0: not stamping */
	uint64_t end_ns;                 /* the timed run's last completion */
	/* -m load: the requests' latencies from when each was due, how many
	 * completed, when the last did. */
	uint64_t ns_per_cycle_q32;    /* --cycles: ns a cycle (32.32 fixed point), read ... */
	uint64_t cycles0, cycles_ns0; /* ... before the timed run, to this count and time */
	cpu_set_t cpus;               /* --cycles: the CPUs we may run on, while ... */
	bool pinned;                  /* ... we stay on one for a timed run (end_timing()) */
	struct mp_hist *load_hist;
	uint64_t *load_due; /* depth per QP: when each request in flight was due (ns) */
	uint64_t load_completed;
	struct bench_row rows[MAX_ROWS];
	size_t nrows;
	char date[32];
	const char *device;
};

/* A moment of a bandwidth run: the time, and the bytes completed by then. */
struct bw_mark {
	uint64_t t, bytes;
};
/* Marks kept per run (16 bytes each). When full, every second one is
 * dropped and from then on only every second batch is marked: a run of any
 * length fits, with a resolution of 1/MAX_MARKS of it or better. */
#define MAX_MARKS 65536
/* BW peak is the best rate over any stretch of the run that carries at
 * least this share of its bytes: short enough to see a faster phase, long
 * enough that a burst of completions that came in together is not a peak. */
#define PEAK_SHARE 16

/* --cycles: the CPU's cycle counter, which perftest reads for its
 * timestamps; measured against the clock before each timed run. */
#if defined(__x86_64__)
#include <x86intrin.h>
#define HAVE_CYCLES 1
static inline uint64_t cycles_now(void)
{
	return __rdtsc();
}
#elif defined(__aarch64__)
#define HAVE_CYCLES 1
static inline uint64_t cycles_now(void)
{
	uint64_t v;

	__asm__ volatile("mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#else
#define HAVE_CYCLES 0
static inline uint64_t cycles_now(void)
{
	return 0;
}
#endif
/* Its rate is measured over this long, busy, before each timed run. */
#define CYCLES_CAL_NS 20000000ull

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* [run-clock] */
/* A timed run's clock: the clock, or with --cycles the cycle counter on the
 * clock's scale. In integers: on an emulated CPU (the lab's VM) each
 * floating-point operation is a call into the emulator, and whatever the
 * loop does between two stamps is part of a sample. */
static inline uint64_t run_clock(const struct client *cl)
{
#if HAVE_CYCLES
	if (cl->o.cycles)
		return cl->cycles_ns0 + (uint64_t)(((unsigned __int128)(cycles_now() - cl->cycles0) *
		                                    cl->ns_per_cycle_q32) >>
		                                   32);
#endif
	return now_ns();
}
/* [run-clock] */

/* client_options.c */
int parse_command_line(struct options *o, int argc, char **argv);
size_t sizes(const struct options *o, uint32_t *out);
uint32_t largest(const struct options *o);
uint32_t signal_every(const struct options *o, uint32_t size);

/* client_conn.c */
int create_loop(struct client *cl);
int connect_all(struct client *cl);
void close_all(struct client *cl, bool failed);
int send_ctrl(struct qp *q, uint32_t imm);
int drive(struct client *cl, bool (*done)(struct client *), int timeout_ms, const char *what,
          bool watch);
bool all_ready(struct client *cl);
bool all_established(const struct client *cl);
bool all_results(struct client *cl);
int end_grants(struct client *cl);
int disconnect_all(struct client *cl, bool failed);
int release_everything(struct client *cl);

/* client_runs.c */
int post_recvs(struct qp *q, unsigned n);
void qp_step(struct qp *q);
/* client_lend.c: --lend. The latency QP's QP and CQ lent (or given back);
 * a ping posted, through the helper or on the lent QP; one poll of the lent CQ. */
int set_lent(struct client *cl, bool lend);
int post_ping(struct qp *q, struct ibv_send_wr *wr);
void lent_step(struct qp *q);
void qp_recv(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc);
void qp_done(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc);
int run_size(struct client *cl, uint32_t size, struct bench_row *row);
int post_list(struct qp *q, uint64_t k);
int look_at_loop(struct client *cl);

/* client_figures.c */
void mark(struct client *cl, uint64_t t);
double peak_rate(const struct client *cl);
double peak_rate_perftest(const struct client *cl);
int start_stamps(struct client *cl, uint64_t msgs);
int calibrate_cycles(struct client *cl);
int prepare_timing(struct client *cl, uint64_t n);
void end_timing(struct client *cl);
double cpu_seconds(const struct timeval *tv);
const struct bench_qp *fill_per_qp(const struct client *cl, uint64_t t0, struct bench_qp *out);
void server_cpu(const struct client *cl, struct bench_row *row);

/* client_load.c */
int run_load(struct client *cl, uint64_t count, uint64_t end_ns, struct bench_load *out);
void load_done(struct qp *q, uint64_t done);

#endif /* BENCH_CLIENT_H */
