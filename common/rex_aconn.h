/* SPDX-License-Identifier: MIT */
/**
 * \file rex_aconn.h
 * \brief The life of a connection served by an event loop (rex_loop.h), what
 *        chapter 05-async teaches, as a helper for 06 and for copiers: the
 *        devices its connections share, the CM events taken without blocking,
 *        a checked state machine, work requests counted until they complete,
 *        deadlines, the drain, and the teardown in the right order.
 *
 * rex_conn.h is the blocking half: one connection, one PD, waits that sleep.
 * This is the other half: any number of connections in one thread, where
 * nothing sleeps and every outcome arrives as an event. A program keeps a
 * ::rex_aconn_devs for all its connections and embeds a ::rex_aconn in each
 * connection of its own:
 *
 *     rex_aconn_devs_create(&devs, loop, "server", &attr, on_cm, me);
 *     rex_aconn_listen(&devs, addr, port, backlog, &listener);   a server
 *     ... on_cm(): a connect request ->
 *         dev = rex_aconn_dev_get(&devs, id->verbs);
 *         rex_aconn_init(&s->ac, &devs, id, REX_STATE_CONNECTING, &ops);
 *         rex_aconn_create_queues(&s->ac, dev, sends, recvs, 0, on_cq);
 *         rex_aconn_post_recvs(&s->ac, ...);  rex_aconn_accept(&s->ac, &param);
 *     ... any other event of a connection -> rex_aconn_cm_event(ev->id->context, ev)
 *     ... on_cq(): rex_aconn_poll() in a loop, act on what it returns
 *     ... the end: rex_aconn_close() -> DRAINING -> ops.released()
 *     rex_aconn_devs_destroy(&devs);          once every connection is released
 *
 * **States** (::rex_state): RESOLVING (client) -> CONNECTING -> ESTABLISHED
 * -> DRAINING -> CLOSED; every failure leads to DRAINING too, and a refused
 * transition is reported as a bug. Nothing is released before DRAINING is
 * over: the QP is in the error state, every work request posted has
 * completed (most as flushed), and the peer has answered our disconnect if
 * we sent one. Then a task of the loop (never the callback that closed it)
 * releases the QP, the CQ and the CM id, in that order, and calls
 * ops.released(), where the program releases its buffers and frees its
 * structure. Once the QP is destroyed the device touches none of the
 * connection's memory, so buffers may go last.
 *
 * **What a callback may free.** A connection's memory is the program's, but
 * only ops.released() may free it: the loop still holds its timer and task,
 * and its CQ's record, until then. Within a CQ function or a CM event,
 * close it (rex_aconn_close()) and return.
 *
 * **Work requests counted.** Receives are counted one by one (each completes,
 * flushed if need be). Sends are numbered: the helper writes each send's
 * wr_id as rex_wr_id(#REX_WR_SEND, number), and a completion of send n says
 * that every send up to n is done, so unsignalled sends are accounted for
 * too. When a closing connection still has sends unaccounted for, one
 * signalled marker (#REX_WR_MARKER) goes on its stopped QP: its flushed
 * completion comes after all the others (the kernel's ib_drain_sq() does the
 * same). Receives are posted with rex_wr_id(#REX_WR_RECV, slot): the low 32
 * bits are the program's.
 *
 * **Deadlines** (::rex_aconn_attr): setting up (address, route, handshake),
 * idle (an established connection with no completion at all; 0 turns it
 * off), draining. Before one declares a connection dead it reads the CQ and
 * the CM channel for an event that came already and that the loop has not
 * read yet. Taking completions reads no clock (where the clock is a system
 * call, as in a VM without a user-space clock, that would cost a call per
 * batch): they set a flag, and the idle deadline reads the time every
 * quarter of its period, so a connection last heard at s is dropped between
 * s + idle and s + 1.25 idle.
 *
 * **How long until a dead peer is noticed.** A packet that is not
 * acknowledged within 4.096 us x 2^ack_timeout is sent again, retry_count
 * times; then the work request fails with IBV_WC_RETRY_EXC_ERR. With the
 * defaults (17, 6): 7 x 0.54 s = 3.8 s. The idle deadline (05: 5 s) must be
 * longer, or a connection that a lost packet delays is dropped as idle while
 * the transport is still resending. The receiver of a SEND with no receive
 * posted answers "receiver not ready" and the sender waits min_rnr_timer
 * (12: 0.64 ms; rdma_cm leaves 0, which means 655 ms) before it tries again,
 * rnr_retry times. 7 would mean "for ever" for either count: never use it.
 *
 * **How long a disconnect may take to be answered.** rdma_disconnect()
 * sends a DREQ, and the CM resends it when no DREP has come within
 * 2 x packet life + the peer's CM response time. rdma_cm sets the packet
 * life one below the ACK timeout (16: 4.096 us x 2^16, which the CM rounds
 * to 256 ms) and the response time to 20 (4,096 ms): 4.6 s a try, up to 15
 * tries. A DREQ or DREP lost once, or a peer whose program is busy when the
 * DREQ comes (its CM answers only when the program calls rdma_disconnect()
 * too), is answered after 4.6 s at the earliest. A drain deadline shorter
 * than that gives up before the CM has tried twice, and releasing the id
 * then cancels the resend: the peer never hears of the disconnect and must
 * wait for a deadline of its own. So the drain deadline should cover two
 * tries (9.2 s: the default is 10 s).
 *
 * **The CM channel.** rex_aconn_devs_watch() reads it in the loop: events
 * are taken until none is left, but at most #REX_ACONN_CM_BUDGET of them and
 * for at most #REX_ACONN_CM_BUDGET_MS per round, so that a burst of connect
 * requests (each creating a CQ, a QP, memory, receives) never keeps the
 * completions of established connections waiting: the rest is read in the
 * next round, after the other fds.
 *
 * **Two PDs per device.** `rdma resource show pd` lists two for a
 * program on one device: librdmacm allocates one of its own for its CM ids
 * (id->pd) as soon as an id binds to the device, and keeps it while any id
 * does; the helper allocates the one all memory is registered in
 * (dev->pd), which lives as long as the device set, not as long as some id.
 *
 * **A device that goes away** (`rdma link delete`, a reset, hot unplug) is
 * noticed by IBV_EVENT_DEVICE_FATAL, by an error reading its async fd or
 * completion channel, or by a connection's RDMA_CM_EVENT_DEVICE_REMOVAL
 * (all Soft-RoCE gives). The loop stops watching its fds (no spinning), one
 * line says so, its connections close without waiting for flushes, and
 * when the last is released the device's entry goes: dev_release(), its
 * channel, its PD, and librdmacm's hold on it, so that the kernel's removal
 * can finish while the program runs on. A server listening on every address
 * serves the device again when it comes back (a new entry). A server bound
 * to the device's address loses its listener (rex_svc: listener_lost).
 *
 * Failures are printed (rex_error) before a function returns, each line
 * starting with the program's name; functions return 0 or a negative
 * errno. Nothing exits the program.
 *
 * rex_svc.h is the interface to use in a service: one call to serve, one
 * to dial, completions delivered, messages with credits. This header is
 * the engine under it, for a program that drives each step itself
 * (chapters 05 and 06).
 *
 * Copy rex_aconn.c, rex_aconn_devs.c, rex_aconn_books.c, rex_aconn_priv.h
 * and rex_aconn.h, with rex_loop.c, rex_loop_cq.c, rex_loop.h, rex_cm.c,
 * rex_cm.h, rex_buffers.h (for the wr_id layout; rex_buffers.c only if you
 * use its buffers), rex_error.c and rex_error.h. It needs libibverbs,
 * librdmacm and Linux.
 */
