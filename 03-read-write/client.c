/* SPDX-License-Identifier: MIT */
/**
 * \file client.c
 * \brief Chapter 03, the client: one-sided RDMA WRITE and READ into memory
 *        the server described, with no work by the server's CPU.
 *
 * What it teaches: asking for remote memory in the connect request's private
 * data and receiving its descriptor (address, length, rkey) in the accept's;
 * checking that descriptor before anything is posted; registering local
 * memory with the least access each buffer needs; RDMA WRITE and RDMA READ
 * work requests, where the scatter/gather entry names our memory with its
 * lkey and the remote address and rkey name the server's; initiator_depth,
 * which allows our READs; timing loops of each; and telling the server, with
 * one SEND, that it may look at its memory now.
 *
 * Run it against 03-read-write-server on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/03-read-write-server -a 10.77.0.1 &
 *     build/bin/03-read-write-client -a 10.77.0.1 [-s SIZE] [-n COUNT]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/03-read-write-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/03-read-write-client -a $RDMA_LAB_ADDR'
 *
 * Exit status: 0 the data went there and back intact; 1 something failed
 * (the message on stderr says what), including a descriptor we refused; 2
 * bad command line; 77 no RDMA device. The walkthrough is docs/03-read-write.md.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_buffers.h"
#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

/* [constants] */
#define PROGRAM "03-read-write-client"

/* Bytes each operation moves (-s): 1 MiB unless told otherwise, at most
 * 1 GiB. We hold two buffers of this size, both pinned in RAM. */
#define DEFAULT_SIZE (1ull << 20)
#define MAX_SIZE     (1ull << 30)
/* Operations in each timed loop (-n). */
#define DEFAULT_COUNT 100
#define MAX_COUNT     1000000

/* How long one operation may take, in ms: 10 s, plus 1 s per MiB (we assume
 * at least 1 MiB/s; Soft-RoCE under emulation does about 50). The transport
 * itself fails an operation the server does not answer, after its retries;
 * this is the backstop in case nothing ever completes. */
#define OP_TIMEOUT_BASE_MS    10000
#define OP_TIMEOUT_MS_PER_MIB 1000
/* After the disconnect, how long a work request still in flight may take to
 * complete as flushed, in ms: the device flushes at once; this is a backstop. */
#define FLUSH_TIMEOUT_MS 5000

/* Queue sizes: one RDMA operation in flight, then the "done" SEND. */
#define SEND_DEPTH 2
#define RECV_DEPTH 1 /* a queue pair needs room for one; we post none */
#define CQ_ENTRIES (SEND_DEPTH + RECV_DEPTH)

/* RDMA READs we keep in flight at once: one. The server's device must
 * agree to serve as many (its responder_resources). */
#define INITIATOR_DEPTH 1

#define MIB (1024.0 * 1024.0)
/* [constants] */

/* Work request ids: they say which operation a completion belongs to. */
enum { WR_WRITE = 1, WR_READ, WR_DONE };

/* Everything the client owns, created in this order, destroyed in reverse. */
struct client {
	struct rex_options opts;
	struct rex_conn_attr attr;
	uint8_t *source;          /* the pattern; what our WRITEs send */
	uint8_t *sink;            /* where our READs land */
	struct rex_conn *conn;    /* queue pair, CQ, PD, CM id */
	struct ibv_mr *source_mr; /* source: local read only (access 0) */
	struct ibv_mr *sink_mr;   /* sink: local write */
	struct rex_buffers done;     /* the "done" message: local read only */
	struct rw_descriptor remote; /* the server's memory, checked */
	uint32_t seed;               /* chooses the pattern */
	uint32_t max_msg;            /* the most bytes one work request moves */
	int op_timeout_ms;           /* OP_TIMEOUT_BASE_MS + OP_TIMEOUT_MS_PER_MIB * MiB */
	bool connected;              /* ESTABLISHED arrived: disconnect at the end */
	unsigned int outstanding;    /* work requests posted, completion not yet seen */
};

