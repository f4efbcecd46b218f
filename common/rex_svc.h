/* SPDX-License-Identifier: MIT */
/**
 * \file rex_svc.h
 * \brief An RDMA service in a few calls: one to serve, one to dial, and
 *        callbacks for what happens; connections are opaque handles made by
 *        the helper, and every completion that matters is delivered.
 *
 * rex_aconn.h is the engine under it (chapter 05 builds it in the open):
 * the devices, the CM events, the state machine, the books of work
 * requests, the deadlines, the drain and the teardown in the right order.
 * This header is what a service written against it needs, and no more:
 *
 *     struct rex_svc_config cfg;
 *     rex_svc_config_default(&cfg);          then set what differs
 *     cfg.msg_size = 64;                     messages with credits (below)
 *     svc = rex_svc_create(loop, &cfg, &ops, me);
 *     rex_svc_serve(svc, addr, port);        a server, or:
 *     rex_svc_dial(svc, addr, port, NULL, 0, my_conn);   a client, once a connection
 *     rex_loop_run(loop);                    ops.message() ... rex_svc_send() ...
 *     rex_svc_stop(svc);                     every connection closed -> ops.stopped()
 *     rex_svc_destroy(svc);
 *
 * **The connect request.** A server's helper takes each request, finds the
 * device it came on, and asks ops.request() (NULL: accept all): the program
 * reads the client's private data, may write its answer, sets its own
 * pointer (rex_svc_conn_set_user()) and returns 0 to accept or nonzero to
 * reject (the answer travels with the reject too). Then the helper creates
 * the queues, registers the message slots and posts the receives, and
 * accepts. Private data: up to #REX_SVC_PDATA_MAX bytes each way.
 *
 * **When a side may send.** A server from its accept on: its QP is ready
 * to send then, and a client may send as soon as it has the accept, before
 * the server reads ESTABLISHED (the client's RTU can come later, or be
 * lost), so a server answers what it receives at once. A client from
 * ops.established() on, where it learns its credits; rex_svc_send() before
 * that queues the message. Either side may receive a message before its
 * ops.established(): the peer sent it as soon as it could.
 *
 * **Messages with credits** (cfg.msg_size > 0; rex_svc_msg.c). The helper
 * registers cfg.msg_recvs receive slots and cfg.msg_sends send slots of
 * msg_size bytes plus a 4-byte header, posts the receives, and tells the
 * peer how many with the connect request or the accept: those are the
 * peer's credits. Each message costs one; the receiver returns it with its
 * next message, or alone (a credit-only message) once half of them are
 * owed, or when the sender says it is on its last one. The last credit is
 * kept for a message that returns credits, so two sides that both send
 * never wait for each other. A message sent without a credit waits in its
 * slot, in order, and goes as soon as one comes back: a receiver never
 * meets a sender with no receive posted (no RNR). rex_svc_send() copies the
 * bytes, so the caller's buffer is free again at once.
 * A server whose answer finds every send slot taken holds the request
 * (rex_svc_hold()) rather than copy it: its credit stays with the helper,
 * so a peer cannot make the server keep more than its receive slots.
 *
 * **One shared receive queue per device** (cfg.srq_recvs > 0;
 * rex_svc_srq.c, rex_srq.h). The receives are the server's, not each
 * connection's: one queue of cfg.srq_recvs receives per device, over a
 * pool registered once, which every QP on the device takes from. A
 * connection's share (msg_recvs with messages, its receive depth without)
 * is promised from it when the connection is accepted or dialled, and
 * given back when it ends: the peer's credits (or window) are its share,
 * and the queue holds a receive for every credit of every peer, so no
 * sender meets "receiver not ready". With messages, a server's connection
 * starts with #REX_SVC_SRQ_FIRST credits, and its accept says it may hold
 * up to msg_recvs: when its peer says it is on its last credits and the
 * queue has more to spare than two new connections would take, its share
 * doubles (more credits go back than came); when the queue is short, a
 * share above the least shrinks by one a message (one fewer goes back).
 * A connection whose share is not left is refused
 * (rex_svc_stats::srq_full), with a line that says so. A read message's
 * receive is posted again before its credit goes back, as without the
 * queue; the queue's low-water event (an eighth of it) fires only when
 * the program holds many messages at once, and refills from what the pool
 * has. The receive memory, the MRs and the receive queues no longer grow
 * with the connections: the queue bounds them, and the connections. A
 * peer that sends beyond its credits is cut off (a bad message, or its CQ,
 * sized for msg_recvs, overruns).
 *
 * **Work requests of the program's own** (RDMA READ and WRITE, or a
 * service without messages): rex_svc_post_send() and rex_svc_post_recv().
 * The wr_id is the program's: the helper keeps its books beside it (send
 * numbers, the drain marker) and hands it back in ops.done() (a signalled
 * send) and ops.recv() (a receive). Up to rex_svc_conn_max_sge()
 * scatter/gather entries per work request: the number the QP was created
 * with, read back from it (cfg.max_sge asks for it, within the device's
 * limit).
 *
 * **The end.** Any side closes with rex_svc_close(); a failed work
 * request, a dead peer (the transport gives up after about 3.8 s), a
 * missed deadline or a device error close it too. A peer that disconnects
 * is the protocol's end once the program said so (rex_svc_conn_peer_done(),
 * or cfg.peer_may_leave for a service whose peers leave when they like);
 * otherwise it is a failure, and the helper prints that. Past the drain
 * deadline a connection is released anyway: a failure, unless the protocol
 * was done and only the peer's answer to our disconnect was missing. Once
 * every work request is done or flushed, the helper releases the QP, the CQ, the
 * slots and the CM id, then calls ops.closed() with why: the last call for
 * that connection, where the program frees what it tied to it. The handle
 * is freed when it returns.
 *
 * **What the helper calls, in which order.** request (server) -> ready
 * -> accepted (server) -> established -> message, recv, done (any number;
 * message and recv may come before established) -> releasing -> closed. A
 * client's connection that got no further gets what it reached: ready
 * once its queues exist (not when the address or route failed), rejected
 * when the server refused it, releasing when it had a QP, and closed; a
 * request a server's program rejected gets nothing more.
 * No callback runs inside a call the program made but rex_svc_conn_poll(),
 * rex_svc_conn_set_busy(), rex_svc_conn_give(), rex_svc_conn_lent_poll(),
 * rex_svc_conn_lent_poll_recvs() and rex_svc_conn_unlend():
 * rex_svc_send() from within ops.message() is fine, and rex_svc_close()
 * from any callback too.
 *
 * Every line the helpers print starts with the program's name; functions
 * return 0 or a negative errno, printed already. Nothing exits the program.
 *
 * **In the program's own loop.** The helpers run in a rex_loop.h loop; a service
 * with a loop of its own (libevent, libuv, valkey's ae) runs that one
 * inside it: one fd to watch and a deferred call, no timer (rex_loop_fd();
 * tests/copy-async/evloop.c does it for libevent).
 *
 * Copy rex_svc.c, rex_svc_wr.c, rex_svc_msg.c, rex_svc_srq.c, rex_svc_priv.h,
 * rex_svc.h and rex_wire.h, with rex_buffers.c, rex_srq.c, rex_pool.c (and
 * their headers) and what rex_aconn.h lists for itself. It needs
 * libibverbs, librdmacm and Linux.
 */