#ifndef REX_ACONN_H
#define REX_ACONN_H

#include <stdbool.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rex_buffers.h"
#include "rex_cm.h"
#include "rex_loop.h"

/** CM events taken from the channel in one round of the loop, at most. */
#define REX_ACONN_CM_BUDGET 32
/** Time spent on CM events in one round of the loop, at most, in ms: a
 *  connect request costs milliseconds (a CQ, a QP, memory), tens of them on
 *  an emulated CPU; completions must not wait behind a burst of them. */
#define REX_ACONN_CM_BUDGET_MS 20
/** Completions taken from a CQ at once by the helper's own polls. */
#define REX_ACONN_WC_BATCH 32

struct rex_aconn;
struct rex_aconn_dev;
struct rex_aconn_devs;

/** \brief Deadlines and transport settings of every connection of a program. */
struct rex_aconn_attr {
	/** From the first CM call (client) or the connect request (server) to
	 *  ESTABLISHED, in ms. */
	unsigned setup_timeout_ms;
	/** An established connection with no completion for this long is dropped,
	 *  in ms (default 60000); 0: never, for a protocol with deadlines of its
	 *  own. Keep it longer than the time the transport takes to notice a
	 *  dead peer (above). */
	unsigned idle_timeout_ms;
	/** From the start of a close to the last flushed completion and the
	 *  peer's answer to our disconnect, in ms; past it the connection is
	 *  released anyway, its QP first. At least two of the CM's tries of
	 *  the disconnect (above: 9.2 s); default 10000. */
	unsigned drain_timeout_ms;
	/** Address and route resolution, each, in ms. */
	unsigned resolve_timeout_ms;
	/** Local ACK timeout: 4.096 us x 2^ack_timeout a try (0 keeps rdma_cm's). */
	uint8_t ack_timeout;
	/** Resends of an unacknowledged packet (0 to 6). */
	uint8_t retry_count;
	/** Resends after "receiver not ready" (0 to 6). */
	uint8_t rnr_retry_count;
	/** What our side asks a sender to wait after "receiver not ready"
	 *  (IB encoding: 12 is 0.64 ms; 0 would be 655 ms). */
	uint8_t min_rnr_timer;
};

