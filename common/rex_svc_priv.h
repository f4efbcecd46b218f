/* SPDX-License-Identifier: MIT */
/*
 * rex_svc_priv.h: what rex_svc.c, rex_svc_wr.c and rex_svc_msg.c share,
 * and nothing a program may use: the service and connection structures
 * behind rex_svc.h's opaque handles. Copy it with them; include only rex_svc.h.
 */
#ifndef REX_SVC_PRIV_H
#define REX_SVC_PRIV_H

#include <stddef.h>
#include <sys/socket.h>

#include "rex_buffers.h"
#include "rex_svc.h"

/* The helper's bytes in front of the program's private data, both ways. */
#define REX_SVC_PDATA_HEADER  4
#define REX_SVC_PDATA_VERSION 1
/* A server's accept on a shared receive queue: two bytes more, the credits
 * the client may come to hold (its share starts lower and grows). */
#define REX_SVC_PDATA_HEADER_2  6
#define REX_SVC_PDATA_VERSION_2 2

/* Flags of a message header (its third byte). */
#define REX_SVC_MSG_CREDIT_ONLY 0x01u /* no payload: credits only */
#define REX_SVC_MSG_LOW         0x02u /* the sender is on its last credits: return yours */

/* Who the work request of a send number was: the helper's message or the program's. */
enum { REX_SVC_SEND_PROGRAM = 0, REX_SVC_SEND_MSG = 1 };

struct rex_svc {
	struct rex_loop *loop;
	struct rex_svc_config cfg;
	const struct rex_svc_ops *ops;
	void *user;
	struct rex_aconn_devs devs;
	struct rdma_cm_id *listener; /* a server's, until rex_svc_stop() */
	struct rex_svc_conn *conns;  /* not closed yet */
	unsigned open;               /* how many */
	unsigned long numbered;      /* connections made, for their names */
	struct rex_svc_stats stats;
	bool stopping;
	struct rex_loop_task stopped; /* ops.stopped() when no connection was left */
};

/* A message received and not yet taken by the program. */
struct rex_svc_held {
	uint32_t slot, len;
};

/* Messages with credits (rex_svc_msg.c): slots, credits, the send queue. */
struct rex_svc_msgs {
	struct rex_buffers recv; /* msg_recvs slots: header + msg_size */
	struct rex_buffers send; /* msg_sends slots, a ring */
	uint64_t *number;        /* per send slot: the send number it went as */
	uint32_t *len;           /* per send slot: payload bytes */
	uint32_t filled;         /* slots written, counting from the start */
	uint32_t posted;         /* slots posted */
	uint32_t freed;          /* slots whose send completed */
	uint32_t credits;        /* messages the peer has receives for */
	uint32_t peer_recvs;     /* the peer's receive slots: credits never exceed them */
	uint32_t owed;           /* receives posted again, not yet told to the peer */
	uint32_t peer_may_send;  /* the credits the peer holds, by our books */
	bool peer_low;           /* the peer is on its last credits */
	struct rex_svc_msg_stats stats;
	bool blocked; /* rex_svc_send() found no slot: ops.send_ready() when one is */
	/* Messages received and not yet taken by the program, in arrival
	 * order: a ring of msg_recvs (each one's receive is not posted again,
	 * its credit not returned, until the program takes it). */
	struct rex_svc_held *held;
	uint32_t held_first, held_count;
	bool paused;     /* the program held the first: again when a send slot is free */
	bool in_message; /* inside ops.message(): rex_svc_hold() may be called */
	bool hold_asked; /* rex_svc_hold() was called from it */
};

struct rex_svc_conn {
	struct rex_aconn ac; /* the engine: life, queues, books (rex_aconn.h) */
	struct rex_svc *svc;
	void *user;
	struct rex_svc_conn *prev, *next; /* in svc->conns */
	enum rex_svc_why why;             /* the first cause of its end, when why_set */
	bool why_set;
	bool peer_done;     /* rex_svc_conn_peer_done() */
	bool lent;          /* its QP and CQ lent to the program: rex_svc_conn_lend() */
	struct rex_aconn_dev *dev; /* its device, known from the request (server) or the route */
	uint32_t max_sge;   /* what its QP got */
	uint32_t send_depth, recv_depth; /* its queues: the configuration's, or set */
	uint64_t *send_ids; /* per send number % send_depth: the program's wr_id */
	uint8_t *send_kind; /* per send number % send_depth: REX_SVC_SEND_* */
	uint64_t *recv_ids; /* per receive slot (recv_depth): the program's wr_id */
	uint32_t recv_next; /* next receive slot */
	struct rex_svc_msgs msgs;
	uint32_t srq_share;           /* receives of its device's shared queue promised to it */
	struct sockaddr_storage dest; /* a client's server */
	size_t pdata_len;             /* a client's private data */
	uint8_t pdata[REX_SVC_PDATA_HEADER_2 + REX_SVC_PDATA_MAX];
};