#ifndef REX_SVC_H
#define REX_SVC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

#include "rex_aconn.h"
#include "rex_loop.h"
#include "rex_srq.h"

/** Bytes of the program's private data each way, at most (the CM carries
 *  56 in a connect request; the helper uses 4 of them). */
#define REX_SVC_PDATA_MAX 52
/** Bytes in front of every message: credits returned, flags. */
#define REX_SVC_MSG_HEADER 4
/** Credits a server's connection on a shared receive queue starts with
 *  (the fewest the message layer works with); its share grows up to
 *  msg_recvs while the queue has receives to spare. */
#define REX_SVC_SRQ_FIRST 4

struct rex_svc;
struct rex_svc_conn;

/** \brief Why a connection ended (ops.closed()). */
enum rex_svc_why {
	REX_SVC_DONE, /**< closed by the protocol: rex_svc_close(c, false), or an expected leave */
	REX_SVC_PEER_LEFT,   /**< the peer disconnected before the program said it was done */
	REX_SVC_REJECTED,    /**< a client's request was rejected */
	REX_SVC_UNREACHABLE, /**< address, route or handshake failed (no server, no device) */
	REX_SVC_FAILED,      /**< anything else: a failed work request, a deadline, a bad message */
};

/** \brief The name of \p why, for messages: "done", "peer left", ... */
const char *rex_svc_why_name(enum rex_svc_why why);

