/* SPDX-License-Identifier: MIT */
/*
 * grant-client: a hostile client for 06-mr-pool-server's grants.
 *
 * It connects as a WRITE client would (a window of 64 bytes, remote write
 * only), and runs once as an honest client: START, READY (the server's bind
 * has completed), 64 bytes of the benchmark's pattern WRITTEN into its
 * window, DONE, and the server's RESULT, which must say the data arrived
 * intact. Then it tries one access it was not granted, and prints how it
 * ended:
 *
 *   --case good        8 more bytes into its own window: the control case,
 *                      which must land
 *   --case other       8 bytes into another live session's window, given by
 *                      --rkey and --addr (the server's -v line names them)
 *   --case stale       END, the server's ENDED, then 8 bytes into its own
 *                      window with its old key
 *   --case stale-inv   the same, but its own SEND WITH INVALIDATE revokes the key
 *   --case lease       waits for the server's ENDED that its lease (-L) ran
 *                      out, then 8 bytes into its own window
 *   --case past-end    16 bytes at 8 bytes before its window's end: half of
 *                      them past it
 *   --case write       it asks for a READ session instead (a window of remote
 *                      read only), then WRITES 8 bytes through it
 *
 * Or, instead of a case, a peer that misbehaves in the control protocol
 * itself (issue 33's hostile peers), at one STEP of its honest run:
 *
 *   --quit-at STEP     disconnects there and exits 0 ("quit at STEP")
 *   --silent-at STEP   stops there: takes nothing more from its CQ and
 *                      posts no receive again, until the server ends the
 *                      session (its probes, then RNR); exit 0 once the
 *                      server disconnected it, 1 if it did not in 60 s
 *   --end-twice        after the honest run: END twice at once; whatever
 *                      the server makes of the second, it must end the
 *                      session (exit 0 once it disconnected us)
 *
 * STEP: hello (connected, before START), start (START sent, READY not
 * read), ready (READY read), write (our WRITE posted, not complete), done
 * (DONE sent, the results not read), result (RESULT read), end (END sent,
 * ENDED not read).
 *
 * (An RDMA READ through a write-only window would test the same check, but
 * it never leaves: the server grants a WRITE session no responder
 * resources, so rdma_cm gives our QP none to send a READ with.)
 *
 * It prints one line "grant-client: CASE: OP ... : STATUS", where STATUS is
 * the completion's status name and text. When the access was refused, the
 * server's QP has stopped too, and it waits for the server to disconnect
 * it ("the server disconnected us"); otherwise it disconnects.
 *
 * Exit 0 when the access was refused with IBV_WC_REM_ACCESS_ERR (or, for
 * good, landed); 1 when it landed where it should not have, or anything
 * else went wrong; 2 bad command line; 77 no RDMA device.
 *
 *   grant-client -a ADDR -p PORT --case CASE [--rkey RKEY --addr ADDR]
 *   grant-client -a ADDR -p PORT --quit-at STEP | --silent-at STEP | --end-twice
 */
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "bench_wire.h"
#include "rex_buffers.h"
#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"

#define PROGRAM "grant-client"
#define WINDOW  64u   /* the bytes it asks for */
#define WAIT_MS 10000 /* a control answer, a completion */
#define RECVS   8     /* receives kept posted for control messages */

enum which { GOOD, OTHER, STALE, STALE_INV, LEASE, PAST_END, WRITE_TO_READ };
static const char *const names[] = {"good",  "other",    "stale", "stale-inv",
                                    "lease", "past-end", "write"};

enum step { HELLO, START, READY, WRITE, DONE, RESULT, END, NO_STEP };
static const char *const steps[] = {"hello", "start", "ready", "write", "done", "result", "end"};

/* Where a hostile run stops, and how (see the top). */
static struct {
	enum step at;
	bool silent, end_twice;
} hostile = {NO_STEP, false, false};

/* Whether the run stops at \p step. */
static bool stop_at(enum step step)
{
	return hostile.at == step;
}

struct options {
	const char *addr;
	uint16_t port;
	int which;
	uint64_t rkey, remote;
	bool rkey_set, remote_set;
};

static bool parse_hex(const char *text, uint64_t max, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(text, &end, 16);
	return errno == 0 && end != text && *end == 0 && *v <= max;
}

