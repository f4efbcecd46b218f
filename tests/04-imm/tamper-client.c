/* SPDX-License-Identifier: MIT */
/*
 * tamper-client: a hostile client for 04-imm-server.
 *
 * It connects and checks the ring's descriptor like 04-imm-client, then
 * sends one RDMA WRITE WITH IMM whose immediate breaks a rule. The WRITE's
 * data always lands inside the ring (the rkey opens all of it), so the
 * server's device accepts it; only the immediate is wrong, and only the
 * server's check of it can stop the server from reading where it should not:
 *
 *   --tamper slot      8 bytes into slot 0, but the immediate names the slot
 *                      one past the last
 *   --tamper length    8 bytes into slot 0, but the immediate claims one byte
 *                      more than a slot holds
 *   --tamper not-held  message 0 into slot 0 (a good one), then the same
 *                      bytes into slot 0 again, before the server gave it
 *                      back: whenever the server reads the slot, it finds
 *                      message 0 intact, and only the immediate gives the
 *                      client away
 *   --tamper overwrite message 0 into slot 0, then message 1 into slot 0
 *                      again: the second WRITE may land before the server
 *                      has read the first, so the server finds either
 *                      message 0 damaged, or the immediate not the client's
 *   --tamper order     8 bytes into slot 1 first, though slot 0 comes first
 *   --tamper send-data a SEND WITH IMM that carries 8 bytes: the server's
 *                      receives have no memory, so it cannot land
 *   --tamper write-past a plain WRITE of 8 bytes just past the ring's pages:
 *                      the server's device refuses it as responder
 *
 * Then it waits for the server to cut it off. Exit 0 when the server
 * disconnected it, 1 otherwise.
 *
 * Four more end the session themselves, as an honest client does, with a
 * disconnect:
 *
 *   --tamper read             an RDMA READ of 8 bytes of the ring, which the
 *                             server grants no READ for; we wait 2 s for it,
 *                             then say what our QP may have in flight
 *
 *   --tamper after-done       message 0 into slot 0, then "done" and, posted
 *                             right behind it, message 1 into slot 1: a WRITE
 *                             WITH IMM that would be good but for the "done"
 *   --tamper after-done-later the same, but message 1 leaves 300 ms after the
 *                             "done" completed, while the server waits for our
 *                             disconnect
 *   --tamper byte-len         message 0 into slot 0 by a plain WRITE, then a
 *                             WRITE WITH IMM of its first 8 bytes only, whose
 *                             immediate names the whole message, then "done":
 *                             the slot holds message 0 intact, and only
 *                             byte_len (8) gives the client away (exercise
 *                             04-byte-len; the server as shipped takes it)
 *
 * Exit 0 when every work request of ours completed well (the server took it
 * all: only its verdict tells) and we disconnected, 1 otherwise.
 *
 * Exit 2: bad command line; 77: no RDMA device.
 *
 *   tamper-client -a ADDR [-p PORT] [-s SIZE] --tamper WHAT
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "hostile.h"
#include "rex_buffers.h"
#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

#define PROGRAM "tamper-client"
/* How long a WRITE, and then the server's disconnect, may take, in ms. */
#define WAIT_MS 10000

enum tamper {
	TAMPER_SLOT,
	TAMPER_LENGTH,
	TAMPER_NOT_HELD,
	TAMPER_OVERWRITE,
	TAMPER_ORDER,
	TAMPER_SEND_DATA,
	TAMPER_WRITE_PAST,
	TAMPER_READ,
	TAMPER_AFTER_DONE,
	TAMPER_AFTER_DONE_LATER,
	TAMPER_BYTE_LEN,
};
static const char *const names[] = {"slot",       "length",           "not-held",   "overwrite",
                                    "order",      "send-data",        "write-past", "read",
                                    "after-done", "after-done-later", "byte-len"};
/* The server registers its ring in whole pages (rex_buffers): a WRITE past
 * the ring but inside its last page lands. 4 KiB pages, as in the lab. */
#define SERVER_PAGE 4096u
/* How long a READ may take before we look at why it has not come back. */
#define READ_WAIT_MS 2000

/* Post \p wr (signalled) and wait up to \p timeout_ms for its completion.
 * \return 0 with the completion in \p wc, or a negative errno (printed). */
