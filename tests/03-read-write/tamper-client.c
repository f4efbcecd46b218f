/* SPDX-License-Identifier: MIT */
/*
 * tamper-client: a hostile (or broken) peer for 03-read-write-server.
 *
 * It asks for memory and takes the descriptor like 03-read-write-client,
 * then misbehaves in one way, so the server's checks can be seen to work:
 *
 *   --tamper damage       writes the pattern with byte 1000 flipped, then
 *                         says "done": the server must name byte 1000
 *   --tamper nothing      writes nothing, then says "done": the server must
 *                         find its zeros are not the pattern (byte 0)
 *   --tamper done-length  a done message claiming one byte more than was
 *                         granted: the server must not read past its buffer
 *   --tamper done-short   a done message of 8 bytes
 *   --tamper own-seed     writes the whole pattern of a seed of its own
 *                         choosing and names that seed in "done": the data
 *                         is intact for the seed it names; a server that
 *                         chooses the seed itself must refuse it (exercise
 *                         03-server-seed)
 *   --tamper vanish       writes the pattern, then exits at once: no done
 *                         message, no disconnect, as a killed client would.
 *                         The server must notice at once, not at a timeout.
 *
 * Then it disconnects (except after vanish). Exit 0 when it did all that, 1 when something failed
 * on its side, 2 for a bad command line, 77 when there is no RDMA device.
 *
 *   tamper-client -a ADDR [-p PORT] [-s SIZE] --tamper WHAT
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_conn.h"
#include "rex_cq.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

#define PROGRAM      "tamper-client"
#define DEFAULT_SIZE (64ull << 10)
#define MAX_SIZE     (8ull << 20) /* one work request on Soft-RoCE */
#define SEED         0x5eed1234u
#define DAMAGED_BYTE 1000 /* --tamper damage flips this byte, if -s has it */
#define WAIT_MS      10000

enum tamper {
	TAMPER_DAMAGE,
	TAMPER_NOTHING,
	TAMPER_DONE_LENGTH,
	TAMPER_DONE_SHORT,
	TAMPER_OWN_SEED,
	TAMPER_VANISH
};

static const char *const tamper_names[] = {"damage",     "nothing",  "done-length",
                                           "done-short", "own-seed", "vanish"};

struct options {
	const char *addr;
	uint16_t port;
	uint64_t size;
	enum tamper tamper;
};

static void usage(FILE *stream)
{
	fprintf(stream,
	        "usage: %s -a ADDR [-p PORT] [-s SIZE] --tamper "
	        "damage|nothing|done-length|done-short|own-seed|vanish\n",
	        PROGRAM);
}