static int parse(int argc, char **argv, struct options *o)
{
	static const struct option longs[] = {{"case", required_argument, NULL, 'c'},
	                                      {"rkey", required_argument, NULL, 'r'},
	                                      {"addr", required_argument, NULL, 'A'},
	                                      {"quit-at", required_argument, NULL, 'q'},
	                                      {"silent-at", required_argument, NULL, 's'},
	                                      {"end-twice", no_argument, NULL, 'e'},
	                                      {NULL, 0, NULL, 0}};
	uint64_t v;
	int opt, i;

	o->which = -1;
	o->port = REX_DEFAULT_PORT;
	while ((opt = getopt_long(argc, argv, "a:p:", longs, NULL)) != -1) {
		switch (opt) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (rex_parse_uint(optarg, 1, 65535, &v))
				goto bad;
			o->port = (uint16_t)v;
			break;
		case 'c':
			for (i = 0; i < (int)(sizeof(names) / sizeof(names[0])); i++)
				if (strcmp(optarg, names[i]) == 0)
					o->which = i;
			break;
		case 'r': /* as the server's -v line prints them: hexadecimal */
			o->rkey_set = parse_hex(optarg, UINT32_MAX, &o->rkey);
			break;
		case 'A':
			o->remote_set = parse_hex(optarg, UINT64_MAX, &o->remote);
			break;
		case 'q':
		case 's':
			for (i = 0; i < NO_STEP; i++)
				if (strcmp(optarg, steps[i]) == 0)
					hostile.at = (enum step)i;
			if (hostile.at == NO_STEP)
				goto bad;
			hostile.silent = opt == 's';
			o->which = GOOD; /* the honest run, up to the step */
			break;
		case 'e':
			hostile.end_twice = true;
			o->which = GOOD;
			break;
		default:
			goto bad;
		}
	}
	if (o->addr && o->which >= 0 && optind == argc &&
	    (o->which != OTHER || (o->rkey_set && o->remote_set)))
		return 0;
bad:
	fprintf(stderr,
	        "usage: %s -a ADDR -p PORT --case good|other|stale|stale-inv|lease|"
	        "past-end|read [--rkey RKEY --addr ADDR]\n"
	        "       %s -a ADDR -p PORT --quit-at STEP | --silent-at STEP | --end-twice\n"
	        "       (STEP: hello, start, ready, write, done, result, end)\n",
	        PROGRAM, PROGRAM);
	return -EINVAL;
}

/* Post \p wr signalled, and take its completion. */
/* Work request ids: our sends, and the receives kept posted. */
#define SEND_ID 2
#define RECV_ID 1

/* Receive completions that came before the send completion post_wait() was
 * waiting for. The server answers a message as soon as it arrives, and
 * Soft-RoCE may put that answer's receive completion in our CQ before the
 * completion of our own send (its ACK is handled by another task): under
 * load the two came in that order. control() takes these first, in order. */
static struct {
	struct ibv_wc wc[RECVS];
	int n;
} early;