/**
 * \brief The defaults: setup 15 s, idle 60 s, drain 10 s, resolution 2 s
 *        each; ACK timeout 17 (0.54 s a try), retry 6, RNR retry 6, min RNR
 *        timer 12.
 *
 * Every wait on a peer has a deadline by default: a peer that connects and
 * then says nothing (a stopped process, whose kernel still acknowledges, so
 * the transport never fails) holds its connection, and whatever the program
 * gave it, for 60 to 75 s, not for ever. 60 s is far above the 3.8 s the
 * transport takes to notice a dead peer and above an interactive client's
 * pause between requests; a protocol that knows better sets its own (05:
 * 5 s), and one that waits on purpose (a long one-sided run, where the
 * server sees no completion) sets 0 and keeps deadlines of its own (06).
 */
void rex_aconn_attr_default(struct rex_aconn_attr *attr);

/**
 * \brief A CM event for the program: connect requests, and events of ids
 *        that are not (yet) connections. The event is acknowledged already.
 */
typedef void (*rex_aconn_cm_fn)(struct rex_aconn_devs *devs, const struct rex_cm_event *ev,
                                void *arg);

/**
 * \brief What the program does at the steps of a connection's life. Every
 *        function may be NULL but \p released.
 */
struct rex_aconn_ops {
	/** Client: the route is resolved; the id knows its device. Create the
	 *  queues, post receives, rex_aconn_connect(). Nonzero closes it. */
	int (*route_resolved)(struct rex_aconn *c);
	/** ESTABLISHED, with the peer's private data in \p ev (a client checks
	 *  the server's answer here). Start the protocol. Nonzero closes it, failed. */
	int (*established)(struct rex_aconn *c, const struct rex_cm_event *ev);
	/** The peer disconnected first, while the connection was established
	 *  (or, on a server, accepted and not yet reported established): its
	 *  last completions are taken already. Return true when the protocol
	 *  expected it (the peer said it was done), false for a failure (print
	 *  why: the helper does not). NULL: always a failure, and the helper
	 *  prints that the peer left. */
	bool (*peer_left)(struct rex_aconn *c);
	/** A CM event that ends the connection (REJECTED, UNREACHABLE, ...),
	 *  after the helper printed it and before it closes the connection:
	 *  the program adds its own hints. */
	void (*cm_failed)(struct rex_aconn *c, const struct rex_cm_event *ev);
	/** Optional: the QP has stopped and its work requests are done or
	 *  flushed, and the helper is about to destroy it: free here what is
	 *  tied to the QP (a type 2 memory window bound on it, rex_mw.h). */
	void (*releasing)(struct rex_aconn *c);
	/** Everything of the connection the helper owns is released (QP, CQ, CM
	 *  id): release the program's buffers and free its structure. */
	void (*released)(struct rex_aconn *c);
	/** A connection on a shared receive queue: a receive completion that
	 *  rex_aconn_poll() does not hand on (flushed, failed, or arrived
	 *  after the peer's last word). Its buffer is the shared queue's:
	 *  give it back (rex_srq.h). */
	void (*srq_recv)(struct rex_aconn *c, const struct ibv_wc *wc);
};

