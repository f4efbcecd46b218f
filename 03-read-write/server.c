/* SPDX-License-Identifier: MIT */
/**
 * \file server.c
 * \brief Chapter 03, the server: memory that a client reads and writes with
 *        one-sided RDMA operations, while the server's CPU does nothing.
 *
 * What it teaches: registering memory with remote access, and only the
 * access the chapter needs; describing that memory to the client (address,
 * length, rkey) in a fixed-width, versioned, network-byte-order descriptor
 * carried in the accept's private data; checking the client's request first;
 * granting RDMA READ through responder_resources; posting one receive before
 * accepting, for the client's "done" message; and checking afterwards that
 * the data arrived, though no work request of ours ever touched it.
 *
 * Run it, then 03-read-write-client, on an RDMA device (a NIC, or Soft-RoCE):
 *
 *     build/bin/03-read-write-server -a 10.77.0.1 [-p PORT] [-s SIZE] [-c CLIENTS]
 *
 * or, on a machine without RDMA, in the lab VM:
 *
 *     scripts/lab pair 'build/bin/03-read-write-server -a $RDMA_LAB_ADDR' \
 *                      'build/bin/03-read-write-client -a $RDMA_LAB_ADDR'
 *
 * -s is the most it grants one client. It serves one client, or -c CLIENTS
 * one after another (0: until killed). Exit status: 0 every client's data
 * arrived intact; 1 a client failed, its data did not arrive intact, or
 * something else failed (stderr says what); 2 bad command line; 77 no RDMA
 * device. The walkthrough is docs/03-read-write.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
#define PROGRAM "03-read-write-server"

/* The memory we offer, in bytes (-s): 64 MiB unless told otherwise. It is
 * allocated at start but registered, a client at a time, only as far as the
 * client asks. 1 GiB is the most: registered memory is pinned in RAM. */
#define DEFAULT_SIZE (64ull << 20)
#define MAX_SIZE     (1ull << 30)
/* The most clients -c accepts (0 means no limit). */
#define MAX_CLIENTS 1000000

/* How long we wait for the client's "done" message, in ms. The transfers take
 * as long as the client wants (-n times -s, at the link's speed: 200 MiB at
 * Soft-RoCE's 50 MiB/s under emulation is 4 s), and we see none of them.
 * A client that dies meanwhile is noticed at once all the same: its kernel
 * disconnects it, and we watch the CM's event channel while we wait. This
 * limit is for a client that stays connected and never says anything. */
#define DONE_TIMEOUT_MS (10 * 60 * 1000)
/* After the disconnect, how long a receive still posted may take to complete
 * as flushed, in ms: the device flushes at once; this is a backstop. */
#define FLUSH_TIMEOUT_MS 5000

/* Queue sizes: this server posts one receive and nothing else. */
#define SEND_DEPTH 1 /* a queue pair needs room for one request per queue */
#define RECV_DEPTH 1 /* the receive for the client's "done" */
#define CQ_ENTRIES (SEND_DEPTH + RECV_DEPTH)

/* RDMA READs from the client our device serves at once: the client keeps
 * one in flight. */
#define RESPONDER_RESOURCES 1

/* Access the client gets to the granted bytes: write and read, no atomics.
 * Remote write needs local write too (see register_buffer()). */
#define REMOTE_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
/* [constants] */

/* What we keep of one client, from its connect request to its teardown. */
struct session {
	struct rex_conn *conn;       /* queue pair, CQ, PD, CM id */
	struct rw_request request;   /* what it asked for, checked */
	struct ibv_mr *buffer_mr;    /* the granted bytes, remote access */
	struct rex_buffers done_buf; /* where its "done" lands: local write only */
	struct rw_done done;         /* its "done", checked */
	unsigned int outstanding;    /* receives posted, completion not yet seen */
	char granted[128];           /* what we gave it, for error messages */
};

