/* SPDX-License-Identifier: MIT */
/*
 * tamper-server: a hostile server for 04-imm-client.
 *
 * It sets up a real ring like 04-imm-server (remote write, a receive with no
 * memory per slot, the real rkey in the descriptor), then breaks one rule:
 *
 *   --tamper no-credits  never gives a slot back: the client must stop
 *                        when it holds none, and give up after its timeout
 *   --tamper magic       a descriptor with a bad magic: the client must
 *                        refuse it and write nothing (the ring stays zero)
 *   --tamper no-receives posts no receive at all (the descriptor is right):
 *                        the client's first WRITE WITH IMM finds none, and
 *                        fails after its receiver-not-ready retries, though
 *                        a plain WRITE would have landed
 *   --tamper credits     after the first message, gives back one slot more
 *                        than the whole ring: more than the client can
 *                        have written
 *
 * Then it waits for the client to disconnect, and says how many messages
 * arrived and whether the ring is still all zeros. Exit 0 when the client
 * disconnected, 1 otherwise; 2 bad command line; 77 no RDMA device.
 *
 *   tamper-server -a ADDR [-p PORT] [-s SIZE] [-k SLOTS] --tamper WHAT
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

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

#define PROGRAM "tamper-server"
/* The client gives up on credits after 10 s and then disconnects: wait
 * well beyond that for its disconnect, in ms. */
#define LEAVE_TIMEOUT_MS 30000
#define WAIT_MS          10000

enum tamper { TAMPER_NO_CREDITS, TAMPER_NO_RECEIVES, TAMPER_MAGIC, TAMPER_CREDITS };
static const char *const names[] = {"no-credits", "no-receives", "magic", "credits"};

static int post_receives(struct rex_conn *conn, uint32_t n)
{
	struct ibv_recv_wr wr = {.sg_list = NULL, .num_sge = 0}; /* no memory, as in the real one */
	struct ibv_recv_wr *bad;
	uint32_t i;
	int ret;

	for (i = 0; i < n; i++) {
		ret = ibv_post_recv(conn->qp, &wr, &bad);
		if (ret) {
			rex_report_errno("ibv_post_recv", ret);
			return -ret;
		}
	}
	return 0;
}

/* After the first message, a credit for every slot and one more: more than
 * the client can have written, however fast it is. */
static int too_many_credits(struct rex_conn *conn, uint32_t slots, unsigned int *outstanding,
                            size_t *written)
{
	struct ibv_send_wr wr = {
	    .opcode = IBV_WR_SEND_WITH_IMM,
	    .send_flags = IBV_SEND_SIGNALED,
	    .imm_data = im_credit_encode(slots + 1),
	};
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	ret = rex_cq_wait(conn->comp_channel, conn->cq, &wc, 1, WAIT_MS);
	if (ret < 0)
		return ret;
	(*outstanding)--;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc("receive", &wc);
		return -EIO;
	}
	(*written)++;
	ret = ibv_post_send(conn->qp, &wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	(*outstanding)++;
	printf("%s: a message arrived; giving back %u slots\n", PROGRAM, (unsigned)(slots + 1));
	return 0;
}

/* Once the QP is stopped, take the completions of everything still
 * posted (most of them flushed), counting the messages that had arrived. */
static int drain_counting(struct ibv_cq *cq, unsigned int *outstanding, size_t *written)
{
	struct timespec start, now;
	struct ibv_wc wc;
	int n;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (*outstanding > 0) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (n < 0) {
			rex_errorf("ibv_poll_cq failed");
			return -EIO;
		}
		if (n == 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			if ((now.tv_sec - start.tv_sec) * 1000 > WAIT_MS) {
				rex_errorf("%u work requests never completed", *outstanding);
				return -ETIMEDOUT;
			}
			usleep(1000);
			continue;
		}
		(*outstanding)--;
		if (wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM)
			(*written)++;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct hostile_options o = {0};
	struct rex_listener *listener;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct rex_buffers ring = {0};
	struct im_descriptor desc;
	uint8_t data[IM_DESCRIPTOR_SIZE];
	unsigned int outstanding;
	size_t i, written = 0;
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

	listener = rex_listener_create(o.addr, o.port);
	if (!listener)
		return REX_EXIT_FAILURE;
	printf("%s: listening on %s\n", PROGRAM, listener->name);
	rex_conn_attr_default(&attr);
	attr.recv_depth = (int)o.slots;
	attr.cq_depth = (int)o.slots + attr.send_depth;
	attr.timeout_ms = LEAVE_TIMEOUT_MS;
	conn = rex_listener_get_request(listener, &attr);
	if (!conn)
		goto out_destroy_listener;
	if (rex_buffers_create(&ring, conn->pd, o.slots, o.size,
	                       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		goto out_destroy_conn;
	outstanding = o.tamper == TAMPER_NO_RECEIVES ? 0 : o.slots;
	if (post_receives(conn, outstanding))
		goto out_deregister; /* never connected: nothing flushes, nothing writes */
	desc.addr = (uintptr_t)ring.mem;
	desc.rkey = ring.mr->rkey;
	desc.slot_size = (uint32_t)o.size;
	desc.slots = o.slots;
	im_descriptor_encode(&desc, data);
	if (o.tamper == TAMPER_MAGIC)
		memcpy(data, "\xde\xad\xbe\xef", 4);
	/* A client that refuses the descriptor leaves at once: its disconnect
	 * may come in place of ESTABLISHED (-ECONNRESET, conn->peer_left). */
	ret = rex_conn_accept(conn, data, sizeof(data));
	if (ret && ret != -ECONNRESET)
		goto out_drain;
	printf("%s: accepted with %u receives posted (%s)\n", PROGRAM, outstanding,
	       names[o.tamper]);
	connected = !conn->peer_left;
	if (connected && o.tamper == TAMPER_CREDITS &&
	    too_many_credits(conn, o.slots, &outstanding, &written))
		goto out_disconnect;
	/* Whatever the client does now, we answer nothing until it leaves;
	 * the helper stops our QP whatever happens. */
	connected = false;
	if (rex_conn_wait_disconnect(conn) == 0) {
		printf("%s: client disconnected\n", PROGRAM);
		status = REX_EXIT_OK;
	}

out_disconnect:
	if (connected && rex_conn_disconnect(conn))
		status = REX_EXIT_FAILURE;
out_drain:
	if (drain_counting(conn->cq, &outstanding, &written)) {
		status = REX_EXIT_FAILURE;
		goto out_destroy_conn; /* leak the ring rather than free it under the device */
	}
	printf("%s: %zu messages arrived\n", PROGRAM, written);
	for (i = 0; i < ring.len && ring.mem[i] == 0; i++)
		;
	if (i == ring.len)
		printf("%s: ring untouched\n", PROGRAM);
	else
		printf("%s: ring written at byte %zu\n", PROGRAM, i);
out_deregister:
	if (rex_buffers_destroy(&ring))
		status = REX_EXIT_FAILURE;
out_destroy_conn:
	if (rex_conn_destroy(conn))
		status = REX_EXIT_FAILURE;
out_destroy_listener:
	if (rex_listener_destroy(listener))
		status = REX_EXIT_FAILURE;
	return status;
}