/** \brief One RDMA device the program's connections use. */
struct rex_aconn_dev {
	struct ibv_context *verbs;             /**< librdmacm's, shared by all ids on it */
	struct ibv_device_attr attr;           /**< its limits, asked once */
	struct ibv_pd *pd;                     /**< all memory of its connections */
	struct ibv_comp_channel *comp_channel; /**< all CQs of its connections */
	void *user;                            /**< the program's (06: its memory pool) */
	void *helper; /**< the layer above's (rex_svc: the device's shared receive queue) */
	bool watching_channel;       /**< the loop watches the completion channel */
	bool watching_async;         /**< the loop watches the async fd */
	bool lost;                   /**< gone: released with its last connection */
	struct rex_aconn_devs *devs; /**< the set it belongs to */
	struct rex_aconn *conns;     /**< its connections (device-wide events) */
	struct rex_aconn_dev *next;  /**< the set's next device */
};

/**
 * \brief How long the CM channel held the loop: rex_aconn_devs_read_cm()
 *        keeps them. A round is bounded by its budgets: at most
 *        #REX_ACONN_CM_BUDGET events, and none begun once
 *        #REX_ACONN_CM_BUDGET_MS have passed, so latest_begin_ns stays below
 *        that time and longest_round_ns below it plus longest_event_ns.
 */
struct rex_aconn_cm_stats {
	unsigned most_events;      /**< the most CM events taken in one round */
	uint64_t longest_round_ns; /**< the longest round, first event to last */
	uint64_t longest_event_ns; /**< the longest event (a connect request, mostly) */
	uint64_t latest_begin_ns;  /**< the latest an event began, from its round's start */
};

/** \brief Every device of a program, the CM channel, and the common settings. */
struct rex_aconn_devs {
	struct rex_aconn_dev *first;        /**< its devices, newest first */
	struct rex_loop *loop;              /**< serves every connection */
	const char *who;                    /**< "server" or "client": starts its lines */
	struct rdma_event_channel *channel; /**< every id's events */
	struct rex_aconn_attr attr;         /**< for every connection */
	rex_aconn_cm_fn cm_fn;              /**< the program's CM events */
	void *cm_arg;                       /**< for cm_fn */
	bool watching_cm;                   /**< the loop watches the channel */
	bool own_channel;                   /**< made by rex_aconn_devs_create() */
	unsigned conns;                     /**< connections not released yet */
	/** Called before a device's PD is released (at the end, or when the
	 *  device was lost and its last connection went), to release what dev->user
	 *  holds (memory registered in the PD), and only for a device whose
	 *  user the program set: a device that never got one has nothing of the
	 *  program's. 0 or a negative errno (printed); on failure the PD is
	 *  kept. NULL when the program has nothing. Also called for a device
	 *  whose helper is set. */
	int (*dev_release)(struct rex_aconn_dev *dev);
	/** An asynchronous event of a shared receive queue on \p dev
	 *  (IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_SRQ_ERR): for whoever made
	 *  it (rex_srq_async_event()). NULL: printed as any other event. */
	void (*srq_event)(struct rex_aconn_dev *dev, const struct ibv_async_event *event);
	struct rex_aconn_cm_stats cm_stats; /**< kept by rex_aconn_devs_read_cm() */
};