/** \brief What every connection of a service gets. */
struct rex_svc_config {
	const char *who;     /**< "server" or "client": after the program's name in lines */
	uint32_t send_depth; /**< send queue: messages and the program's own sends */
	uint32_t recv_depth; /**< receive queue for rex_svc_post_recv() (unused with messages) */
	uint32_t max_sge;    /**< scatter/gather entries asked per work request */
	uint32_t max_inline; /**< bytes of inline data asked per send */
	uint32_t msg_size;   /**< bytes of a message's payload, at most; 0: no messages */
	uint32_t msg_recvs;  /**< receive slots, the credits the peer gets (at least 4) */
	uint32_t msg_sends;  /**< send slots: messages in flight or waiting for a credit */
	bool peer_may_leave; /**< a peer's disconnect always ends the protocol, never a failure */
	/** No helper header in the private data: the program's bytes as the
	 *  CM carries them, for a wire format fixed before the helper. The CM
	 *  pads them (56 bytes in a connect request over RoCE), so the
	 *  protocol says its own length. Only without messages (no credits
	 *  to tell). */
	bool raw_pdata;
	/** RDMA READs and atomics in flight each way, asked for in a
	 *  client's connect request (0: none); a server grants what its
	 *  client asks. The devices' limits cap both. */
	uint8_t rd_atomic;
	/** Receives of each device's shared queue (see above); 0: every
	 *  connection has receives of its own. */
	uint32_t srq_recvs;
	/** Bytes of each shared receive, without messages (with messages:
	 *  a message with its header). */
	uint32_t srq_buf_size;
	int backlog;                /**< connect requests the kernel keeps for a server */
	struct rex_aconn_attr attr; /**< deadlines and transport settings (rex_aconn.h) */
};

/**
 * \brief The defaults: who "server", 16 sends, 16 receives, 1 SGE, no
 *        inline data, no messages (msg_recvs 8 and msg_sends 8 when
 *        msg_size is set), 16 READs and atomics in flight, backlog 64,
 *        rex_aconn_attr_default().
 */
void rex_svc_config_default(struct rex_svc_config *cfg);

/** \brief The program's side of a service. Every function may be NULL but closed. */
struct rex_svc_ops {
	/** Server: a connect request with the client's private data. An
	 *  answer, if any: up to #REX_SVC_PDATA_MAX bytes written into \p reply,
	 *  their number in *reply_len (0 when called: no answer). Return 0 to
	 *  accept, nonzero to reject (the answer goes with either). NULL:
	 *  accept all. */
	int (*request)(struct rex_svc_conn *c, const void *pdata, size_t len, void *reply,
	               size_t *reply_len);
	/** The queues exist, before the accept (server) or the connect
	 *  (client): post receives (rex_svc_post_recv()), register memory
	 *  (rex_svc_conn_pd()); a client may set its private data here, to
	 *  name that memory (rex_svc_conn_set_pdata()). Nonzero closes it. */
	int (*ready)(struct rex_svc_conn *c);
	/** Server: the accept has gone, and the QP may send from here (a
	 *  memory window's bind, rex_mw.h; a greeting). */
	void (*accepted)(struct rex_svc_conn *c);
	/** ESTABLISHED, with the peer's private data (a client reads the
	 *  server's answer here; a server gets none). */
	void (*established)(struct rex_svc_conn *c, const void *pdata, size_t len);
	/** Client: the request was rejected, with the server's answer;
	 *  ops.closed() follows with REX_SVC_REJECTED. A rejection by
	 *  nobody listening, or by the server's helper itself, carries no
	 *  answer of the program's: \p len is 0 then, or with raw_pdata,
	 *  whatever bytes the CM delivered (the program's format tells). */
	void (*rejected)(struct rex_svc_conn *c, const void *pdata, size_t len);
	/** A message of \p len bytes: valid until it returns; its receive is
	 *  posted again, and its credit owed to the peer, after it returns
	 *  (unless it called rex_svc_hold()). */
	void (*message)(struct rex_svc_conn *c, const void *msg, uint32_t len);
	/** A receive of rex_svc_post_recv() completed: \p wr_id is the
	 *  program's, \p wc says how many bytes and the immediate. On a
	 *  shared receive queue the receives are the helper's: \p wr_id is
	 *  then the address of the bytes ((const void *)(uintptr_t)wr_id),
	 *  valid until it returns, when the receive is posted again. */
	void (*recv)(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc);
	/** A signalled work request of rex_svc_post_send() completed (and
	 *  every unsignalled one before it): \p wr_id is the program's. */
	void (*done)(struct rex_svc_conn *c, uint64_t wr_id, const struct ibv_wc *wc);
	/** A send slot is free again after rex_svc_send() returned -ENOBUFS:
	 *  a sender that streams goes on here. */
	void (*send_ready)(struct rex_svc_conn *c);
	/** Every work request of \p c is done or flushed and its QP is about
	 *  to go: free what is tied to the QP (a type 2 memory window bound on
	 *  it) before it does. */
	void (*releasing)(struct rex_svc_conn *c);
	/** The connection is gone and everything of it released: the last
	 *  call for it. Free what is tied to it. */
	void (*closed)(struct rex_svc_conn *c, enum rex_svc_why why);
	/** rex_svc_stop() was called and the last connection is closed. */
	void (*stopped)(struct rex_svc *svc);
	/** A device's PD is about to go (rex_svc_destroy(), or the device was
	 *  lost and its last connection released): deregister what
	 *  the program registered in it, kept in \p dev_user
	 *  (rex_svc_conn_set_dev_user()); called only when that is set.
	 *  Nonzero: it could not (rex_svc_destroy() fails). */
	int (*device_closing)(struct rex_svc *svc, struct ibv_pd *pd, void *dev_user);
};