static int post_and_wait(struct rex_conn *conn, struct ibv_send_wr *wr, struct ibv_wc *wc,
                         int timeout_ms, unsigned int *outstanding)
{
	struct ibv_send_wr *bad;
	int ret;

	ret = ibv_post_send(conn->qp, wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	(*outstanding)++;
	ret = rex_cq_wait(conn->comp_channel, conn->cq, wc, 1, timeout_ms);
	if (ret < 0)
		return ret;
	(*outstanding)--;
	return 0;
}

/* One WRITE WITH IMM of message \p seq (len bytes, from our buffer) into
 * \p slot, with the immediate \p imm, and its completion. */
static int write_imm(struct rex_conn *conn, const struct rex_buffers *src,
                     const struct im_descriptor *ring, uint32_t slot, uint32_t len, uint64_t seq,
                     __be32 imm, unsigned int *outstanding)
{
	struct ibv_sge sge = {.addr = (uintptr_t)src->mem, .length = len, .lkey = src->mr->lkey};
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .wr.rdma = {.remote_addr = ring->addr + (uint64_t)slot * ring->slot_size,
	                .rkey = ring->rkey},
	    .imm_data = imm,
	};
	struct ibv_wc wc;
	int ret;

	im_pattern_fill(src->mem, len, seq);
	ret = post_and_wait(conn, &wr, &wc, WAIT_MS, outstanding);
	if (ret)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("RDMA WRITE WITH IMM", &wc);
		return -EIO;
	}
	printf("%s: wrote %u bytes into slot %u with immediate 0x%08x\n", PROGRAM, (unsigned)len,
	       (unsigned)slot, (unsigned)ntohl(imm));
	return 0;
}

/* A SEND WITH IMM with \p len bytes of data, where the server expects none.
 * Its completion may fail (the server's receive cannot take the data): that
 * is the point, so it is printed, not treated as our failure. */
static int send_with_data(struct rex_conn *conn, const struct rex_buffers *src, uint32_t len,
                          unsigned int *outstanding)
{
	struct ibv_sge sge = {.addr = (uintptr_t)src->mem, .length = len, .lkey = src->mr->lkey};
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = im_done_encode(0),
	};
	struct ibv_wc wc;
	int ret;

	ret = post_and_wait(conn, &wr, &wc, WAIT_MS, outstanding);
	if (ret)
		return ret;
	printf("%s: SEND WITH IMM of %u bytes: %s\n", PROGRAM, (unsigned)len,
	       ibv_wc_status_str(wc.status));
	return 0;
}

/* The READ did not complete: say what our QP may have in flight. rdma_cm
 * sets it from the server's accept (its responder_resources): with 0, the
 * READ never leaves our send queue. Then we leave, as a client that gives up. */
static int read_held(struct rex_conn *conn)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int ret;

	ret = ibv_query_qp(conn->qp, &attr, IBV_QP_MAX_QP_RD_ATOMIC, &init);
	if (ret) {
		rex_report_errno("ibv_query_qp", ret);
		return -ret;
	}
	printf("%s: READ of 8 bytes at ring + 0: no completion within %d ms, our QP may have "
	       "%u READs in flight (max_rd_atomic)\n",
	       PROGRAM, READ_WAIT_MS, (unsigned)attr.max_rd_atomic);
	return 0;
}

/* One RDMA WRITE or READ of 8 bytes at \p remote, outside what the server
 * granted: its completion fails, and the status is printed, not treated as
 * our failure. */
static int reach_out(struct rex_conn *conn, const struct rex_buffers *src,
                     const struct im_descriptor *ring, enum ibv_wr_opcode opcode, uint64_t remote,
                     unsigned int *outstanding)
{
	struct ibv_sge sge = {.addr = (uintptr_t)src->mem, .length = 8, .lkey = src->mr->lkey};
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = opcode,
	    .send_flags = IBV_SEND_SIGNALED,
	    .wr.rdma = {.remote_addr = remote, .rkey = ring->rkey},
	};
	struct ibv_wc wc;
	char what[96];
	int ret;

	ret = post_and_wait(conn, &wr, &wc, opcode == IBV_WR_RDMA_READ ? READ_WAIT_MS : WAIT_MS,
	                    outstanding);
	if (ret == -ETIMEDOUT && opcode == IBV_WR_RDMA_READ)
		return read_held(conn);
	if (ret)
		return ret;
	rex_format_wc_brief(what, sizeof(what), &wc);
	printf("%s: %s of 8 bytes at ring + %" PRIu64 ": %s\n", PROGRAM,
	       opcode == IBV_WR_RDMA_READ ? "READ" : "WRITE", remote - ring->addr, what);
	return 0;
}