/** \brief One connection: embed it in the program's own structure. */
struct rex_aconn {
	const char *who;                    /**< the devs' who */
	char name[32 + REX_CM_ADDRESS_LEN]; /**< "connection 3 from 10.77.0.1 port 5000": the
	                                       program's */
	enum rex_state state;               /**< where it is in its life (rex_aconn_set_state()) */
	struct rex_aconn_devs *devs;        /**< the set it belongs to: settings, CM channel */
	struct rex_loop *loop;              /**< devs->loop */
	struct rdma_cm_id *id;           /**< id->context is this connection; NULL once released */
	const struct rex_aconn_ops *ops; /**< the program's steps */
	struct rex_aconn_dev *dev;       /**< NULL until its queues exist */
	struct rex_aconn *dev_prev;      /**< in dev->conns */
	struct rex_aconn *dev_next;      /**< in dev->conns */

	struct rex_loop_cq lcq; /**< the CQ's record: its cq_context; lcq.arg is the program's */
	struct ibv_cq *cq;      /**< one per connection, on the device's completion channel */
	struct ibv_qp *qp;      /**< qp_context is this connection */

	uint64_t sq_posted;    /**< number of the last send posted */
	uint64_t sq_done;      /**< every send up to this one has completed */
	uint64_t post_wrs;     /**< sends posted by rex_aconn_post_send() */
	uint64_t post_calls;   /**< its ibv_post_send() calls that posted them: a chain is one */
	uint64_t cq_taken;     /**< completions taken from the CQ, sends and receives */
	uint32_t recvs_posted; /**< receives posted and not completed (none with an SRQ) */
	uint64_t active_ns;    /**< idle deadline: when completions were last known to have come */
	bool heard;            /**< a completion was taken since the deadline last looked */
	bool active_side;      /**< we sent the connect request */
	bool await_disconnect; /**< we sent a disconnect request: DISCONNECTED will come */
	bool cq_dead;          /**< nothing more will come out of the CQ */
	bool failed;           /**< ended by a failure, not by the protocol */
	bool peer_ended;       /**< the peer disconnected, and peer_left() expected it */
	bool peer_closing;     /**< iWARP: the peer's close flushed our QP; DISCONNECTED is due */
	bool drain_cut;        /**< released at the drain deadline, not drained */
	bool srq;              /**< its receives are a shared queue's: not its own to drain */
	/** The program's protocol has ended (a BYE answered): only the peer's
	 *  disconnect is still to come, and an idle deadline that passes
	 *  first closes the connection as done, not failed (a CM message
	 *  can be late under load: the CM sends it again after seconds). */
	bool protocol_done;
	struct rex_loop_timer deadline; /**< setup, idle or drain, by state */
	struct rex_loop_task release;   /**< posted when DRAINING is over */
};

/**
 * \brief Set up \p devs with a CM event channel of its own, non-blocking and
 *        watched by \p loop: rex_aconn_devs_init() and rex_aconn_devs_watch()
 *        on a new channel (devs->channel; make every CM id on it).
 * \param devs    the set.
 * \param loop    the loop that serves every connection.
 * \param who     "server" or "client", for messages.
 * \param attr    the settings, copied; NULL for rex_aconn_attr_default().
 * \param cm_fn   the program's CM events (see ::rex_aconn_cm_fn).
 * \param cm_arg  for \p cm_fn.
 * \return 0, or a negative errno (printed) with nothing left to release.
 */
int rex_aconn_devs_create(struct rex_aconn_devs *devs, struct rex_loop *loop, const char *who,
                          const struct rex_aconn_attr *attr, rex_aconn_cm_fn cm_fn, void *cm_arg);