/**
 * \brief Make a service on \p loop: its CM channel, watched. Nothing is
 *        connected yet: rex_svc_serve() or rex_svc_dial() next.
 * \param loop  the loop that serves every connection.
 * \param cfg   copied; checked (msg_recvs at least 4 with messages).
 * \param ops   the program's callbacks, kept (not copied).
 * \param user  the program's, for rex_svc_user().
 * \return the service, or NULL after printing why.
 */
struct rex_svc *rex_svc_create(struct rex_loop *loop, const struct rex_svc_config *cfg,
                               const struct rex_svc_ops *ops, void *user);

/**
 * \brief Undo rex_svc_create(): once every connection is closed (after
 *        ops.stopped(), or before any connection). Accepts NULL.
 * \return 0, or -EBUSY when connections remain (they are left to the end
 *         of the process), or a negative errno of a release (printed).
 */
int rex_svc_destroy(struct rex_svc *svc);

/**
 * \brief A service program's last step: rex_svc_destroy(), then
 *        rex_loop_destroy(); when both went clean, the line "WHO: released
 *        everything: no QP, CQ, memory region or CM id left" on stdout (WHO:
 *        cfg.who), for a user or a test to read. Either may be NULL.
 * \return 0, or -1 when \p svc was never made or something could not be
 *         released (printed).
 */
int rex_svc_release_all(struct rex_svc *svc, struct rex_loop *loop);

/** \brief The program's pointer given to rex_svc_create(). */
void *rex_svc_user(const struct rex_svc *svc);

/**
 * \brief Serve on \p addr (IPv4 or IPv6 text; NULL: every IPv4 address,
 *        "::" every IPv6 one) and \p port: connect requests go to
 *        ops.request(). With cfg.srq_recvs, a listener bound to a
 *        device's address makes that device's shared queue now (a
 *        wildcard one, with its first connect request).
 * \return 0, or a negative errno (printed).
 */
int rex_svc_serve(struct rex_svc *svc, const char *addr, uint16_t port);

/**
 * \brief The device a server listens on when bound to an address (to
 *        refuse, at start, a device the program cannot use); NULL when it
 *        listens on every device, or does not listen.
 */
struct ibv_context *rex_svc_listen_device(const struct rex_svc *svc);

/**
 * \brief Dial \p addr (a host name or an address) and \p port: one
 *        connection, with \p len bytes of \p pdata for the server's
 *        ops.request(), and \p user as its pointer. ops.established() or
 *        ops.closed() follows.
 * \return 0, or a negative errno (printed; no callback follows then).
 */
int rex_svc_dial(struct rex_svc *svc, const char *addr, uint16_t port, const void *pdata,
                 size_t len, void *user);

/**
 * \brief Stop: stop serving, refuse new requests, close every connection
 *        (as done, not failed). ops.stopped() follows when the last one is
 *        closed (at once, from a task of the loop, when there is none).
 */
void rex_svc_stop(struct rex_svc *svc);

/** \brief Connections not closed yet. */
unsigned rex_svc_conns(const struct rex_svc *svc);