/* Posts one signalled work request and waits for its own completion. */
static int post_wait(struct rex_conn *conn, struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;
	int ret;

	wr->wr_id = SEND_ID;
	wr->send_flags |= IBV_SEND_SIGNALED;
	ret = ibv_post_send(conn->qp, wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	for (;;) {
		ret = rex_cq_wait(conn->comp_channel, conn->cq, wc, 1, WAIT_MS);
		if (ret < 0)
			return ret;
		if (wc->wr_id == SEND_ID)
			return 0;
		if (early.n == RECVS) {
			fprintf(stderr, "%s: more than %d messages before our send completed\n",
			        PROGRAM, RECVS);
			return -EPROTO;
		}
		early.wc[early.n++] = *wc;
	}
}

/* Zero-length receives for the server's control messages, which can come
 * three at once (CPU_USER, CPU_SYS, RESULT): one posted per one taken. */
static int post_recvs(struct rex_conn *conn, int n)
{
	struct ibv_recv_wr rwr = {.wr_id = RECV_ID}, *rbad;
	int ret = 0;

	while (n-- > 0 && ret == 0)
		ret = ibv_post_recv(conn->qp, &rwr, &rbad);
	if (ret)
		rex_report_errno("ibv_post_recv", ret);
	return -ret;
}

/* A control message (NULL: none), and the server's answer of type \p want
 * (its value in \p value). */
static int control(struct rex_conn *conn, struct ibv_send_wr *wr, unsigned want, uint32_t *value)
{
	struct ibv_wc wc;
	int ret;

	if (wr && (ret = post_wait(conn, wr, &wc)) != 0)
		return ret;
	if (wr && wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("control message", &wc);
		return -EIO;
	}
	do { /* the server's ALIVE probes: taken and posted again */
		if (early.n > 0) {
			wc = early.wc[0];
			memmove(early.wc, early.wc + 1, (size_t)--early.n * sizeof(early.wc[0]));
		} else {
			ret = rex_cq_wait(conn->comp_channel, conn->cq, &wc, 1, WAIT_MS);
			if (ret < 0)
				return ret;
		}
	} while (wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_IMM) &&
	         bench_ctrl_type(be32toh(wc.imm_data)) == BENCH_CTRL_ALIVE &&
	         post_recvs(conn, 1) == 0);
	if (wc.status != IBV_WC_SUCCESS || !(wc.wc_flags & IBV_WC_WITH_IMM) ||
	    bench_ctrl_type(be32toh(wc.imm_data)) != want) {
		fprintf(stderr, "%s: not the answer expected (status %s)\n", PROGRAM,
		        ibv_wc_status_str(wc.status));
		return -EPROTO;
	}
	*value = bench_ctrl_value(be32toh(wc.imm_data));
	return post_recvs(conn, 1);
}

static struct ibv_send_wr imm_wr(unsigned type, uint32_t value)
{
	return (struct ibv_send_wr){.opcode = IBV_WR_SEND_WITH_IMM,
	                            .imm_data = htobe32(bench_ctrl_imm(type, value))};
}

/* One honest run: START, READY (the bind has completed), our pattern into
 * the window (a WRITE session), DONE, and the server's verdict. */
static int honest_run(struct rex_conn *conn, struct rex_buffers *src, const struct bench_accept *a,
                      bool write)
{
	struct ibv_send_wr wr = imm_wr(BENCH_CTRL_START, WINDOW);
	struct ibv_sge sge = {.addr = (uintptr_t)src->mem, .length = WINDOW, .lkey = src->mr->lkey};
	struct ibv_send_wr data = {.sg_list = &sge,
	                           .num_sge = 1,
	                           .opcode = IBV_WR_RDMA_WRITE,
	                           .wr.rdma = {.remote_addr = a->addr, .rkey = a->rkey}};
	struct ibv_wc wc;
	uint32_t v;
	int ret;

	if (stop_at(START)) /* START sent, READY not read */
		return post_wait(conn, &wr, &wc);
	if ((ret = control(conn, &wr, BENCH_CTRL_READY, &v)) != 0 || stop_at(READY))
		return ret;
	if (write) {
		bench_pattern_fill(src->mem, WINDOW, bench_seed(0, WINDOW, 0));
		if (stop_at(WRITE)) { /* posted, and left there */
			struct ibv_send_wr *bad;

			ret = ibv_post_send(conn->qp, &data, &bad);
			return -ret;
		}
		if ((ret = post_wait(conn, &data, &wc)) != 0)
			return ret;
		if (wc.status != IBV_WC_SUCCESS) {
			rex_report_wc("our own WRITE into our window", &wc);
			return -EIO;
		}
	}
	wr = imm_wr(BENCH_CTRL_DONE, 0);
	if (stop_at(DONE))
		return post_wait(conn, &wr, &wc);
	if ((ret = control(conn, &wr, BENCH_CTRL_CPU_USER, &v)) != 0 ||
	    (ret = control(conn, NULL, BENCH_CTRL_CPU_SYS, &v)) != 0 ||
	    (ret = control(conn, NULL, BENCH_CTRL_RESULT, &v)) != 0)
		return ret;
	if (v != 0 && v != BENCH_RESULT_NA) {
		fprintf(stderr, "%s: the server found our data different (RESULT %" PRIu32 ")\n",
		        PROGRAM, v);
		return -EIO;
	}
	return 0;
}

