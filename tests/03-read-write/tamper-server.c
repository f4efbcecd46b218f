/* SPDX-License-Identifier: MIT */
/*
 * tamper-server: a hostile peer for 03-read-write-client.
 *
 * It behaves like 03-read-write-server up to the accept, then sends a
 * descriptor it has corrupted on purpose:
 *
 *   --tamper magic     a magic that is not the descriptor's
 *   --tamper version   version 2
 *   --tamper zero      length 0
 *   --tamper length    one byte more than the client asked for
 *   --tamper overflow  an address where address + length wraps past 2^64
 *
 * The memory it registers is zero-filled and open to remote writes, with
 * the real rkey in the descriptor: a client that used the descriptor anyway
 * could really write into it. After the client has gone, the server checks
 * that every byte is still zero:
 *
 *   tamper-server: buffer untouched              exit 0
 *   tamper-server: buffer written at byte N      exit 1
 *
 *   tamper-server -a ADDR -p PORT --tamper WHAT [-s SIZE]
 *
 * Exit 2 for a bad command line, 77 when there is no RDMA device.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_conn.h"
#include "rex_device.h"
#include "rex_error.h"
#include "rex_options.h"
#include "wire.h"

#define PROGRAM      "tamper-server"
#define DEFAULT_SIZE (64ull << 20)
#define MAX_SIZE     (1ull << 30)
/* How long the client has to go away after our accept, in ms: it should
 * refuse the descriptor and disconnect at once. */
#define LEAVE_TIMEOUT_MS 10000

enum tamper { TAMPER_MAGIC, TAMPER_VERSION, TAMPER_ZERO, TAMPER_LENGTH, TAMPER_OVERFLOW };

static const char *const tamper_names[] = {"magic", "version", "zero", "length", "overflow"};

struct options {
	const char *addr;
	uint16_t port;
	uint64_t size;
	enum tamper tamper;
};

static void usage(FILE *stream)
{
	fprintf(
	    stream,
	    "usage: %s -a ADDR [-p PORT] [-s SIZE] --tamper magic|version|zero|length|overflow\n",
	    PROGRAM);
}

static int parse_command_line(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
	    {"tamper", required_argument, NULL, 't'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	uint64_t value;
	bool have_tamper = false;
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
			for (i = 0; i < sizeof(tamper_names) / sizeof(tamper_names[0]); i++)
				if (strcmp(optarg, tamper_names[i]) == 0)
					break;
			if (i == sizeof(tamper_names) / sizeof(tamper_names[0])) {
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
	if (optind != argc || !have_tamper) {
		fprintf(stderr, "%s: %s\n", PROGRAM,
		        have_tamper ? "no positional arguments" : "--tamper is required");
		return -EINVAL;
	}
	return 0;
}

/* An honest descriptor for \p mr, encoded, then corrupted as asked. */
static void tampered_descriptor(enum tamper tamper, const struct ibv_mr *mr,
                                uint8_t data[RW_DESCRIPTOR_SIZE])
{
	struct rw_descriptor desc = {
	    .addr = (uintptr_t)mr->addr,
	    .length = mr->length,
	    .rkey = mr->rkey,
	};

	switch (tamper) {
	case TAMPER_ZERO:
		desc.length = 0;
		break;
	case TAMPER_LENGTH:
		desc.length = mr->length + 1;
		break;
	case TAMPER_OVERFLOW:
		/* addr + length == 2^64: wraps to 0 */
		desc.addr = UINT64_MAX - desc.length + 1;
		break;
	default:
		break;
	}
	rw_descriptor_encode(&desc, data);
	/* The header's layout is in wire.h: magic at byte 0, version at 4. */
	if (tamper == TAMPER_MAGIC)
		memcpy(data, "\xde\xad\xbe\xef", 4);
	if (tamper == TAMPER_VERSION)
		memcpy(data + 4, "\x00\x02", 2);
}

/* The first byte of \p buf that is not zero, or \p len when there is none. */
static uint64_t first_nonzero(const uint8_t *buf, uint64_t len)
{
	uint64_t i;

	for (i = 0; i < len; i++)
		if (buf[i])
			return i;
	return len;
}

int main(int argc, char **argv)
{
	struct options o = {0};
	struct rex_listener *listener;
	struct rex_conn_attr attr;
	struct rex_conn *conn;
	struct rw_request request;
	struct ibv_mr *mr;
	uint8_t data[RW_DESCRIPTOR_SIZE];
	char why[RW_WHY_SIZE];
	uint8_t *buffer;
	uint64_t bad;
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

	buffer = calloc(1, o.size); /* all zeros: any write would show */
	if (!buffer) {
		rex_report_errno("calloc", errno);
		return REX_EXIT_FAILURE;
	}
	listener = rex_listener_create(o.addr, o.port);
	if (!listener)
		goto out_free_buffer;
	printf("%s: listening on %s, will tamper with: %s\n", PROGRAM, listener->name,
	       tamper_names[o.tamper]);

	rex_conn_attr_default(&attr);
	attr.responder_resources = 1;
	attr.timeout_ms = LEAVE_TIMEOUT_MS; /* each CM wait, the client's leaving included */
	conn = rex_listener_get_request(listener, &attr);
	if (!conn)
		goto out_destroy_listener;
	ret = rw_request_decode(conn->peer_data, conn->peer_data_len, o.size, &request, why,
	                        sizeof(why));
	if (ret) {
		fprintf(stderr, "%s: bad request: %s\n", PROGRAM, why);
		goto out_destroy_conn;
	}
	mr = ibv_reg_mr(conn->pd, buffer, request.length,
	                IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!mr) {
		rex_report_errno("ibv_reg_mr", errno);
		goto out_destroy_conn;
	}
	tampered_descriptor(o.tamper, mr, data);
	printf("%s: accepting with a tampered descriptor (%s)\n", PROGRAM, tamper_names[o.tamper]);
	/* The client refuses the descriptor and leaves at once: its disconnect
	 * may come in place of ESTABLISHED (-ECONNRESET, conn->peer_left). */
	ret = rex_conn_accept(conn, data, sizeof(data));
	if (ret && ret != -ECONNRESET)
		goto out_deregister;

	/* The client should refuse and leave. Whether it does in time or not,
	 * the buffer tells whether it wrote. */
	if (rex_conn_wait_disconnect(conn) == 0) /* stops the QP either way */
		printf("%s: client disconnected\n", PROGRAM);

	bad = first_nonzero(buffer, o.size);
	if (bad == o.size) {
		printf("%s: buffer untouched\n", PROGRAM);
		status = REX_EXIT_OK;
	} else {
		printf("%s: buffer written at byte %llu\n", PROGRAM, (unsigned long long)bad);
	}

out_deregister:
	ret = ibv_dereg_mr(mr);
	if (ret) {
		rex_report_errno("ibv_dereg_mr", ret);
		status = REX_EXIT_FAILURE;
	}
out_destroy_conn:
	rex_conn_destroy(conn);
out_destroy_listener:
	rex_listener_destroy(listener);
out_free_buffer:
	free(buffer);
	return status;
}
