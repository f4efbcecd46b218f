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
 *
 * Then it waits for the server to cut it off. Exit 0 when the server
 * disconnected it, 1 otherwise; 2 bad command line; 77 no RDMA device.
 *
 *   tamper-client -a ADDR [-p PORT] [-s SIZE] --tamper WHAT
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>

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
};
static const char *const names[] = {"slot",      "length", "not-held",
                                    "overwrite", "order",  "send-data"};

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
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	im_pattern_fill(src->mem, len, seq);
	ret = ibv_post_send(conn->qp, &wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	(*outstanding)++;
	ret = rex_cq_wait(conn->comp_channel, conn->cq, &wc, 1, WAIT_MS);
	if (ret < 0)
		return ret;
	(*outstanding)--;
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
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	ret = ibv_post_send(conn->qp, &wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	(*outstanding)++;
	ret = rex_cq_wait(conn->comp_channel, conn->cq, &wc, 1, WAIT_MS);
	if (ret < 0)
		return ret;
	(*outstanding)--;
	printf("%s: SEND WITH IMM of %u bytes: %s\n", PROGRAM, (unsigned)len,
	       ibv_wc_status_str(wc.status));
	return 0;
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
	conn = rex_conn_create_client(o.addr, o.port, &attr);
	if (!conn)
		return REX_EXIT_FAILURE;
	if (rex_buffers_create(&src, conn->pd, 1, o.size, 0))
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