/* Before the access: the honest run, and for the stale cases the end of
 * the grant. */
static int prepare(const struct options *o, struct rex_conn *conn, struct rex_buffers *src,
                   const struct bench_accept *a)
{
	struct ibv_send_wr wr = imm_wr(BENCH_CTRL_END, 0);
	struct ibv_send_wr inv = {.opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = a->rkey};
	uint32_t v;
	int ret;

	ret = honest_run(conn, src, a, o->which != WRITE_TO_READ);
	if (ret || (o->which != STALE && o->which != STALE_INV && o->which != LEASE))
		return ret;
	if (o->which == LEASE) {
		ret = control(conn, NULL, BENCH_CTRL_ENDED, &v);
		if (ret == 0)
			printf("%s: lease: the server revoked our rkey 0x%08" PRIx32
			       " after its lease of %" PRIu32 " ms (ENDED %" PRIu32 ")\n",
			       PROGRAM, a->rkey, a->lease_ms, v);
		return ret;
	}
	ret = control(conn, o->which == STALE ? &wr : &inv, BENCH_CTRL_ENDED, &v);
	if (ret == 0)
		printf("%s: %s: rkey 0x%08" PRIx32 " revoked (%s), ENDED %" PRIu32 "\n", PROGRAM,
		       names[o->which], a->rkey,
		       o->which == STALE ? "END: the server's local invalidate"
		                         : "our SEND WITH INVALIDATE",
		       v);
	return ret;
}

/* A hostile run's end: quit (disconnect), or go silent until the server
 * ends the session. Returns the exit status. */