struct server {
	struct rex_options opts;
	struct rex_conn_attr attr;     /* queue sizes and CM settings for each client */
	uint8_t *buffer;               /* -s bytes; the first ones go to each client */
	struct rex_listener *listener; /* bound to the port; sees connect requests */
	unsigned long served;          /* clients handled, well or not */
	unsigned long failed;          /* of those, the ones that failed */
};

/* "byte" or "bytes", so a count of 1 reads right. */
static const char *bytes_word(uint64_t n)
{
	return n == 1 ? "byte" : "bytes";
}

static int parse_command_line(struct server *s, int argc, char **argv)
{
	static const struct rex_options_spec spec = {
	    .program = PROGRAM,
	    .summary = "offer -s bytes of memory to 03-read-write-client, which writes and "
	               "reads them with RDMA; check that its data arrived",
	    .is_server = true,
	    .flags = REX_OPT_SIZE | REX_OPT_CLIENTS,
	    .defaults = {.size = DEFAULT_SIZE, .clients = 1},
	    .min_size = 1,
	    .max_size = MAX_SIZE,
	    .max_clients = MAX_CLIENTS,
	};

	/* Error messages end with hints about this project's flags and lab. */
	rex_error_set_hint_hook(rex_options_hint);
	return rex_options_parse(&spec, argc, argv, &s->opts, stdout, stderr);
}

/* [allocate-buffer] */
static int allocate_buffer(struct server *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (s->opts.size + page - 1) / page * page; /* -s, in whole pages */
	int ret;

	/* Registration pins whole pages. Page-aligned and rounded up to whole
	 * pages, the buffer has the pages it pins to itself: nothing that
	 * malloc() put next to it shares them. */
	ret = posix_memalign((void **)&s->buffer, page, len);
	if (ret) {
		rex_report_errno("posix_memalign", ret);
		return -ret;
	}
	return 0;
}
/* [allocate-buffer] */

/* [listen] */
static int listen_for_clients(struct server *s)
{
	/* Chapter 01 spelled this out; rex_conn does the same: event channel,
	 * id, bind, listen. */
	s->listener = rex_listener_create(s->opts.addr, s->opts.port);
	if (!s->listener)
		return -errno;
	printf("server: listening on %s, offering up to %llu %s\n", s->listener->name,
	       (unsigned long long)s->opts.size, bytes_word(s->opts.size));
	return 0;
}
/* [listen] */

/* [get-request] */
static int get_request(struct server *s, struct session *c)
{
	rex_conn_attr_default(&s->attr);
	s->attr.send_depth = SEND_DEPTH;
	s->attr.recv_depth = RECV_DEPTH;
	s->attr.cq_depth = CQ_ENTRIES;
	/* [responder-resources] */
	/*
	 * RDMA READ is the one operation where the *target's* device does
	 * work on the initiator's behalf: it reads our memory and sends it
	 * back. Each READ in flight takes one of our device's responder
	 * resources, and the CM agrees the number during the handshake: 0,
	 * the default, would make every READ of the client fail. (The client
	 * must ask too: a connect request with initiator_depth 0 makes our
	 * CM leave remote read out of our QP's access flags.)
	 */
	s->attr.responder_resources = RESPONDER_RESOURCES;
	s->attr.initiator_depth = 0; /* we read nothing from the client */
	/* [responder-resources] */

	/* Waits for a connect request; creates the PD, CQ and QP for it.
	 * ECONNABORTED: a request came, but its connection could not be set
	 * up (the memlock limit, say); the helper printed why and rejected
	 * the client. That client failed; the listener did not. */
	c->conn = rex_listener_get_request(s->listener, &s->attr);
	if (!c->conn)
		return -errno;
	printf("server: connect request from %s\n", c->conn->peer_name);
	return 0;
}
/* [get-request] */

/* [reject] */
static void reject_client(struct session *c, const char *why)
{
	uint8_t data[RW_REFUSAL_SIZE];
	struct rw_refusal refusal;

	/* The reason goes back in the reject's private data (at most 148 bytes). */
	rw_refusal_init(&refusal, why);
	rw_refusal_encode(&refusal, data);
	rex_conn_reject(c->conn, data, sizeof(data));
}
/* [reject] */