/* "byte" or "bytes", so a count of 1 reads right. */
static const char *bytes_word(uint64_t n)
{
	return n == 1 ? "byte" : "bytes";
}

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_command_line(struct client *c, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "RDMA WRITE a pattern into 03-read-write-server's memory, READ it "
	               "back, then time -n writes and -n reads of -s bytes",
	    .is_server = false,
	    .flags = REX_OPT_SIZE | REX_OPT_COUNT,
	    .defaults = {.size = DEFAULT_SIZE, .count = DEFAULT_COUNT},
	    .min_size = 1,
	    .max_size = MAX_SIZE,
	    .min_count = 1,
	    .max_count = MAX_COUNT,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &c->opts, stdout, stderr);
}

/* [allocate-buffers] */
static int allocate_buffers(struct client *c)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct timespec now;
	int ret;

	ret = posix_memalign((void **)&c->source, page, c->opts.size);
	if (ret) {
		rex_report_errno("posix_memalign", ret);
		return -ret;
	}
	ret = posix_memalign((void **)&c->sink, page, c->opts.size);
	if (ret) {
		rex_report_errno("posix_memalign", ret);
		goto out_free_source;
	}
	/* A new seed each run, so the server can never pass data an earlier
	 * run left behind. */
	clock_gettime(CLOCK_REALTIME, &now);
	c->seed = (uint32_t)now.tv_nsec ^ (uint32_t)getpid();
	rw_pattern_fill(c->source, c->opts.size, c->seed);
	memset(c->sink, 0, c->opts.size);
	c->op_timeout_ms = OP_TIMEOUT_BASE_MS +
	                   OP_TIMEOUT_MS_PER_MIB * (int)((c->opts.size + (1u << 20) - 1) >> 20);
	rex_debug(c->opts.verbose, "client", "pattern seed 0x%08x, %d ms per operation at most",
	          c->seed, c->op_timeout_ms);
	return 0;

out_free_source:
	free(c->source);
	c->source = NULL;
	return -ret;
}
/* [allocate-buffers] */

/* [create-connection] */
static int create_connection(struct client *c)
{
	struct ibv_port_attr port;
	int ret;

	rex_conn_attr_default(&c->attr);
	c->attr.send_depth = SEND_DEPTH;
	c->attr.recv_depth = RECV_DEPTH;
	c->attr.cq_depth = CQ_ENTRIES;
	/* [read-depth] */
	/* The READs we may have in flight. The CM tells the server's side in
	 * the connect request. 0, the default, makes our READs fail, though not
	 * through our own QP (librdmacm sets its READ depth from what the
	 * server grants): seeing 0, the server's CM leaves remote read out of
	 * its QP's access flags, and its device refuses every READ. */
	c->attr.initiator_depth = INITIATOR_DEPTH;
	c->attr.responder_resources = 0; /* the server reads nothing of ours */
	/* [read-depth] */

	/* Chapter 01's steps, as a helper: event channel, id, address and
	 * route resolution, protection domain, CQ with a completion channel,
	 * RC queue pair. */
	c->conn = rex_conn_create_client(c->opts.addr, c->opts.port, &c->attr);
	if (!c->conn)
		return -errno;

	/*
	 * One work request moves at most max_msg_sz bytes (8 MiB on
	 * Soft-RoCE; NICs usually allow 1 GiB or more): a transfer of -s
	 * bytes takes as many work requests as it needs, each at most this big.
	 */
	ret = ibv_query_port(c->conn->id->verbs, c->conn->id->port_num, &port);
	if (ret) {
		rex_report_errno("ibv_query_port", ret);
		ret = -ret;
		goto out_destroy_conn;
	}
	if (port.max_msg_sz == 0) {
		fprintf(stderr, "client: %s reports a largest message of 0 bytes\n",
		        ibv_get_device_name(c->conn->id->verbs->device));
		ret = -EINVAL;
		goto out_destroy_conn;
	}
	c->max_msg = port.max_msg_sz;
	printf("client: queue pair %u ready on %s, towards %s; at most %u bytes per work request\n",
	       c->conn->qp->qp_num, ibv_get_device_name(c->conn->id->verbs->device),
	       c->conn->peer_name, port.max_msg_sz);
	return 0;

out_destroy_conn:
	rex_conn_destroy(c->conn);
	c->conn = NULL;
	return ret;
}
/* [create-connection] */

