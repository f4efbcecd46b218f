/* SPDX-License-Identifier: MIT */
/*
 * server.h: what the two files of 06's server share: a session (one
 * client's connection, with its buffer from the pool and its run), the
 * server, and the session's benchmark work (server_run.c), which server.c
 * calls. server.c is the service: the listener, connect requests, the
 * sessions' lives, the loop.
 */
#ifndef BENCH_SERVER_H
#define BENCH_SERVER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>

#include "bench_wire.h"
#include "rex_aconn.h"
#include "rex_pool.h"

struct server;

struct session {
	struct rex_aconn conn; /* first: the connection's callbacks get &conn */
	struct server *server;
	unsigned long number;
	struct bench_hello hello;
	struct rex_pool *pool;    /* its device's */
	struct rex_pool_buf *buf; /* its buffer from the pool, until it is released */
	uint8_t *mem;             /* buf->addr */
	struct ibv_sge recv_sge; /* SEND: receives land in the buffer */
	uint32_t recv_depth;
	bool active; /* between START and DONE */
	bool busy;   /* and the server busy-polls it */
	uint32_t size;
	uint64_t echo; /* latency answers in this run */
	struct rusage start_usage; /* the process's CPU at the run's START */
	uint64_t messages, runs, bad_runs;
	struct session *prev, *next;
};

struct server {
	const char *addr;
	uint16_t port;
	uint32_t max_size;
	unsigned ops;
	bool verbose;
	struct rex_loop *loop;
	struct rdma_cm_id *listener;
	char name[REX_CM_ADDRESS_LEN];
	struct rex_aconn_devs devices;
	struct session *sessions;
	unsigned active; /* sessions busy-polled (set_active()) */
	unsigned long numbered, open, served, failed, rejected;
	uint64_t messages, runs;
	bool stopping, stopped;
	int status;
};

/* A run is on (START to DONE), or over: busy-poll it or not. */
void session_set_active(struct session *ss, bool active);

/* Take the session's completions and act on them: control messages,
 * data, latency answers; receives posted again. */
void session_poll(struct session *ss);

/* The session's CQ function, for rex_aconn_create_queues(). */
void session_on_completions(struct rex_loop *loop, struct rex_loop_cq *lcq);

/* WRITE latency: answer a ping seen by its last byte changing in memory. */
void session_poll_memory(struct session *ss);

#endif /* BENCH_SERVER_H */