/* "done" for one message, signalled, and its completion. */
static int send_done(struct rex_conn *conn, unsigned int *out)
{
	struct ibv_send_wr done = {
	    .wr_id = IM_WR_DONE,
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = im_done_encode(1),
	};
	struct ibv_wc wc;
	int ret;

	ret = post_and_wait(conn, &done, &wc, WAIT_MS, out);
	if (ret)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("done", &wc);
		return -EIO;
	}
	printf("%s: said done\n", PROGRAM);
	return 0;
}

/* Message 0 (good), "done" for it, then message 1 into slot 1, which would
 * be good but for the "done" before it: right behind it, or \p later. */
static int write_after_done(struct rex_conn *conn, const struct rex_buffers *src,
                            const struct im_descriptor *ring, bool later, unsigned int *out)
{
	const struct timespec pause = {.tv_sec = 0, .tv_nsec = 300 * 1000 * 1000};
	uint32_t len = (uint32_t)src->slot_size;
	/* Right behind: not signalled, so that the WRITE's completion is the
	 * next one (RC sends the two in order). Later: send_done(), signalled
	 * and waited for. */
	struct ibv_send_wr done = {
	    .wr_id = IM_WR_DONE,
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .imm_data = im_done_encode(1),
	};
	struct ibv_send_wr *bad;
	int ret;

	if (ring->slots < 2)
		return -EINVAL;
	ret = write_imm(conn, src, ring, 0, len, 0, im_imm_encode(0, len), out);
	if (ret)
		return ret;
	if (!later) {
		ret = ibv_post_send(conn->qp, &done, &bad);
		if (ret) {
			rex_report_errno("ibv_post_send", ret);
			return -ret;
		}
	} else {
		ret = send_done(conn, out);
		if (ret)
			return ret;
		nanosleep(&pause, NULL);
	}
	ret = write_imm(conn, src, ring, 1, len, 1, im_imm_encode(1, len), out);
	if (ret == 0 && !later)
		printf("%s: said done, and wrote right behind it\n", PROGRAM);
	return ret;
}

/* Message 0 whole into slot 0 by a plain WRITE, then a WRITE WITH IMM of
 * only its first 8 bytes whose immediate names the whole message, then
 * "done" for it: what the slot holds is intact, the immediate is right,
 * and only the completion's byte_len says 8. */
static int short_byte_len(struct rex_conn *conn, const struct rex_buffers *src,
                          const struct im_descriptor *ring, unsigned int *out)
{
	uint32_t len = (uint32_t)src->slot_size;
	struct ibv_sge sge = {.addr = (uintptr_t)src->mem, .length = len, .lkey = src->mr->lkey};
	struct ibv_send_wr wr = {
	    .sg_list = &sge,
	    .num_sge = 1,
	    .opcode = IBV_WR_RDMA_WRITE,
	    .send_flags = IBV_SEND_SIGNALED,
	    .wr.rdma = {.remote_addr = ring->addr, .rkey = ring->rkey},
	};
	struct ibv_wc wc;
	int ret;

	if (len < 16)
		return -EINVAL;
	im_pattern_fill(src->mem, len, 0);
	ret = post_and_wait(conn, &wr, &wc, WAIT_MS, out);
	if (ret)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("RDMA WRITE", &wc);
		return -EIO;
	}
	printf("%s: wrote message 0, %u bytes, into slot 0 (no immediate)\n", PROGRAM,
	       (unsigned)len);
	ret = write_imm(conn, src, ring, 0, 8, 0, im_imm_encode(0, len), out);
	if (ret)
		return ret;
	return send_done(conn, out);
}