/* [register-buffers] */
static int register_buffers(struct client *c)
{
	int err, ret;

	/* [register-mr] */
	/*
	 * Our buffers need no remote access at all: the server's device never
	 * touches them. The WRITE source is only read by our own device, and
	 * local read is always allowed, so access 0. The READ destination is
	 * written by our device when the data comes back: LOCAL_WRITE.
	 */
	c->source_mr = ibv_reg_mr(c->conn->pd, c->source, c->opts.size, 0);
	if (!c->source_mr) {
		err = errno;
		rex_report_reg_errno("ibv_reg_mr", err, c->opts.size);
		return -err;
	}
	c->sink_mr = ibv_reg_mr(c->conn->pd, c->sink, c->opts.size, IBV_ACCESS_LOCAL_WRITE);
	if (!c->sink_mr) {
		err = errno;
		rex_report_reg_errno("ibv_reg_mr", err, c->opts.size);
		goto out_deregister_source;
	}
	/* [register-mr] */
	/* The "done" message, sent with chapter 02's helper: page-aligned
	 * memory of its own, never the stack (registration pins whole pages). */
	err = -rex_buffers_create(&c->done, c->conn->pd, 1, RW_DONE_SIZE, 0);
	if (err)
		goto out_deregister_sink;
	printf("client: registered 2 x %llu %s: write source (local read), read "
	       "destination (local write)\n",
	       (unsigned long long)c->opts.size, bytes_word(c->opts.size));
	return 0;

out_deregister_sink:
	ret = ibv_dereg_mr(c->sink_mr); /* returns an errno value */
	if (ret)
		rex_report_errno("ibv_dereg_mr", ret);
	c->sink_mr = NULL;
out_deregister_source:
	ret = ibv_dereg_mr(c->source_mr);
	if (ret)
		rex_report_errno("ibv_dereg_mr", ret);
	c->source_mr = NULL;
	return -err;
}
/* [register-buffers] */

/* [explain-rejection] */
/* The server may have said why it refused us: a refusal in the reject's
 * private data. Like everything a peer sends, it is checked before use. */
static void explain_rejection(const struct client *c)
{
	struct rw_refusal refusal;
	char why[RW_WHY_SIZE];

	if (rw_refusal_decode(c->conn->peer_data, c->conn->peer_data_len, &refusal, why,
	                      sizeof(why)) == 0)
		fprintf(stderr, "client: the server refused: %s\n", refusal.text);
	else
		rex_debug(c->opts.verbose, "client", "no refusal in the reject: %s", why);
}
/* [explain-rejection] */

/* [connect] */
static int connect_to_server(struct client *c)
{
	struct rw_request request = {.length = c->opts.size};
	uint8_t data[RW_REQUEST_SIZE];
	int ret;

	/* What we ask for, in the connect request's private data (56 bytes). */
	rw_request_encode(&request, data);
	printf("client: connecting, asking for %llu %s\n", (unsigned long long)request.length,
	       bytes_word(request.length));
	ret = rex_conn_connect(c->conn, data, sizeof(data));
	if (ret == -ECONNREFUSED)
		explain_rejection(c);
	if (ret)
		return ret;
	c->connected = true;
	printf("client: connected\n");
	return 0;
}
/* [connect] */

/* [check-descriptor] */
static int check_descriptor(struct client *c)
{
	char why[RW_WHY_SIZE];
	int ret;

	/*
	 * The descriptor came in the accept's private data. Its address,
	 * length and rkey say where our device will write in the server's
	 * memory, so it is checked before a single work request is posted:
	 * what a server grants must be what we asked for, and must not wrap
	 * around the end of the address space.
	 */
	rex_debug(c->opts.verbose, "client", "the accept carried %u bytes of private data",
	          (unsigned)c->conn->peer_data_len);
	ret = rw_descriptor_decode(c->conn->peer_data, c->conn->peer_data_len, c->opts.size,
	                           &c->remote, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "client: refusing the server's descriptor: %s; nothing posted\n",
		        why);
		return ret;
	}
	printf("client: server grants %llu %s at 0x%llx, rkey 0x%08x\n",
	       (unsigned long long)c->remote.length, bytes_word(c->remote.length),
	       (unsigned long long)c->remote.addr, c->remote.rkey);
	return 0;
}
/* [check-descriptor] */

/* [wait-completion] */
/* Wait for the one work request in flight to complete, for at most
 * op_timeout_ms, and watch the connection's CM event channel meanwhile:
 * if the server dies, its kernel disconnects us, and the event ends the
 * wait at once instead of the timeout. */