/** \brief What a service has done so far, for a program's totals. */
struct rex_svc_stats {
	unsigned long accepted; /**< requests accepted (server), connections dialled (client) */
	unsigned long rejected; /**< requests refused: a bad header, ops.request(), stopping */
	unsigned long closed;   /**< connections closed (ops.closed() called), whatever why */
	unsigned long failed;   /**< of those, closed with a why other than REX_SVC_DONE */
	/** Requests refused because the shared receive queue had not their
	 *  share left (also counted in rejected, or a client's failed). */
	unsigned long srq_full;
	/** The listener's device went away, or the CM channel failed: the
	 *  helper said so and stopped the service (as rex_svc_stop()). */
	bool listener_lost;
	/** How long reading the CM channel held the loop (its devices'). */
	struct rex_aconn_cm_stats cm;
};

/** \brief The counts of \p svc. */
void rex_svc_stats(const struct rex_svc *svc, struct rex_svc_stats *out);

/**
 * \brief The counts of the shared receive queues of \p svc, summed over
 *        its devices (min_posted: the lowest of them).
 * \return how many devices have one (0: \p out is all zero).
 */
int rex_svc_srq_stats(const struct rex_svc *svc, struct rex_srq_stats *out);

/** \brief The program's pointer of \p c (NULL until set, or rex_svc_dial()'s). */
void *rex_svc_conn_user(const struct rex_svc_conn *c);

/** \brief Set the program's pointer of \p c. */
void rex_svc_conn_set_user(struct rex_svc_conn *c, void *user);

/** \brief "connection 3 from 10.77.0.1 port 5000", for messages. */
const char *rex_svc_conn_name(const struct rex_svc_conn *c);

/** \brief The service \p c belongs to. */
struct rex_svc *rex_svc_conn_svc(const struct rex_svc_conn *c);

/** \brief The protection domain of \p c's device: register the program's
 *         memory there (shared by every connection on the device). */
struct ibv_pd *rex_svc_conn_pd(const struct rex_svc_conn *c);

/** \brief The limits of \p c's device (max_qp_wr, max_qp_rd_atom, ...), from
 *         ops.request() on. */
const struct ibv_device_attr *rex_svc_conn_device_attr(const struct rex_svc_conn *c);

/** \brief The program's pointer for \p c's device, shared by every
 *         connection on it (a memory pool registered once): NULL until set. */
void *rex_svc_conn_dev_user(const struct rex_svc_conn *c);

/** \brief Set the program's pointer for \p c's device; ops.device_closing()
 *         gets it back before the device's PD goes. */
void rex_svc_conn_set_dev_user(struct rex_svc_conn *c, void *dev_user);

/**
 * \brief From ops.request(): \p c's queues, when they differ from the
 *        configuration's (a client that asked for a deeper window). Not
 *        with messages (their slots set the receive queue). On a shared
 *        receive queue \p recvs is the connection's share of it.
 * \return 0, -EINVAL (messages, or after the queues exist), -ENOMEM (printed),
 *         -ENOBUFS (the shared receive queue has not \p recvs left; printed).
 */
int rex_svc_conn_set_depths(struct rex_svc_conn *c, uint32_t sends, uint32_t recvs);

/**
 * \brief Take \p c's completions now and deliver them, as the loop does
 *        when its completion channel wakes it: for a program that
 *        busy-polls its connections between rounds of the loop. The
 *        callbacks run inside this call; never call it for a connection
 *        after its ops.closed(). One call takes a CQ's worth at most:
 *        what the callbacks post and complete meanwhile waits for the
 *        next call (a stream that refills its window in ops.done() cannot
 *        keep it, or the loop, busy for ever).
 */
void rex_svc_conn_poll(struct rex_svc_conn *c);

/**
 * \brief Busy-polling on or off. On: the loop stops arming \p c's CQ, so
 *        the device raises no completion events the program would take
 *        anyway; the program calls rex_svc_conn_poll() itself, the loop
 *        still now and then (CM events, deadlines, a closing connection's
 *        end). Off: the CQ is armed again and polled once (callbacks run
 *        inside this call then), for what came in between.
 */
void rex_svc_conn_set_busy(struct rex_svc_conn *c, bool busy);

