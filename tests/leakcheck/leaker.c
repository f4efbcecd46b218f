// SPDX-License-Identifier: MIT
/**
 * \file
 * The leak check's own test: a program that takes a CM id, a protection
 * domain, a completion queue, a queue pair and a memory region on the device
 * that holds ADDR, and then either releases them all ("clean", exit 0) or
 * returns from main() holding them ("leak", exit 0 too: only the preloaded
 * check can make it fail).
 *
 *   leaker clean|leak ADDR
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#define BUF_SIZE 4096

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = {.ai_flags = RAI_PASSIVE, .ai_port_space = RDMA_PS_TCP};
	struct ibv_qp_init_attr qp_attr = {
	    .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
	    .qp_type = IBV_QPT_RC,
	};
	struct rdma_event_channel *channel = NULL;
	struct rdma_addrinfo *ai = NULL;
	struct rdma_cm_id *id = NULL;
	struct ibv_pd *pd = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_mr *mr = NULL;
	static char buf[BUF_SIZE];
	int status = 1;
	int leak;

	if (argc != 3 || (strcmp(argv[1], "clean") && strcmp(argv[1], "leak"))) {
		fprintf(stderr, "usage: leaker clean|leak ADDR\n");
		return 2;
	}
	leak = strcmp(argv[1], "leak") == 0;
	if (rdma_getaddrinfo(argv[2], NULL, &hints, &ai)) {
		perror("rdma_getaddrinfo");
		return 1;
	}
	channel = rdma_create_event_channel();
	if (!channel) {
		perror("rdma_create_event_channel");
		goto out;
	}
	if (rdma_create_id(channel, &id, NULL, RDMA_PS_TCP)) {
		perror("rdma_create_id");
		goto out;
	}
	/* Binding to an address of an RDMA interface ties the id to its device. */
	if (rdma_bind_addr(id, ai->ai_src_addr)) {
		perror("rdma_bind_addr");
		goto out;
	}
	pd = ibv_alloc_pd(id->verbs);
	if (!pd) {
		perror("ibv_alloc_pd");
		goto out;
	}
	cq = ibv_create_cq(id->verbs, 2, NULL, NULL, 0);
	if (!cq) {
		perror("ibv_create_cq");
		goto out;
	}
	qp_attr.send_cq = cq;
	qp_attr.recv_cq = cq;
	if (rdma_create_qp(id, pd, &qp_attr)) {
		perror("rdma_create_qp");
		goto out;
	}
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (!mr) {
		perror("ibv_reg_mr");
		goto out;
	}
	printf("leaker: holding a CM id, a PD, a CQ, a QP and an MR on %s\n",
	       ibv_get_device_name(id->verbs->device));
	status = 0;
	if (leak) {
		printf("leaker: returning from main() without releasing them\n");
		fflush(stdout);
		return status;
	}
out:
	if (mr && ibv_dereg_mr(mr))
		status = 1;
	if (id && id->qp)
		rdma_destroy_qp(id);
	if (cq && ibv_destroy_cq(cq))
		status = 1;
	if (pd && ibv_dealloc_pd(pd))
		status = 1;
	if (id && rdma_destroy_id(id))
		status = 1;
	if (channel)
		rdma_destroy_event_channel(channel);
	rdma_freeaddrinfo(ai);
	if (status == 0)
		printf("leaker: released everything\n");
	return status;
}