/* The connection around the engine's record (the engine's callbacks get it). */
#define CONN_OF(p) ((struct rex_svc_conn *)((char *)(p)-offsetof(struct rex_svc_conn, ac)))

/* rex_svc_wr.c: post sends of kind REX_SVC_SEND_*, numbered, their wr_ids kept. */
int rex_svc_post_kind(struct rex_svc_conn *c, struct ibv_send_wr *first, uint8_t kind);
/* The CQ function of every connection: completions delivered. */
void rex_svc_on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq);

/* rex_svc_msg.c */
int rex_svc_msgs_create(struct rex_svc_conn *c);
int rex_svc_msgs_destroy(struct rex_svc_conn *c);
void rex_svc_msgs_received(struct rex_svc_conn *c, const struct ibv_wc *wc);
void rex_svc_msgs_pump(struct rex_svc_conn *c);
/* After completions (never inside a program's call): messages held for a
 * send slot delivered again, then ops.send_ready(), when a slot is free. */
void rex_svc_msgs_resume(struct rex_svc_conn *c);

/* rex_svc_srq.c: one shared receive queue per device. */
/* The share of \p c: msg_recvs with messages, its receive depth without. */
uint32_t rex_svc_srq_share(const struct rex_svc_conn *c);
/* Make \p dev's queue and its pool, if not yet: at listening when the
 * listener has its device (bound to its address), or with the device's
 * first connection. 0, or -ENOMEM (printed). Nothing without a queue. */
int rex_svc_srq_prepare(struct rex_svc *s, struct rex_aconn_dev *dev);
/* Promise \p c its share of its device's queue (made with the first
 * connection if not before): 0, -ENOBUFS when the queue has not that much
 * left (printed), -ENOMEM. Nothing without a queue. */
int rex_svc_srq_admit(struct rex_svc_conn *c);
/* Promise \p c \p share receives in place of what it has (set depths). */
int rex_svc_srq_promise(struct rex_svc_conn *c, uint32_t share);
/* A message of \p c was read and its receive posted again: the credits
 * to owe the peer for it. 1; 0 when a share above the least gives one back
 * to a short queue; more when the peer said it is on its last credits
 * (\p peer_low) and the queue has receives unpromised (the share doubles,
 * up to msg_recvs). Always 1 without a queue, or on a client. */
uint32_t rex_svc_srq_regrant(struct rex_svc_conn *c, bool peer_low);
/* The rule of it: a share of \p share credits, at most \p cap, with
 * \p free_now receives of the queue unpromised: the share after. */
uint32_t rex_svc_srq_next_share(uint32_t share, uint32_t cap, uint32_t free_now, bool peer_low);
/* Give \p c's share back: its QP is gone, or it was refused. */
void rex_svc_srq_leave(struct rex_svc_conn *c);
/* The queue of \p c's device, or NULL. */
struct rex_srq *rex_svc_srq_queue(const struct rex_svc_conn *c);
/* The shared queue's checks of a configuration: 0, or -1 after printing why. */
int rex_svc_srq_check(const struct rex_svc_config *cfg);
/* The queue a connection's QP takes (NULL: none), and in *cq_recvs the
 * receives its CQ must hold: its credits, or without messages the queue's depth. */
struct ibv_srq *rex_svc_srq_for_queues(const struct rex_svc_conn *c, uint32_t *cq_recvs);
/* The buffer of a receive completion, or NULL: \p c closed (printed). */
struct rex_pool_buf *rex_svc_srq_take(struct rex_svc_conn *c, const struct ibv_wc *wc);
/* Post buffer \p index again: 0, or a negative errno (printed). */
int rex_svc_srq_repost(struct rex_svc_conn *c, uint32_t index);
/* The bytes of buffer \p index. */
const void *rex_svc_srq_bytes(const struct rex_svc_conn *c, uint32_t index);
/* The engine's hooks: a receive the program does not see; an SRQ's
 * asynchronous event; the device's queue and pool released. */
void rex_svc_srq_recv(struct rex_aconn *ac, const struct ibv_wc *wc);
void rex_svc_srq_event(struct rex_aconn_dev *dev, const struct ibv_async_event *event);
int rex_svc_srq_release(struct rex_aconn_dev *dev);

#endif /* REX_SVC_PRIV_H */