/** \brief A connection's QP and CQ, lent to the program: rex_svc_conn_lend(). */
struct rex_svc_lent {
	struct ibv_qp *qp; /**< post the program's sends here, wr_id rex_svc_lent_wr_id() */
	struct ibv_cq *cq; /**< poll it; pass what is not the program's to rex_svc_conn_give() */
	uint32_t room;     /**< sends of the program's that may be outstanding at once */
};

/**
 * \brief Lend \p c's QP and CQ to the program, which posts its sends and
 *        polls their completions with the verbs alone until
 *        rex_svc_conn_unlend(): perftest's way, for a timed loop in which
 *        every call counts. (06's page "part 3 in depth" measured the
 *        helper's path around one completion: 0.4 to 0.6 us more than
 *        ibv_poll_cq() alone on the lab's emulated CPU.)
 *
 * While lent, rex_svc_conn_poll() takes nothing from the CQ, and
 * rex_svc_post_send() and the messages wait (-EBUSY). The program:
 * - gives each of its sends the wr_id rex_svc_lent_wr_id(): the helper's
 *   books leave them out;
 * - has at most \p out->room of them outstanding at once;
 * - hands every other completion it polls (a receive, a send posted
 *   before the lend) to rex_svc_conn_give() at once, in the order polled
 *   (rex_svc_conn_lent_poll() polls one and does so), or takes its
 *   receives itself (rex_svc_conn_lent_poll_recvs());
 * - looks at rex_svc_conn_open() after every round of the loop it runs:
 *   once the connection is closing, the lend is over (the helper polls
 *   the CQ again to drain it, dropping the program's completions), and
 *   the QP and CQ are gone after ops.closed().
 *
 * Give them back with nothing of the program's outstanding.
 * \return 0; -ENOTCONN when \p c is not open; -EINVAL when it is lent
 *         already or not busy-polled (rex_svc_conn_set_busy(): else the
 *         loop would poll the CQ on an event); -ENOBUFS when the send
 *         queue has no room (one place is kept for the drain's marker).
 */
int rex_svc_conn_lend(struct rex_svc_conn *c, struct rex_svc_lent *out);

/** \brief The wr_id of the program's send \p id on a lent QP (its own 32
 *         bits come back in rex_wr_id_slot()). */
static inline uint64_t rex_svc_lent_wr_id(uint32_t id)
{
	return rex_wr_id(REX_WR_LENT, id);
}

/**
 * \brief \p n completions the program polled from a lent CQ that are not
 *        its own (rex_wr_id_kind() is not #REX_WR_LENT): the helper keeps
 *        its books and runs the callbacks, as rex_svc_conn_poll() would.
 */
void rex_svc_conn_give(struct rex_svc_conn *c, struct ibv_wc *wc, int n);

/**
 * \brief One poll of \p c's lent CQ, as perftest polls: one completion at
 *        most, handed to the helper (rex_svc_conn_give()) unless it is one
 *        of the program's sends.
 * \param c   the connection lent (rex_svc_conn_lend())
 * \param wc  filled with the program's send when 1 is returned: its
 *            status is the program's to check, its id in
 *            rex_wr_id_slot(wc->wr_id)
 * \return 1: the program's send in \p wc; 0: nothing, or the helper's
 *         (its callbacks ran inside this call); -ENOTCONN: the connection
 *         is closing, the lend is over (the helper drains the CQ now);
 *         -EINVAL: not lent; -EIO: ibv_poll_cq() failed.
 */
int rex_svc_conn_lent_poll(struct rex_svc_conn *c, struct ibv_wc *wc);

/**
 * \brief One poll of \p c's lent CQ, as rex_svc_conn_lent_poll(), that
 *        gives the program its receives too, as perftest takes them: no
 *        ops.recv(), and the program posts the receive again itself
 *        (rex_svc_post_recv()) once it is done with the bytes. Not for a
 *        service with messages or a shared receive queue: their receives
 *        stay the helper's (given, 0).
 * \param c   the connection lent (rex_svc_conn_lend())
 * \param wc  filled when 1 or 2 is returned
 * \return 1: the program's send in \p wc, as rex_svc_conn_lent_poll();
 *         2: a receive that succeeded in \p wc, its wr_id the program's own
 *         (given to rex_svc_post_recv()), counted in the helper's books;
 *         0: nothing, or the helper's (a failed receive: the helper said
 *         why and closes the connection); -ENOTCONN, -EINVAL, -EIO as
 *         rex_svc_conn_lent_poll().
 */