static int parse_command_line(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"tamper", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	const size_t n_names = sizeof(tamper_names) / sizeof(tamper_names[0]);
	bool have_tamper = false;
	uint64_t value;
	size_t i;
	int opt;

	o->port = REX_DEFAULT_PORT;
	o->size = DEFAULT_SIZE;
	while ((opt = getopt_long(argc, argv, "a:p:s:t:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'a':
			o->addr = optarg;
			break;
		case 'p':
			if (rex_parse_uint(optarg, 1, 65535, &value)) {
				fprintf(stderr, "%s: -p %s: not a port\n", PROGRAM, optarg);
				return -EINVAL;
			}
			o->port = (uint16_t)value;
			break;
		case 's':
			if (rex_parse_size(optarg, 1, MAX_SIZE, &o->size)) {
				fprintf(stderr, "%s: -s %s: not a size\n", PROGRAM, optarg);
				return -EINVAL;
			}
			break;
		case 't':
			for (i = 0; i < n_names; i++)
				if (strcmp(optarg, tamper_names[i]) == 0)
					break;
			if (i == n_names) {
				fprintf(stderr, "%s: --tamper %s: unknown\n", PROGRAM, optarg);
				return -EINVAL;
			}
			o->tamper = (enum tamper)i;
			have_tamper = true;
			break;
		case 'h':
			usage(stdout);
			exit(REX_EXIT_OK);
		default:
			return -EINVAL;
		}
	}
	if (optind != argc || !have_tamper || !o->addr) {
		fprintf(stderr, "%s: -a and --tamper are required; no positional arguments\n",
		        PROGRAM);
		return -EINVAL;
	}
	return 0;
}

/* Post one work request and wait for its completion. */
static int post_and_wait(struct rex_conn *conn, struct ibv_send_wr *wr, const char *what)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int ret;

	ret = ibv_post_send(conn->qp, wr, &bad);
	if (ret) {
		rex_report_errno("ibv_post_send", ret);
		return -ret;
	}
	ret = rex_cq_wait(conn->comp_channel, conn->cq, &wc, 1, WAIT_MS);
	if (ret < 0)
		return ret;
	if (wc.status != IBV_WC_SUCCESS) {
		rex_report_wc(what, &wc);
		return -EIO;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct rw_request request;
	struct rw_descriptor remote;
	struct rw_done done = {.seed = SEED};
	uint8_t req_data[RW_REQUEST_SIZE];
	uint8_t done_msg[RW_DONE_SIZE];
	char why[RW_WHY_SIZE];
	struct ibv_mr *data_mr, *done_mr;
	uint8_t *data;
	int status = REX_EXIT_FAILURE;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_command_line(argc, argv, &o)) {
		usage(stderr);
		return REX_EXIT_USAGE;
	}
	ret = rex_device_present();
	if (ret < 0)
		return ret == -ENODEV ? REX_EXIT_NO_DEVICE : REX_EXIT_FAILURE;

	data = malloc(o.size);
	if (!data) {
		rex_report_errno("malloc", errno);
		return REX_EXIT_FAILURE;
	}
	rw_pattern_fill(data, o.size, SEED);
	if (o.size > DAMAGED_BYTE && o.tamper != TAMPER_OWN_SEED)
		data[DAMAGED_BYTE] ^= 0xff;

	rex_conn_attr_default(&attr);
	conn = rex_conn_create_client(o.addr, o.port, &attr);
	if (!conn)
		goto out_free_data;
	data_mr = ibv_reg_mr(conn->pd, data, o.size, 0);
	if (!data_mr) {
		rex_report_errno("ibv_reg_mr", errno);
		goto out_destroy_conn;
	}
	done_mr = ibv_reg_mr(conn->pd, done_msg, sizeof(done_msg), 0);
	if (!done_mr) {
		rex_report_errno("ibv_reg_mr", errno);
		goto out_deregister_data;
	}

	request.length = o.size;
	rw_request_encode(&request, req_data);
	if (rex_conn_connect(conn, req_data, sizeof(req_data)))
		goto out_deregister_done;
	if (rw_descriptor_decode(conn->peer_data, conn->peer_data_len, o.size, &remote, why,
	                         sizeof(why))) {
		fprintf(stderr, "%s: bad descriptor: %s\n", PROGRAM, why);
		goto out_disconnect;
	}

	if (o.tamper == TAMPER_DAMAGE || o.tamper == TAMPER_OWN_SEED || o.tamper == TAMPER_VANISH) {
		struct ibv_sge sge = {
		    .addr = (uintptr_t)data, .length = (uint32_t)o.size, .lkey = data_mr->lkey};
		struct ibv_send_wr wr = {
		    .sg_list = &sge,
		    .num_sge = 1,
		    .opcode = IBV_WR_RDMA_WRITE,
		    .send_flags = IBV_SEND_SIGNALED,
		    .wr.rdma = {.remote_addr = remote.addr, .rkey = remote.rkey},
		};
		if (post_and_wait(conn, &wr, "tamper-client: RDMA WRITE"))
			goto out_disconnect;
		if (o.tamper == TAMPER_OWN_SEED)
			printf("%s: wrote the whole pattern of seed 0x%08x, our own\n", PROGRAM,
			       SEED);
		else
			printf("%s: wrote the pattern with byte %d flipped\n", PROGRAM,
			       DAMAGED_BYTE);
	}
	if (o.tamper == TAMPER_VANISH) {
		/* Like a crash: the kernel closes our CM id and the server's
		 * CM sees a disconnect; nothing of ours is released by hand. */
		printf("%s: leaving without a word\n", PROGRAM);
		_exit(REX_EXIT_OK);
	}

	done.length = remote.length + (o.tamper == TAMPER_DONE_LENGTH ? 1 : 0);
	rw_done_encode(&done, done_msg);
	{
		struct ibv_sge sge = {
		    .addr = (uintptr_t)done_msg,
		    .length = o.tamper == TAMPER_DONE_SHORT ? 8 : sizeof(done_msg),
		    .lkey = done_mr->lkey,
		};
		struct ibv_send_wr wr = {
		    .sg_list = &sge,
		    .num_sge = 1,
		    .opcode = IBV_WR_SEND,
		    .send_flags = IBV_SEND_SIGNALED,
		};
		if (post_and_wait(conn, &wr, "tamper-client: SEND"))
			goto out_disconnect;
	}
	printf("%s: sent a done message (%s)\n", PROGRAM, tamper_names[o.tamper]);
	status = REX_EXIT_OK;

out_disconnect:
	if (rex_conn_disconnect(conn))
		status = REX_EXIT_FAILURE;
out_deregister_done:
	ret = ibv_dereg_mr(done_mr); /* returns an errno value */
	if (ret) {
		rex_report_errno("ibv_dereg_mr", ret);
		status = REX_EXIT_FAILURE;
	}
out_deregister_data:
	ret = ibv_dereg_mr(data_mr);
	if (ret) {
		rex_report_errno("ibv_dereg_mr", ret);
		status = REX_EXIT_FAILURE;
		data = NULL; /* the device may still own it: never free it */
	}
out_destroy_conn:
	rex_conn_destroy(conn);
out_free_data:
	free(data);
	return status;
}