static int hostile_end(struct rex_conn *conn)
{
	const char *step = steps[hostile.at];
	struct timespec t0, t1;

	if (!hostile.silent) {
		printf("%s: quit at %s\n", PROGRAM, step);
		return rex_conn_disconnect(conn) ? REX_EXIT_FAILURE : REX_EXIT_OK;
	}
	printf("%s: silent at %s\n", PROGRAM, step);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (rex_conn_wait_disconnect(conn)) {
		fprintf(stderr, "%s: silent at %s: the server did not end the session in %d ms\n",
		        PROGRAM, step, conn->attr.disconnect_timeout_ms);
		return REX_EXIT_FAILURE;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%s: silent at %s: the server disconnected us after %ld ms\n", PROGRAM, step,
	       (long)((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000));
	return REX_EXIT_OK;
}

/* END twice, back to back: however the server takes the second (06's calls
 * it a protocol error), it must end the session; we wait for its disconnect. */
static int end_twice(struct rex_conn *conn)
{
	struct ibv_send_wr wr = imm_wr(BENCH_CTRL_END, 0);
	struct ibv_wc wc;
	int ret;

	if ((ret = post_wait(conn, &wr, &wc)) != 0)
		return ret;
	wr = imm_wr(BENCH_CTRL_END, 0);
	if ((ret = post_wait(conn, &wr, &wc)) != 0)
		return ret;
	if (rex_conn_wait_disconnect(conn)) {
		fprintf(stderr, "%s: end-twice: the server did not end the session\n", PROGRAM);
		return -ETIMEDOUT;
	}
	printf("%s: end-twice: the server ended the session\n", PROGRAM);
	return 0;
}

/* [misbehave] */
static int misbehave(const struct options *o, struct rex_conn *conn, struct rex_buffers *src,
                     const struct bench_accept *a, bool *refused)
{
	uint64_t remote = o->which == OTHER      ? o->remote
	                  : o->which == PAST_END ? a->addr + a->length - 8
	                                         : a->addr;
	uint32_t rkey = o->which == OTHER ? (uint32_t)o->rkey : a->rkey;
	uint32_t len = o->which == PAST_END ? 16 : 8;
	struct ibv_sge sge = {.addr = (uintptr_t)src->mem, .length = len, .lkey = src->mr->lkey};
	struct ibv_send_wr wr = {.sg_list = &sge,
	                         .num_sge = 1,
	                         .opcode = IBV_WR_RDMA_WRITE,
	                         .wr.rdma = {.remote_addr = remote, .rkey = rkey}};
	struct ibv_wc wc;
	int ret;

	memset(src->mem, 0xee, len);
	ret = post_wait(conn, &wr, &wc);
	if (ret)
		return ret;
	*refused = wc.status == IBV_WC_REM_ACCESS_ERR;
	printf("%s: %s: %s %" PRIu32 " B at 0x%" PRIx64 " (window 0x%" PRIx64 "+%" PRIu32
	       "), rkey 0x%08" PRIx32 ": %s (%s)\n",
	       PROGRAM, names[o->which], "WRITE", len, remote, a->addr, a->length, rkey,
	       ibv_wc_status_str(wc.status), wc.status == IBV_WC_SUCCESS ? "it landed" : "refused");
	if (o->which == GOOD)
		return wc.status == IBV_WC_SUCCESS ? 0 : -EIO;
	return wc.status == IBV_WC_REM_ACCESS_ERR ? 0 : -EACCES;
}
/* [misbehave] */

int main(int argc, char **argv)
{
	struct options o = {0};
	struct bench_hello h = {
	    .op = BENCH_OP_WRITE, .mode = BENCH_MODE_BW, .max_size = WINDOW, .depth = 1, .qps = 1};
	uint8_t hello[BENCH_HELLO_LEN];
	struct bench_accept a;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct rex_buffers src = {0};
	char why[BENCH_WHY_SIZE];
	int status = REX_EXIT_FAILURE;
	bool refused = false;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse(argc, argv, &o))
		return REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;
	rex_conn_attr_default(&attr);
	if (hostile.silent)
		attr.disconnect_timeout_ms = 60000; /* the server's probes: ~10 s */
	if (o.which == WRITE_TO_READ)
		h.op = BENCH_OP_READ; /* a window of remote read only */
	conn = rex_conn_create_client(o.addr, o.port, &attr);
	if (!conn)
		return REX_EXIT_FAILURE;
	if (rex_buffers_create(&src, conn->pd, 1, 64, IBV_ACCESS_LOCAL_WRITE))
		goto out_destroy_conn;
	bench_hello_encode(&h, hello);
	if (post_recvs(conn, RECVS) || rex_conn_connect(conn, hello, sizeof(hello)))
		goto out_deregister;
	if (bench_accept_decode(conn->peer_data, conn->peer_data_len, &a, why, sizeof(why))) {
		fprintf(stderr, "%s: bad accept: %s\n", PROGRAM, why);
		goto out_disconnect;
	}
	if (hostile.at != NO_STEP || hostile.end_twice) {
		struct ibv_send_wr end = imm_wr(BENCH_CTRL_END, 0);
		struct ibv_wc wc;

		if (hostile.end_twice) {
			if (honest_run(conn, &src, &a, true) == 0 && end_twice(conn) == 0) {
				status = REX_EXIT_OK;
				goto out_deregister; /* the disconnect is answered */
			}
			goto out_disconnect;
		}
		if ((stop_at(HELLO) || honest_run(conn, &src, &a, true) == 0) &&
		    (!stop_at(END) || post_wait(conn, &end, &wc) == 0)) {
			status = hostile_end(conn);
			goto out_deregister;
		}
		goto out_disconnect;
	}
	if (prepare(&o, conn, &src, &a) == 0 && misbehave(&o, conn, &src, &a, &refused) == 0)
		status = REX_EXIT_OK;
	/* A refused access stopped the server's QP as well, and the server
	 * ends the connection: we answer its disconnect. Disconnecting
	 * ourselves then would cross its request (under load the CM answered
	 * ours with a REJ). */
	if (refused) {
		if (rex_conn_wait_disconnect(conn))
			status = REX_EXIT_FAILURE;
		else
			printf("%s: the server disconnected us\n", PROGRAM);
		goto out_deregister;
	}
out_disconnect:
	/* The helper stops our QP whatever the server did; nothing is left
	 * outstanding (each work request was waited for, or its QP failed). */
	if (rex_conn_disconnect(conn))
		status = REX_EXIT_FAILURE;
out_deregister:
	if (rex_buffers_destroy(&src))
		status = REX_EXIT_FAILURE;
out_destroy_conn:
	if (rex_conn_destroy(conn))
		status = REX_EXIT_FAILURE;
	return status;
}