/**
 * \brief Undo rex_aconn_devs_create(): release the devices
 *        (rex_aconn_devs_release()) once no connection is left, and destroy
 *        the CM channel. Destroy every CM id of yours (a listener) first.
 *        Accepts a zeroed \p devs.
 * \return 0, -EBUSY when connections were not released (the devices and
 *         the channel are kept then, as the connections' CM ids still use
 *         the channel: the process's end releases them), or the first
 *         negative errno of the devices' release (printed).
 */
int rex_aconn_devs_destroy(struct rex_aconn_devs *devs);

/**
 * \brief Server: a CM id on the devs' channel, bound to \p addr (IPv4 or
 *        IPv6 text; NULL: every IPv4 address, "::" every IPv6 one) and
 *        \p port, listening with room for
 *        \p backlog connect requests. They arrive at the devs' cm_fn.
 * \param devs      the set, made by rex_aconn_devs_create().
 * \param addr      the address to bind, or NULL.
 * \param port      the port.
 * \param backlog   connect requests the kernel keeps until we take them.
 * \param listener  the id, the caller's: rdma_destroy_id() it to stop
 *                  listening (the connections it made are ids of their own).
 * \return 0, or a negative errno (printed; nothing is left).
 */
int rex_aconn_listen(struct rex_aconn_devs *devs, const char *addr, uint16_t port, int backlog,
                     struct rdma_cm_id **listener);

/**
 * \brief Set up \p devs, empty: no device until a connection needs one.
 * \param devs     the set.
 * \param loop     the loop that serves every connection.
 * \param who      "server" or "client", for messages.
 * \param channel  the CM channel of every id (made non-blocking by rex_aconn_devs_watch()).
 * \param attr     the settings, copied; NULL for rex_aconn_attr_default().
 * \param cm_fn    the program's CM events (see ::rex_aconn_cm_fn).
 * \param cm_arg   for \p cm_fn.
 */
void rex_aconn_devs_init(struct rex_aconn_devs *devs, struct rex_loop *loop, const char *who,
                         struct rdma_event_channel *channel, const struct rex_aconn_attr *attr,
                         rex_aconn_cm_fn cm_fn, void *cm_arg);

/**
 * \brief Watch the CM channel in the loop: connect requests and the events
 *        of ids that are no connection go to the devs' cm_fn, the events of
 *        a connection (id->context) to rex_aconn_cm_event().
 * \return 0, or a negative errno (printed).
 */
int rex_aconn_devs_watch(struct rex_aconn_devs *devs);

/**
 * \brief Take the CM events waiting now, within this round's budget (count
 *        and time), and hand each on as rex_aconn_devs_watch() says.
 * \return 0 when the channel is empty, 1 when events are left for the next
 *         round, or a negative errno (printed) when the channel failed.
 */
int rex_aconn_devs_read_cm(struct rex_aconn_devs *devs);

/**
 * \brief Stop watching the CM channel and every device, and release each
 *        device: dev_release, its completion channel and its PD. They fail
 *        (EBUSY) while a CQ, QP or memory region remains, which proves that
 *        every connection released its own. The CM channel stays the
 *        caller's.
 * \return 0, or the first negative errno (printed).
 */
int rex_aconn_devs_release(struct rex_aconn_devs *devs);

/**
 * \brief The device of \p verbs, set up on first use: its limits, a PD, a
 *        completion channel and its asynchronous events, both watched.
 *        A wildcard listener has no device before its first connect request:
 *        call it there.
 * \return the device, or NULL after printing why.
 */
struct rex_aconn_dev *rex_aconn_dev_get(struct rex_aconn_devs *devs, struct ibv_context *verbs);

/**
 * \brief Set up \p c for the CM id \p id (id->context = c), in state \p state
 *        (RESOLVING for a client, CONNECTING for a server), and start the
 *        setup deadline. Set c->name for messages, and c->lcq.arg for the CQ
 *        function, yourself.
 */
void rex_aconn_init(struct rex_aconn *c, struct rex_aconn_devs *devs, struct rdma_cm_id *id,
                    enum rex_state state, const struct rex_aconn_ops *ops);

/**
 * \brief Client: resolve \p addr (the route follows by itself, then
 *        ops.route_resolved). 0 or a negative errno (printed).
 */