static int wait_for_completion(struct client *c, struct ibv_wc *wc)
{
	int ret;

	ret = rex_cq_wait_watch(c->conn->comp_channel, c->conn->cq, wc, 1, c->op_timeout_ms,
	                        c->conn->channel->fd);
	if (ret > 0)
		c->outstanding -= (unsigned int)ret;
	if (ret == -ECONNRESET)
		fprintf(stderr, "client: the server went away (disconnected)\n");
	return ret;
}
/* [wait-completion] */

/* [post-rdma] */
/* Post one RDMA WRITE (local -> remote) or READ (remote -> local) of \p len
 * bytes at \p offset in both buffers, and wait for its completion. */
static int rdma_op(struct client *c, enum ibv_wr_opcode opcode, uint64_t offset, uint32_t len)
{
	/* [post-wr] */
	bool write = opcode == IBV_WR_RDMA_WRITE;
	struct ibv_mr *mr = write ? c->source_mr : c->sink_mr;
	struct ibv_sge sge = {
	    /* Our side: our address, and OUR key, the lkey of our region. */
	    .addr = (uintptr_t)mr->addr + offset,
	    .length = len,
	    .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
	    .wr_id = write ? WR_WRITE : WR_READ,
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = opcode,
	    /* A completion for every operation: we wait for each one. */
	    .send_flags = IBV_SEND_SIGNALED,
	    /* The server's side: its address and ITS key, the rkey from the
	     * descriptor. The server's device checks that the rkey is valid,
	     * allows this access and covers the whole range; our lkey would
	     * mean nothing there. */
	    .wr.rdma = {.remote_addr = c->remote.addr + offset, .rkey = c->remote.rkey},
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	ret = ibv_post_send(c->conn->qp, &wr, &bad);
	/* [post-wr] */
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	c->outstanding++;
	ret = wait_for_completion(c, &wc);
	if (ret < 0)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc(write ? "RDMA WRITE" : "RDMA READ", &wc);
		return -EIO;
	}
	return 0;
}
/* [post-rdma] */

/* [transfer] */
/* Move all -s bytes: one work request, or several when -s is more than one
 * can carry, one after the other. */
static int transfer(struct client *c, enum ibv_wr_opcode opcode)
{
	uint64_t offset;
	int ret;

	for (offset = 0; offset < c->opts.size; offset += c->max_msg) {
		uint64_t left = c->opts.size - offset;

		ret = rdma_op(c, opcode, offset, left < c->max_msg ? (uint32_t)left : c->max_msg);
		if (ret)
			return ret;
	}
	return 0;
}
/* [transfer] */

/* [write-read-back] */
static int write_and_read_back(struct client *c)
{
	uint64_t bad;
	int ret;

	/* Our pattern into the server's memory... */
	ret = transfer(c, IBV_WR_RDMA_WRITE);
	if (ret)
		return ret;
	/* ...and back again, into the other buffer. When a WRITE completes,
	 * the server's device has acknowledged the data; the READ that
	 * follows sees it. */
	ret = transfer(c, IBV_WR_RDMA_READ);
	if (ret)
		return ret;
	if (rw_pattern_check(c->sink, c->opts.size, c->seed, &bad)) {
		fprintf(stderr, "client: read back byte %llu as 0x%02x, wrote 0x%02x\n",
		        (unsigned long long)bad, c->sink[bad], c->source[bad]);
		return -EBADMSG;
	}
	printf("client: wrote %llu %s, read them back: intact\n", (unsigned long long)c->opts.size,
	       bytes_word(c->opts.size));
	return 0;
}
/* [write-read-back] */

/* [timed-loop] */
static int timed_loop(struct client *c, enum ibv_wr_opcode opcode, const char *name)
{
	double start, seconds;
	uint64_t i;
	int ret;

	/*
	 * One operation in flight at a time, each waited for: so the mean is
	 * the latency of one operation (including our wake-up through the
	 * completion channel), and bandwidth is what a single, patient
	 * initiator gets. Chapter 06 keeps many in flight.
	 */
	start = now_seconds();
	for (i = 0; i < c->opts.count; i++) {
		ret = transfer(c, opcode);
		if (ret)
			return ret;
	}
	seconds = now_seconds() - start;
	printf("client: %s: %llu x %llu %s in %.3f s: %.1f MiB/s, mean %.1f us\n", name,
	       (unsigned long long)c->opts.count, (unsigned long long)c->opts.size,
	       bytes_word(c->opts.size), seconds,
	       (double)c->opts.count * (double)c->opts.size / MIB / seconds,
	       seconds * 1e6 / (double)c->opts.count);
	return 0;
}
/* [timed-loop] */