/* [check-request] */
static int check_request(struct server *s, struct session *c)
{
	char why[RW_WHY_SIZE];
	int ret;

	/* The request came in the connect request's private data (56 bytes,
	 * zero-padded). It is checked before anything is registered. */
	ret = rw_request_decode(c->conn->peer_data, c->conn->peer_data_len, s->opts.size,
	                        &c->request, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "server: rejecting %s: %s\n", c->conn->peer_name, why);
		reject_client(c, why);
		return ret;
	}
	printf("server: client asks for %llu %s\n", (unsigned long long)c->request.length,
	       bytes_word(c->request.length));
	/* What the client said about RDMA READ in the same request: 0 would
	 * leave remote read off our QP, and its READs would be refused. */
	rex_debug(s->opts.verbose, "server",
	          "the client asks to have up to %u RDMA READs in flight; we serve %d at once",
	          (unsigned)c->conn->peer_initiator_depth, RESPONDER_RESOURCES);
	return 0;
}
/* [check-request] */

/* [register-buffer] */
static int register_buffer(struct server *s, struct session *c)
{
	size_t length = c->request.length;
	int err;

	/* [register-mr] */
	/*
	 * The client may read these bytes: they must not hold anything an
	 * earlier client left in them.
	 */
	memset(s->buffer, 0, length);

	/*
	 * Registration pins the pages in RAM and gives the device their
	 * translation, so it can move data without the CPU. It returns two
	 * keys: the lkey, which our own work requests would name, and the
	 * rkey, which a peer names in its RDMA READs and WRITEs to get in.
	 *
	 * Only the bytes the client asked for, and only the access it needs:
	 * REMOTE_WRITE and REMOTE_READ for its WRITEs and READs, and
	 * LOCAL_WRITE because verbs requires it whenever REMOTE_WRITE is
	 * given (the device writes the memory on our behalf; ibv_reg_mr()
	 * fails with EINVAL without it). No REMOTE_ATOMIC: nobody needs it.
	 */
	c->buffer_mr = ibv_reg_mr(c->conn->pd, s->buffer, length, REMOTE_ACCESS);
	if (!c->buffer_mr) {
		err = errno;
		rex_report_reg_errno("ibv_reg_mr", err, length);
		reject_client(c, "the server could not register the memory");
		return -err;
	}
	printf("server: registered %zu %s for remote write and read: rkey 0x%08x\n", length,
	       bytes_word(length), c->buffer_mr->rkey);
	/* [register-mr] */
	rex_debug(s->opts.verbose, "server", "lkey 0x%08x, rkey 0x%08x", c->buffer_mr->lkey,
	          c->buffer_mr->rkey);
	snprintf(c->granted, sizeof(c->granted),
	         "%zu bytes at 0x%" PRIxPTR ", rkey 0x%08x, remote write and read; one receive "
	         "of %d bytes",
	         length, (uintptr_t)s->buffer, c->buffer_mr->rkey, RW_DONE_SIZE);
	return 0;
}
/* [register-buffer] */

/* [post-receive] */
static int post_done_receive(struct session *c)
{
	int ret;

	/* One receive, for the client's "done" message, with chapter 02's
	 * helper: registered memory of its own (local write: the device writes
	 * a received message into it), posted before we accept so it is there
	 * before the client can send (a SEND with no receive waiting is
	 * "receiver not ready"). */
	ret =
	    rex_buffers_create(&c->done_buf, c->conn->pd, 1, RW_DONE_SIZE, IBV_ACCESS_LOCAL_WRITE);
	if (ret) {
		reject_client(c, "the server could not register a receive buffer");
		return ret;
	}
	ret = rex_buffers_post_recv(c->conn->qp, &c->done_buf, 0, 1);
	if (ret) {
		reject_client(c, "the server could not post a receive");
		rex_buffers_destroy(&c->done_buf);
		return ret;
	}
	c->outstanding++;
	printf("server: receive posted for the client's done message\n");
	return 0;
}
/* [post-receive] */