int rex_aconn_resolve(struct rex_aconn *c, struct sockaddr *addr);

/**
 * \brief Create the connection's CQ (woken through the device's channel,
 *        polled by \p poll with lcq.arg as set before) and its RC QP: room
 *        for \p sends and \p recvs work requests, one SGE each (more:
 *        rex_aconn_create_queues_with()), \p max_inline bytes of inline
 *        data; checked against the device's limits.
 * \return 0 or a negative errno (printed); what was made is released with
 *         the connection.
 */
int rex_aconn_create_queues(struct rex_aconn *c, struct rex_aconn_dev *dev, uint32_t sends,
                            uint32_t recvs, uint32_t max_inline, rex_loop_cq_fn poll);

/** \brief What rex_aconn_create_queues_with() makes. */
struct rex_aconn_queues {
	uint32_t sends;      /**< send work requests outstanding, at most */
	uint32_t recvs;      /**< receive work requests posted, at most */
	uint32_t max_sge;    /**< scatter/gather entries per work request (0: 1) */
	uint32_t max_inline; /**< bytes of inline data per send */
	/** Receives from this shared queue (rex_srq.h), none of the QP's own:
	 *  \p recvs is then how many of them the connection may hold at once,
	 *  for the CQ's size: the peer's credits where credits bound it, else
	 *  the whole queue's depth (a peer bounded by the transport alone can
	 *  take them all before the program reads one; rex_svc does so). Its receive completions
	 *  come to this connection's CQ; the one a stopped QP had begun comes
	 *  back flushed, the rest stay in the queue for the others, so the
	 *  drain waits for none of them. */
	struct ibv_srq *srq;
};

/**
 * \brief rex_aconn_create_queues() with scatter/gather entries: \p q is
 *        checked against the device's limits (max_qp_wr, max_cqe, max_sge;
 *        counted in 64 bits); -EINVAL otherwise. The QP gets one send more
 *        than asked, the drain's marker's own slot, and the CQ an entry
 *        for every work request: sends + 1 + receives.
 *        The QP may get more than asked: ibv_query_qp() says what.
 */
int rex_aconn_create_queues_with(struct rex_aconn *c, struct rex_aconn_dev *dev,
                                 const struct rex_aconn_queues *q, rex_loop_cq_fn poll);

/**
 * \brief Client: send the connect request, with our transport settings and
 *        \p param (private data, READ depths). Receives must be posted.
 * \return 0 or a negative errno (printed).
 */
int rex_aconn_connect(struct rex_aconn *c, struct rdma_conn_param *param);

/**
 * \brief Server: accept the connect request of \p c with our transport
 *        settings and \p param. Receives must be posted: the client may send
 *        as soon as it has our answer, before our ESTABLISHED. The server
 *        may send from here on as well (rdma_accept() brings its QP to
 *        RTS): a reply to what arrives before ESTABLISHED needs no waiting.
 * \return 0 or a negative errno (printed).
 */
int rex_aconn_accept(struct rex_aconn *c, struct rdma_conn_param *param);

/**
 * \brief Post the chain of receives \p first, counted; each wr_id's upper
 *        half becomes #REX_WR_RECV, its lower half (a slot) stays the caller's.
 * \return 0 or a negative errno (printed; those before the failed one count);
 *         -EINVAL on a shared receive queue (the receives are the queue's).
 */
int rex_aconn_post_recv(struct rex_aconn *c, struct ibv_recv_wr *first);

/**
 * \brief Post \p n receives with the one SGE \p sge each (NULL: receives
 *        with no memory, for immediates), chained in batches, slot 0.
 * \return as rex_aconn_post_recv().
 */
int rex_aconn_post_recvs(struct rex_aconn *c, const struct ibv_sge *sge, unsigned n);

/**
 * \brief Post the chain of sends \p first: each gets the next number in its
 *        wr_id (rex_wr_id(#REX_WR_SEND, number); read it back from the chain
 *        with rex_aconn_send_number()). Signal at least one in every
 *        send-queue's worth, or the queue fills with sends never accounted for.
 * \return 0 or a negative errno (printed; those not posted are not counted).
 */