int rex_svc_conn_lent_poll_recvs(struct rex_svc_conn *c, struct ibv_wc *wc);

/** \brief The end of a lend: the helper polls the CQ again (callbacks run
 *         inside this call) and sends the messages that waited. */
void rex_svc_conn_unlend(struct rex_svc_conn *c);

/**
 * \brief From a client's ops.ready(): the private data of its connect
 *        request, in place of rex_svc_dial()'s (a hello that names memory
 *        just registered on the device: its address and rkey).
 * \return 0, or -EINVAL (not a client's, not from ops.ready(), or over
 *         #REX_SVC_PDATA_MAX bytes).
 */
int rex_svc_conn_set_pdata(struct rex_svc_conn *c, const void *pdata, size_t len);

/** \brief Whether \p c may post work: its QP is up (a client's
 *         established, a server's accepted) and nobody closed it. False
 *         from the start of its close, long before ops.releasing(). */
bool rex_svc_conn_open(const struct rex_svc_conn *c);

/** \brief Scatter/gather entries per work request of \p c (0 before its QP exists). */
uint32_t rex_svc_conn_max_sge(const struct rex_svc_conn *c);

/** \brief How a connection used its queues, for a program's debug lines. */
struct rex_svc_conn_counts {
	uint64_t sends;       /**< work requests posted: messages, the program's */
	uint64_t post_calls;  /**< ibv_post_send() calls that posted them: a chain is one */
	uint64_t completions; /**< completions taken from its CQ, sends and receives */
};

/** \brief The counts of \p c so far. */
void rex_svc_conn_counts(const struct rex_svc_conn *c, struct rex_svc_conn_counts *out);

/** \brief What the message layer did on a connection. */
struct rex_svc_msg_stats {
	uint64_t sent;        /**< messages posted */
	uint64_t received;    /**< messages delivered */
	uint64_t credit_only; /**< credit-only messages posted */
	uint64_t waits;       /**< times messages were left waiting for a credit */
};

/** \brief The message layer's counts of \p c (all 0 without messages). */
void rex_svc_conn_msg_stats(const struct rex_svc_conn *c, struct rex_svc_msg_stats *out);

/** \brief The protocol is done with \p c's peer: its disconnect is no
 *         failure, and an idle deadline (cfg.attr) that passes before it
 *         comes closes \p c as done. */
void rex_svc_conn_peer_done(struct rex_svc_conn *c);

/**
 * \brief Send a message of \p len bytes (at most cfg.msg_size), copied into
 *        a send slot. It goes now if a credit is left, else when one comes
 *        back; messages go in the order of these calls.
 * \return 0; -ENOBUFS when every send slot is taken (in flight, or waiting
 *         for a credit: not printed, the program's to handle); -EMSGSIZE;
 *         -ENOTCONN when \p c is closing; another negative errno (printed).
 */
int rex_svc_send(struct rex_svc_conn *c, const void *msg, uint32_t len);

/**
 * \brief From ops.message(), when the answer cannot go (rex_svc_send()
 *        said -ENOBUFS): keep this message. Its receive stays taken and its
 *        credit unreturned, so the peer soon stops sending; it is delivered
 *        again, before any that came after it, once a send slot is free.
 *        A request/reply server holds a request rather than copy it, and
 *        its memory stays bounded whatever the peer does.
 * \return 0, or -EINVAL outside ops.message().
 */
int rex_svc_hold(struct rex_svc_conn *c);

/**
 * \brief Post the program's chain of sends (any opcode; the wr_ids are the
 *        program's, untouched in the chain). Signal at least one in every
 *        send queue's worth.
 * \return 0, -ENOTCONN when \p c is closing, or a negative errno (printed;
 *         the work requests before the failed one are posted).
 */
int rex_svc_post_send(struct rex_svc_conn *c, struct ibv_send_wr *first);

/**
 * \brief Post the program's chain of receives (a service without
 *        messages), each completing through ops.recv() with its wr_id.
 * \return as rex_svc_post_send(); -EINVAL with messages or a shared
 *         receive queue (the helper owns the receives then).
 */
int rex_svc_post_recv(struct rex_svc_conn *c, struct ibv_recv_wr *first);

/**
 * \brief Close \p c: the drain follows, then ops.closed(). \p failed says
 *        whether the program ends it for a failure. Closing twice is harmless.
 */
void rex_svc_close(struct rex_svc_conn *c, bool failed);

#endif /* REX_SVC_H */