/* [accept] */
static int accept_client(struct session *c)
{
	uint8_t data[RW_DESCRIPTOR_SIZE];
	struct rw_descriptor desc = {
	    /* The address is our virtual address: the client's device sends
	     * it back in each operation, and ours translates it through the
	     * memory region. */
	    .addr = (uintptr_t)c->buffer_mr->addr,
	    .length = c->buffer_mr->length,
	    /* The rkey, never the lkey: the lkey is for our own work requests,
	     * and a remote operation that names it is refused. */
	    .rkey = c->buffer_mr->rkey,
	};
	int ret;

	/* 28 bytes, in the accept's private data (196 bytes on IB and RoCE):
	 * the client has them before its connection is established. */
	rw_descriptor_encode(&desc, data);
	printf("server: accepting with descriptor: addr 0x%llx, length %llu, rkey 0x%08x\n",
	       (unsigned long long)desc.addr, (unsigned long long)desc.length, desc.rkey);
	ret = rex_conn_accept(c->conn, data, sizeof(data));
	if (ret)
		return ret;
	printf("server: connection established\n");
	return 0;
}
/* [accept] */

/* [wait-done] */
static int wait_for_done(struct server *s, struct session *c)
{
	char why[RW_WHY_SIZE];
	struct ibv_wc wc;
	int ret;

	/* [wait-done-cq] */
	/*
	 * From here on the client writes and reads our memory, and we are not
	 * involved: no work request of ours, no completion, no interrupt. The
	 * first thing we hear is its "done" message, a SEND that consumes our
	 * receive. rex_cq_wait_watch() (chapter 02) sleeps until it completes,
	 * or until the CM has news: a client that dies or leaves early sends no
	 * "done", only a disconnect.
	 */
	ret = rex_cq_wait_watch(c->conn->comp_channel, c->conn->cq, &wc, 1, DONE_TIMEOUT_MS,
	                        c->conn->channel->fd);
	if (ret > 0)
		c->outstanding -= (unsigned int)ret;
	if (ret == -ECONNRESET)
		fprintf(stderr, "server: client %s left before it said it was done\n",
		        c->conn->peer_name);
	/* [wait-done-cq] */
	if (ret < 0)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_peer_wc("receive of the done message", &wc, c->granted);
		return -EIO;
	}
	ret = rw_done_decode(rex_buffers_slot(&c->done_buf, 0), wc.byte_len, c->request.length,
	                     &c->done, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "server: bad done message from %s: %s\n", c->conn->peer_name, why);
		return ret;
	}
	rex_debug(s->opts.verbose, "server", "done message: %u bytes, seed 0x%08x", wc.byte_len,
	          c->done.seed);
	printf("server: client is done: %llu %s written\n", (unsigned long long)c->done.length,
	       bytes_word(c->done.length));
	return 0;
}
/* [wait-done] */

/* [check-data] */
static int check_data(struct server *s, struct session *c)
{
	uint64_t bad;

	/*
	 * The data came in while we slept. RC delivers in order, so the
	 * client's WRITEs, which all completed before it sent "done", are in
	 * our memory before the "done" is in our receive buffer. We check
	 * only once the QP has stopped, at the disconnect, not at "done":
	 * then every byte the client wrote, before its "done" or after it, is
	 * in what we check, and nothing can land behind the check.
	 */
	if (rw_pattern_check(s->buffer, c->done.length, c->done.seed, &bad)) {
		fprintf(stderr,
		        "server: data damaged: byte %llu is 0x%02x, expected 0x%02x "
		        "(pattern seed 0x%08x)\n",
		        (unsigned long long)bad, s->buffer[bad], rw_pattern_byte(c->done.seed, bad),
		        c->done.seed);
		return -EBADMSG;
	}
	printf("server: %llu %s arrived intact\n", (unsigned long long)c->done.length,
	       bytes_word(c->done.length));
	return 0;
}
/* [check-data] */