static int misbehave(enum tamper tamper, struct rex_conn *conn, const struct rex_buffers *src,
                     const struct im_descriptor *ring, unsigned int *out)
{
	uint32_t len = (uint32_t)src->slot_size;

	switch (tamper) {
	case TAMPER_SLOT:
		if (ring->slots == IM_MAX_SLOTS)
			break; /* every slot number the field holds is in range */
		return write_imm(conn, src, ring, 0, len, 0, im_imm_encode(ring->slots, len), out);
	case TAMPER_LENGTH:
		if (ring->slot_size >= IM_MAX_LENGTH)
			break;
		return write_imm(conn, src, ring, 0, len, 0, im_imm_encode(0, ring->slot_size + 1),
		                 out);
	case TAMPER_NOT_HELD:
	case TAMPER_OVERWRITE:
		if (write_imm(conn, src, ring, 0, len, 0, im_imm_encode(0, len), out))
			return -EIO;
		return write_imm(conn, src, ring, 0, len, tamper == TAMPER_OVERWRITE ? 1 : 0,
		                 im_imm_encode(0, len), out);
	case TAMPER_ORDER:
		if (ring->slots < 2)
			break;
		return write_imm(conn, src, ring, 1, len, 0, im_imm_encode(1, len), out);
	case TAMPER_SEND_DATA:
		return send_with_data(conn, src, len, out);
	case TAMPER_WRITE_PAST:
		return reach_out(conn, src, ring, IBV_WR_RDMA_WRITE,
		                 ring->addr +
		                     ((uint64_t)ring->slots * ring->slot_size + SERVER_PAGE - 1) /
		                         SERVER_PAGE * SERVER_PAGE,
		                 out);
	case TAMPER_READ:
		return reach_out(conn, src, ring, IBV_WR_RDMA_READ, ring->addr, out);
	case TAMPER_BYTE_LEN:
		if (short_byte_len(conn, src, ring, out) == 0)
			return 0;
		break;
	case TAMPER_AFTER_DONE:
	case TAMPER_AFTER_DONE_LATER:
		if (write_after_done(conn, src, ring, tamper == TAMPER_AFTER_DONE_LATER, out) == 0)
			return 0;
		break;
	}
	fprintf(stderr, "%s: --tamper %s cannot be done with this ring\n", PROGRAM, names[tamper]);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	struct hostile_options o = {0};
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct rex_buffers src = {0};
	struct im_descriptor ring;
	char why[IM_WHY_SIZE];
	unsigned int outstanding = 0;
	bool connected = false;
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = hostile_parse(argc, argv, PROGRAM, names, sizeof(names) / sizeof(names[0]), &o);
	if (ret)
		return ret > 0 ? REX_EXIT_OK : REX_EXIT_USAGE;
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	rex_conn_attr_default(&attr);
	attr.timeout_ms = WAIT_MS;
	attr.initiator_depth = 1; /* READs of our own: the server grants none */
	conn = rex_conn_create_client(o.addr, o.port, &attr);
	if (!conn)
		return REX_EXIT_FAILURE;
	/* A READ needs a target we let the device write. */
	if (rex_buffers_create(&src, conn->pd, 1, o.size,
	                       o.tamper == TAMPER_READ ? IBV_ACCESS_LOCAL_WRITE : 0))
		goto out_destroy_conn;
	if (rex_conn_connect(conn, NULL, 0))
		goto out_deregister;
	connected = true;
	if (im_descriptor_decode(conn->peer_data, conn->peer_data_len, o.size, &ring, why,
	                         sizeof(why))) {
		fprintf(stderr, "%s: bad descriptor: %s\n", PROGRAM, why);
		goto out_disconnect;
	}
	if (misbehave((enum tamper)o.tamper, conn, &src, &ring, &outstanding))
		goto out_disconnect;
	if (o.tamper == TAMPER_AFTER_DONE || o.tamper == TAMPER_AFTER_DONE_LATER ||
	    o.tamper == TAMPER_READ || o.tamper == TAMPER_BYTE_LEN) {
		/* Our end, as an honest client's: the server's verdict is its own. */
		connected = false;
		if (rex_conn_disconnect(conn) == 0) {
			printf("%s: disconnected\n", PROGRAM);
			status = REX_EXIT_OK;
		}
		goto out_disconnect;
	}
	/* The server must cut us off now; we answer its disconnect (and the
	 * helper stops our QP, whatever happens). */
	connected = false;
	if (rex_conn_wait_disconnect(conn))
		goto out_disconnect;
	printf("%s: the server disconnected us\n", PROGRAM);
	status = REX_EXIT_OK;

out_disconnect:
	if (connected && rex_conn_disconnect(conn))
		status = REX_EXIT_FAILURE;
	if (outstanding && rex_cq_drain(conn->cq, outstanding, WAIT_MS))
		goto out_destroy_conn; /* leak the buffer rather than free it under the device */
out_deregister:
	if (rex_buffers_destroy(&src))
		status = REX_EXIT_FAILURE;
out_destroy_conn:
	if (rex_conn_destroy(conn))
		status = REX_EXIT_FAILURE;
	return status;
}