/* [send-done] */
static int send_done(struct client *c)
{
	/* [post-done] */
	struct rw_done done = {.seed = c->seed, .length = c->remote.length};
	struct ibv_wc wc;
	int ret;

	/*
	 * The server saw none of our operations. A SEND, two-sided, consumes
	 * the receive it posted and wakes it: "look now; the pattern is the
	 * one for this seed". Every WRITE has completed before it, and RC
	 * keeps order, so the data is in place when the message is.
	 */
	rw_done_encode(&done, rex_buffers_slot(&c->done, 0));
	ret = rex_buffers_post_send(c->conn->qp, &c->done, 0, RW_DONE_SIZE, WR_DONE,
	                            IBV_SEND_SIGNALED);
	/* [post-done] */
	if (ret)
		return ret;
	c->outstanding++;
	ret = wait_for_completion(c, &wc);
	if (ret < 0)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("SEND of the done message", &wc);
		return -EIO;
	}
	printf("client: told the server we are done\n");
	return 0;
}
/* [send-done] */

/* [disconnect] */
static int disconnect(struct client *c)
{
	int ret;

	if (!c->connected)
		return 0;
	ret = rex_conn_disconnect(c->conn);
	if (ret)
		return ret;
	printf("client: disconnected\n");
	return 0;
}
/* [disconnect] */

/* [teardown] */
/* Memory regions go before the connection: ibv_dealloc_pd() fails with
 * EBUSY while a region is still registered in the PD. */
static int deregister_buffers(struct client *c)
{
	struct ibv_mr *mrs[] = {c->sink_mr, c->source_mr};
	int errors = 0;
	size_t i;

	/* After the disconnect the QP is in the error state: an operation that
	 * was still in flight (we gave up waiting for it) completes as flushed,
	 * and its buffer is the device's until then. Leak rather than free it
	 * under the device if that never comes. */
	if (c->outstanding > 0 && rex_cq_drain(c->conn->cq, c->outstanding, FLUSH_TIMEOUT_MS))
		return -ETIMEDOUT;
	if (rex_buffers_destroy(&c->done))
		errors++;
	for (i = 0; i < sizeof(mrs) / sizeof(mrs[0]); i++) {
		int ret = ibv_dereg_mr(mrs[i]); /* returns an errno value */

		if (ret) {
			rex_report_errno("ibv_dereg_mr", ret);
			errors++;
			/* The device may still own that memory: it must never go
			 * back to malloc, so free_buffers() leaves it alone. */
			if (mrs[i] == c->sink_mr)
				c->sink = NULL;
			else if (mrs[i] == c->source_mr)
				c->source = NULL;
		}
	}
	return errors ? -EBUSY : 0;
}

static void free_buffers(struct client *c)
{
	free(c->sink);
	free(c->source);
}
/* [teardown] */

/* [main] */
int main(int argc, char **argv)
{
	struct client c = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&c, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	/* [steps] */
	if (allocate_buffers(&c))
		goto out;
	if (create_connection(&c))
		goto out_free_buffers;
	if (register_buffers(&c))
		goto out_destroy_connection;
	if (connect_to_server(&c))
		goto out_deregister_buffers;
	if (check_descriptor(&c))
		goto out_disconnect;
	if (write_and_read_back(&c))
		goto out_disconnect;
	if (timed_loop(&c, IBV_WR_RDMA_WRITE, "write"))
		goto out_disconnect;
	if (timed_loop(&c, IBV_WR_RDMA_READ, "read"))
		goto out_disconnect;
	if (send_done(&c))
		goto out_disconnect;
	status = REX_EXIT_OK;
	/* [steps] */

out_disconnect:
	if (disconnect(&c))
		status = REX_EXIT_FAILURE;
out_deregister_buffers:
	if (deregister_buffers(&c))
		status = REX_EXIT_FAILURE;
out_destroy_connection:
	if (rex_conn_destroy(c.conn))
		status = REX_EXIT_FAILURE;
out_free_buffers:
	free_buffers(&c);
out:
	return status;
}
/* [main] */