/* [wait-disconnect] */
static int wait_for_disconnect(struct session *c)
{
	int ret;

	/* The client disconnects when it is done. The helper answers its
	 * disconnect with rdma_disconnect(), which also moves our QP to the
	 * error state; a client that never disconnects is disconnected by the
	 * helper after the timeout. Either way no operation of the client's
	 * reaches our memory any more. */
	ret = rex_conn_wait_disconnect(c->conn);
	if (ret)
		return ret;
	printf("server: client disconnected\n");
	return 0;
}
/* [wait-disconnect] */

/* [teardown] */
/* Memory regions go before the connection: ibv_dealloc_pd() fails with
 * EBUSY while a region is still registered in the PD. */
static int deregister(struct ibv_mr *mr)
{
	int ret = ibv_dereg_mr(mr); /* returns an errno value */

	if (ret)
		rex_report_errno("ibv_dereg_mr", ret);
	return ret ? -ret : 0;
}
/* [teardown] */

/* [serve-client] */
/* Everything that happens to one client, in order; then its resources are
 * released, whatever happened. A failed client does not stop the server. */
static int serve_client(struct server *s)
{
	struct session c = {0};
	int ret;

	/* [serve-steps] */
	ret = get_request(s, &c);
	if (ret == -ECONNABORTED) {
		fprintf(stderr, "server: a client failed before it was accepted\n");
		s->served++;
		s->failed++;
		return 0; /* wait for the next one */
	}
	if (ret)
		return ret; /* the listener itself failed: stop */
	ret = check_request(s, &c);
	if (ret)
		goto out_destroy_conn;
	ret = register_buffer(s, &c);
	if (ret)
		goto out_destroy_conn;
	ret = post_done_receive(&c);
	if (ret)
		goto out_deregister_buffer;
	ret = accept_client(&c);
	if (ret)
		goto out_deregister_done;
	ret = wait_for_done(s, &c);
	if (wait_for_disconnect(&c) && ret == 0)
		ret = -ECONNRESET;
	if (ret == 0)
		ret = check_data(s, &c);
	/* [serve-steps] */

out_deregister_done:
	/* A receive still posted (no "done" came) completes as flushed now
	 * that the QP is in the error state; its buffer is the device's until
	 * then. If it never comes, leak the buffer rather than free it. */
	if (c.outstanding > 0 && rex_cq_drain(c.conn->cq, c.outstanding, FLUSH_TIMEOUT_MS)) {
		ret = ret ? ret : -ETIMEDOUT;
		goto out_deregister_buffer;
	}
	if (rex_buffers_destroy(&c.done_buf) && ret == 0)
		ret = -EBUSY;
out_deregister_buffer:
	if (deregister(c.buffer_mr) && ret == 0)
		ret = -EBUSY;
out_destroy_conn:
	s->served++;
	if (ret)
		fprintf(stderr, "server: client %s failed\n", c.conn->peer_name);
	if (rex_conn_destroy(c.conn) && !ret)
		ret = -EBUSY; /* a teardown failure is a failure too (printed) */
	if (ret)
		s->failed++;
	return 0;
}
/* [serve-client] */

/* [main] */
int main(int argc, char **argv)
{
	struct server s = {0};
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0); /* a line at a time, even into a file */
	ret = parse_command_line(&s, argc, argv);
	if (ret != REX_OPTIONS_OK)
		return ret == REX_OPTIONS_HELP ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	if (allocate_buffer(&s))
		goto out;
	if (listen_for_clients(&s))
		goto out_free_buffer;
	while (s.opts.clients == 0 || s.served < s.opts.clients) {
		if (serve_client(&s))
			goto out_destroy_listener;
	}
	printf("server: done: %lu client%s served, %lu failed\n", s.served,
	       s.served == 1 ? "" : "s", s.failed);
	status = s.failed ? REX_EXIT_FAILURE : REX_EXIT_OK;

out_destroy_listener:
	if (rex_listener_destroy(s.listener))
		status = REX_EXIT_FAILURE;
out_free_buffer:
	free(s.buffer);
out:
	return status;
}
/* [main] */