int rex_aconn_post_send(struct rex_aconn *c, struct ibv_send_wr *first);

/**
 * \brief Post a signalled zero-length SEND WITH IMM carrying \p imm (host
 *        order; it travels in network order): a control message, or a
 *        doorbell, that needs no memory at either end.
 * \return as rex_aconn_post_send().
 */
int rex_aconn_post_imm(struct rex_aconn *c, uint32_t imm);

/** \brief The full number of the send whose wr_id (or completion's) is \p wr_id. */
uint64_t rex_aconn_send_number(const struct rex_aconn *c, uint64_t wr_id);

/**
 * \brief Take up to \p max completions into \p wc (how many in \p taken: poll
 *        again while it is \p max) and keep the books: receives and sends
 *        outstanding, the time of the last completion. Returns how many of
 *        them, moved to the front of \p wc, are there to act on: successful
 *        completions of a connection that is not closing, markers left out.
 *        A failed one is reported and closes the connection; a flushed one
 *        of a closing connection is the end it expects. A receive that takes
 *        a message after the peer ended the connection (its disconnect came
 *        first, and the program's peer_left() expected it) arrived after the
 *        peer's last word, and nothing will read it: it is reported, and the
 *        connection counts as failed. A CQ that could not
 *        be armed again is reported and closes the connection. When the
 *        last outstanding work request of a draining connection completes,
 *        its release is posted.
 */
int rex_aconn_poll(struct rex_aconn *c, struct ibv_wc *wc, int max, int *taken);

/**
 * \brief The books of rex_aconn_poll() for \p n completions the program
 *        polled from the connection's CQ itself (a QP lent to it: rex_svc.h).
 *        Returns how many of them are there to act on, as rex_aconn_poll().
 *        A send of kind #REX_WR_LENT is the program's own and outside the
 *        books: a successful one is dropped, a failed one closes the
 *        connection as any other does.
 */
int rex_aconn_take(struct rex_aconn *c, struct ibv_wc *wc, int n);

/**
 * \brief Take whatever completions the CQ holds now, through the program's
 *        CQ function: a DISCONNECTED event and the completion of the peer's
 *        last message race on two channels, and the message must not be lost.
 */
void rex_aconn_take_completions(struct rex_aconn *c);

/**
 * \brief Handle a CM event of the connection: the resolution steps (client),
 *        ESTABLISHED, DISCONNECTED, and the failures (REJECTED, UNREACHABLE,
 *        ADDR_ERROR, ROUTE_ERROR, CONNECT_ERROR), calling ops on the way.
 *        rex_aconn_devs_watch() calls it; call it yourself only when you read
 *        the channel yourself.
 */
void rex_aconn_cm_event(struct rex_aconn *c, const struct rex_cm_event *ev);

/**
 * \brief Start closing: DRAINING. An established connection sends a
 *        disconnect request (which moves the QP to the error state); any
 *        other gets its QP moved to the error state. The work requests still
 *        posted complete as flushed; the release follows, within the drain
 *        deadline. \p failed marks it as failed. A connection closing already
 *        stays as it is (only \p failed is noted).
 */
void rex_aconn_close(struct rex_aconn *c, bool failed);

/**
 * \brief Print a line of \p c's to stderr, in one write, as the helper's
 *        own: "program: who: connection name: " and then \p fmt.
 */
void rex_aconn_say(const struct rex_aconn *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/** \brief Change the state, or report a refused transition (a bug) and return -EPERM. */
int rex_aconn_set_state(struct rex_aconn *c, enum rex_state to);

/**
 * \brief For rex_loop_add_async() (rex_aconn_dev_get() does it): a QP or CQ
 *        error closes its connection; a port error is reported; a fatal
 *        device error closes every connection on the device.
 */
void rex_aconn_async_event(struct rex_loop *loop, const struct ibv_async_event *event, void *arg);

#endif /* REX_ACONN_H */
