/* SPDX-License-Identifier: MIT */
/*
 * fuzz_aconn.c: the connection helper (common/rex_aconn.h) driven through
 * the orders of events the fuzzer finds, over the fake verbs and CM of
 * fake_verbs.c and the real rex_loop, and held to what its header promises
 * (issue 33, "state machine fuzzed").
 *
 * The input: settings (the fake's options, then the setup, idle, when
 * option 0x4 turns it on, and drain deadlines in ms), then actions of three
 * bytes each (act() lists them): the peer's CM events, a
 * client's connect request, completions (success, flush, error), device
 * events and failures, calls that fail, time passing, rounds of the loop,
 * and the program's own calls (post, close). At its end the program closes
 * what is left and the peer behaves, and then the deadlines pass, so that
 * every connection must be released and every object destroyed.
 *
 * Checked, with a line on stderr and abort() when broken:
 * - ops.released() exactly once per connection, from a task of the loop,
 *   with the state CLOSED and the QP, CQ and CM id gone; ASan sees any use
 *   of the connection afterwards, as released() frees it;
 * - the queues as promised: the QP one send deeper than asked (the drain
 *   marker's own slot), the CQ an entry for each work request;
 * - nothing released before drained: the QP was in the error state, every
 *   work request posted had completed (or the helper gave up for a reason
 *   it has: a dead CQ, the drain deadline, a marker refused by a failure
 *   the fuzzer asked for), our disconnect was answered; a full send queue
 *   refuses the marker only to a program that posted past its depth;
 * - a device the helper knows lost (from the device, or a connection's
 *   DEVICE_REMOVAL): its connections wait for no flush and no answer to a
 *   disconnect, and none is then cut at the drain deadline;
 * - the helper's books (sends posted and done, receives outstanding) equal
 *   the fake's after every action, and every successful completion of an
 *   open connection reaches the program, sends in order;
 * - at the end, every fake object destroyed exactly once, in order (the
 *   fake aborts otherwise), and no CM event unacknowledged;
 * - connections on a shared receive queue (a mode of the fuzzer's): the
 *   QP has no receive queue of its own and the helper counts none; each
 *   of the queue's receives a QP took comes back to the program once,
 *   either handed on as a success or through ops.srq_recv() (flushed,
 *   failed, late, or left in the CQ of a destroyed QP), never twice, never
 *   after the release, and none is lost unless its device, its CQ or its
 *   QP's move to the error state was; the queue's asynchronous events
 *   reach devs->srq_event with their device; the queue is destroyed at the
 *   device's release, after its last QP.
 *
 * FUZZ_ACONN_VERBOSE=1 lets the helper's own lines through to stderr.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>

#include "fake_verbs.h"
#include "fuzz.h"
#include "rex_aconn.h"

#define CONNS      8   /* connections of the program at once */
#define SERIALS    256 /* connections in one input, at most */
#define ROUNDS_MAX 4   /* loop rounds one action runs */

/* The program's flags for a connection, from the fuzzer. */
#define MODE_REPOST  0x1  /* post a receive again for every one taken */
#define MODE_BYE     0x2  /* peer_left() says the peer was expected to leave */
#define MODE_CLOSE   0x4  /* close at the first completion */
#define MODE_REFUSE  0x8  /* established() refuses the peer's answer */
#define MODE_MINIMAL 0x10 /* only route_resolved and released in ops */
#define MODE_REJECT  0x20 /* server: reject the connect request */
#define MODE_SRQ     0x40 /* receives from the device's shared receive queue */

#define SRQ_WRS   24   /* the program's receives in a shared queue */
#define SRQ_SLOT0 1000 /* their slots, apart from a QP's own (0, 7, 9) */

struct conn {
	struct rex_aconn ac; /* first: qp_context and id->context are &ac */
	unsigned serial, slot;
	bool server, accepted;
	uint8_t sends, recvs, mode;
	uint64_t last_send; /* the last send number the program was handed */
	bool overran;       /* the program had more sends outstanding than its depth */
	bool lost_known;    /* the helper knew its device lost, drain not cut yet */
};

/* A device's shared receive queue and the program's books of it: each
 * receive posted (out), or back with the program (not out). */
struct srq {
	struct ibv_srq *srq;
	struct rex_aconn_dev *dev;
	bool out[SRQ_WRS];
	unsigned events;
};

static struct {
	struct rex_loop *loop;
	struct rex_aconn_devs devs;
	struct rdma_cm_id *listener;
	struct conn *conns[CONNS];
	uint8_t released[SERIALS];
	unsigned serials, depth;
	bool srq_lossy; /* a device, a CQ or a move to the error state was lost */
	unsigned srqs_made, srqs_destroyed;
} P;

static void bad(const struct conn *pc, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));
static void bad(const struct conn *pc, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_aconn: invariant broken: ");
	if (pc)
		fprintf(stderr, "connection %u: ", pc->serial);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	abort();
}

static struct conn *conn_of(struct rex_aconn *ac)
{
	return (struct conn *)(void *)ac;
}

/* Where the program may post: the connection is open (a server from its
 * accept on), as rex_svc has it. */
static bool open_conn(const struct conn *pc)
{
	return pc->ac.qp && (pc->ac.state == REX_STATE_ESTABLISHED ||
	                     (pc->server && pc->accepted && pc->ac.state == REX_STATE_CONNECTING));
}

/* --- a shared receive queue ------------------------------------------------- */

/* Post receive \p k of \p s (again). */
static void srq_post(struct srq *s, unsigned k)
{
	struct ibv_recv_wr wr = {.wr_id = rex_wr_id(REX_WR_RECV, SRQ_SLOT0 + k)}, *badwr;

	if (s->out[k])
		bad(NULL, "shared receive %u posted twice", k);
	if (ibv_post_srq_recv(s->srq, &wr, &badwr) == 0)
		s->out[k] = true;
}

/* The device's queue, made with its first connection on it. */
static struct srq *srq_get(struct rex_aconn_dev *dev)
{
	struct ibv_srq_init_attr init = {.attr = {.max_wr = SRQ_WRS, .max_sge = 1}};
	struct srq *s = dev->helper;
	unsigned k;

	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->srq = ibv_create_srq(dev->pd, &init);
	if (!s->srq) {
		free(s);
		return NULL;
	}
	s->dev = dev;
	dev->helper = s;
	P.srqs_made++;
	for (k = 0; k < SRQ_WRS; k++)
		srq_post(s, k);
	return s;
}

/* A receive of the queue back with the program: handed on, or through
 * ops.srq_recv(). Posted again. */
static void srq_back(struct conn *pc, const struct ibv_wc *wc)
{
	struct srq *s = pc->ac.dev ? pc->ac.dev->helper : NULL;
	uint32_t slot = rex_wr_id_slot(wc->wr_id);

	if (!pc->ac.srq || !s)
		bad(pc, "a shared receive back on a connection without a queue");
	if (rex_wr_id_kind(wc->wr_id) != REX_WR_RECV || slot < SRQ_SLOT0 ||
	    slot >= SRQ_SLOT0 + SRQ_WRS || !s->out[slot - SRQ_SLOT0])
		bad(pc, "shared receive wr_id %#llx back, not one posted",
		    (unsigned long long)wc->wr_id);
	s->out[slot - SRQ_SLOT0] = false;
	if (!s->dev->lost)
		srq_post(s, slot - SRQ_SLOT0);
}

static void srq_recv(struct rex_aconn *c, const struct ibv_wc *wc)
{
	if (P.released[conn_of(c)->serial])
		bad(conn_of(c), "srq_recv() after the release");
	srq_back(conn_of(c), wc);
}

static void srq_event(struct rex_aconn_dev *dev, const struct ibv_async_event *event)
{
	struct srq *s = dev->helper;

	if (!s || event->element.srq != s->srq || event->event_type != IBV_EVENT_SRQ_LIMIT_REACHED)
		bad(NULL, "an SRQ event for another device's queue, or of another kind");
	s->events++;
}

/* The device's release (its last connection is gone): the queue goes,
 * every receive the QPs took back with the program, unless lost. */
static int dev_release(struct rex_aconn_dev *dev)
{
	struct srq *s = dev->helper;
	unsigned k, out = 0;
	int ret;

	if (!s)
		return 0;
	for (k = 0; k < SRQ_WRS; k++)
		out += s->out[k];
	if (!P.srq_lossy && !fake_srq_dead(s->srq) && out != fake_srq_posted(s->srq))
		bad(NULL,
		    "the shared queue holds %u receives, the program posted %u still out: "
		    "%u lost",
		    fake_srq_posted(s->srq), out, out - fake_srq_posted(s->srq));
	ret = ibv_destroy_srq(s->srq);
	if (ret)
		bad(NULL, "ibv_destroy_srq at the device's release: %d (a QP still on it?)", ret);
	P.srqs_destroyed++;
	dev->helper = NULL;
	free(s);
	return 0;
}

/* --- the program's callbacks ----------------------------------------------- */

static void on_cq(struct rex_loop *loop, struct rex_loop_cq *lcq)
{
	struct conn *pc = lcq->arg;
	struct rex_aconn *c = &pc->ac;
	struct ibv_wc wc[REX_ACONN_WC_BATCH];
	struct fake_books b;
	bool was_open;
	int good, taken, i;
	uint64_t n;

	(void)loop;
	P.depth++;
	do {
		was_open = c->state != REX_STATE_DRAINING && c->state != REX_STATE_CLOSED;
		good = rex_aconn_poll(c, wc, REX_ACONN_WC_BATCH, &taken);
		if (good < 0 || good > taken)
			bad(pc, "rex_aconn_poll: %d to act on of %d taken", good, taken);
		/* Open before and after: every success was for the program. */
		if (was_open && c->state != REX_STATE_DRAINING && fake_qp_books(c->qp, &b) &&
		    (unsigned)good != b.successes)
			bad(pc, "%d completions handed on, %u successful ones polled", good,
			    b.successes);
		for (i = 0; i < good; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				bad(pc, "a failed completion handed on (status %d)", wc[i].status);
			if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV && c->srq) {
				srq_back(pc, &wc[i]);
			} else if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_RECV) {
				if ((pc->mode & MODE_REPOST) && open_conn(pc))
					rex_aconn_post_recvs(c, NULL, 1);
			} else if (rex_wr_id_kind(wc[i].wr_id) == REX_WR_SEND) {
				n = rex_aconn_send_number(c, wc[i].wr_id);
				if (n <= pc->last_send || n > c->sq_posted)
					bad(pc, "send %llu handed on after %llu, %llu posted",
					    (unsigned long long)n,
					    (unsigned long long)pc->last_send,
					    (unsigned long long)c->sq_posted);
				pc->last_send = n;
			} else {
				bad(pc, "a completion of kind %u handed on",
				    rex_wr_id_kind(wc[i].wr_id));
			}
			if (pc->mode & MODE_CLOSE)
				rex_aconn_close(c, false);
		}
	} while (taken == REX_ACONN_WC_BATCH);
	P.depth--;
}

static int make_queues(struct conn *pc)
{
	struct rex_aconn *c = &pc->ac;
	struct rex_aconn_dev *dev = rex_aconn_dev_get(&P.devs, c->id->verbs);
	struct fake_books b;
	int ret;

	struct rex_aconn_queues q = {.sends = pc->sends, .recvs = pc->recvs};
	struct srq *s = NULL;

	if (!dev)
		return -ENODEV;
	if ((pc->mode & MODE_SRQ) && !(s = srq_get(dev)))
		return -ENOMEM;
	q.srq = s ? s->srq : NULL;
	c->lcq.arg = pc;
	ret = rex_aconn_create_queues_with(c, dev, &q, on_cq);
	/* The drain's marker has a slot of its own; every completion room;
	 * on a shared queue, no receive queue of its own. */
	if (ret == 0 && fake_qp_books(c->qp, &b) &&
	    (b.cap_sends != pc->sends + 1u || b.cap_recvs != (s ? 0u : pc->recvs) ||
	     b.cqe < pc->sends + 1 + pc->recvs || c->srq != (s != NULL)))
		bad(pc, "queues for %u sends and %u receives: QP %u and %u, CQ %d", pc->sends,
		    pc->recvs, b.cap_sends, b.cap_recvs, b.cqe);
	if (ret == 0 && pc->recvs && !s)
		ret = rex_aconn_post_recvs(c, NULL, pc->recvs);
	if (ret == 0 && s && rex_aconn_post_recvs(c, NULL, 1) != -EINVAL)
		bad(pc, "a receive of its own posted on a QP of a shared queue");
	return ret;
}

static int route_resolved(struct rex_aconn *c)
{
	struct rdma_conn_param param = {0};
	int ret;

	P.depth++;
	ret = make_queues(conn_of(c));
	if (ret == 0)
		ret = rex_aconn_connect(c, &param);
	P.depth--;
	return ret;
}

static int established(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	(void)ev;
	return (conn_of(c)->mode & MODE_REFUSE) ? -EPROTO : 0;
}

static bool peer_left(struct rex_aconn *c)
{
	return (conn_of(c)->mode & MODE_BYE) != 0;
}

static void cm_failed(struct rex_aconn *c, const struct rex_cm_event *ev)
{
	(void)ev;
	if (c->state == REX_STATE_CLOSED)
		bad(conn_of(c), "cm_failed() after the release");
}

static void releasing(struct rex_aconn *c)
{
	struct fake_books b;

	if (c->state != REX_STATE_CLOSED)
		bad(conn_of(c), "releasing() in state %s", rex_state_name(c->state));
	fake_qp_books(c->qp, &b); /* the fake aborts if the QP is gone already */
}

/* The QP has a slot more than the program asked for, the drain marker's:
 * a full send queue refuses it only if the program posted past its depth. */
static void check_marker(const struct conn *pc, bool refused_full)
{
	if (refused_full && !pc->overran)
		bad(pc, "a full send queue refused the drain's marker, %u sends never exceeded",
		    pc->sends);
}

/* [released] The end of a connection: everything the header promises. */
static void released(struct rex_aconn *c)
{
	struct conn *pc = conn_of(c);
	struct fake_grave g;
	bool had_qp = fake_grave_take(c, &g);

	if (P.depth)
		bad(pc, "released inside a call or callback of the program, not from a task");
	if (P.released[pc->serial]++)
		bad(pc, "released twice");
	if (c->state != REX_STATE_CLOSED)
		bad(pc, "released in state %s", rex_state_name(c->state));
	if (c->qp || c->cq || c->id || fake_objects_of(c))
		bad(pc, "released with its QP, CQ or CM id still there");
	if (c->await_disconnect && !c->drain_cut)
		bad(pc, "released while our disconnect was not answered");
	if (had_qp && !g.was_err && !c->cq_dead)
		bad(pc, "its QP destroyed while not in the error state");
	check_marker(pc, had_qp && g.marker_full);
	if (had_qp && g.outstanding && !c->cq_dead && !c->drain_cut && !g.marker_refused &&
	    !g.marker_full)
		bad(pc, "released with %u work requests outstanding, not drained", g.outstanding);
	if (pc->lost_known && c->drain_cut)
		bad(pc, "cut at the drain deadline, its device known lost: nothing to wait for");
	/* Its receives of a shared queue: lost with a QP destroyed outside the
	 * error state, a dead CQ, a lost device. */
	if ((pc->mode & MODE_SRQ) && (!had_qp || !g.was_err || c->cq_dead || pc->lost_known))
		P.srq_lossy = true;
	P.conns[pc->slot] = NULL;
	free(pc); /* any use of it from here on is ASan's to report */
}

static const struct rex_aconn_ops full_ops = {
    .route_resolved = route_resolved,
    .established = established,
    .peer_left = peer_left,
    .cm_failed = cm_failed,
    .releasing = releasing,
    .released = released,
    .srq_recv = srq_recv,
};
/* A connection on a shared queue needs srq_recv (its receives are the
 * queue's): the minimal set has it there. */
static const struct rex_aconn_ops minimal_ops = {
    .route_resolved = route_resolved,
    .released = released,
};
static const struct rex_aconn_ops minimal_srq_ops = {
    .route_resolved = route_resolved,
    .released = released,
    .srq_recv = srq_recv,
};

static struct conn *new_conn(bool server, uint8_t depths, uint8_t mode)
{
	struct conn *pc;
	unsigned i;

	for (i = 0; i < CONNS && P.conns[i]; i++)
		;
	if (i == CONNS || P.serials == SERIALS || !(pc = calloc(1, sizeof(*pc))))
		return NULL;
	pc->slot = i;
	pc->serial = P.serials++;
	pc->server = server;
	/* 0 sends is refused by the helper, more than 16 by the device (the
	 * fake's limit): paths too. */
	pc->sends = depths & 0x1f;
	pc->recvs = (depths >> 5) * 3;
	pc->mode = mode;
	snprintf(pc->ac.name, sizeof(pc->ac.name), "connection %u", pc->serial);
	P.conns[i] = pc;
	return pc;
}

static void start(struct conn *pc, struct rdma_cm_id *id, enum rex_state state)
{
	rex_aconn_init(&pc->ac, &P.devs, id, state,
	               !(pc->mode & MODE_MINIMAL) ? &full_ops
	               : (pc->mode & MODE_SRQ)    ? &minimal_srq_ops
	                                          : &minimal_ops);
	pc->ac.lcq.arg = pc;
}

/* A client: an id, the helper, and the address to resolve. */
static void dial(uint8_t depths, uint8_t mode)
{
	struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(7471)};
	struct rdma_cm_id *id;
	struct conn *pc = new_conn(false, depths, mode);

	if (!pc)
		return;
	if (rdma_create_id(P.devs.channel, &id, NULL, RDMA_PS_TCP)) {
		P.conns[pc->slot] = NULL;
		P.released[pc->serial] = 1; /* never the helper's */
		free(pc);
		return;
	}
	start(pc, id, REX_STATE_RESOLVING);
	if (rex_aconn_resolve(&pc->ac, (struct sockaddr *)&to))
		rex_aconn_close(&pc->ac, true);
}

static void refuse(struct rdma_cm_id *id)
{
	if (rdma_reject(id, NULL, 0) || rdma_destroy_id(id))
		bad(NULL, "rdma_reject or rdma_destroy_id of a connect request failed");
}

/* The devs' cm_fn: a server's connect requests (the rest is noted only). */
static void on_cm(struct rex_aconn_devs *devs, const struct rex_cm_event *ev, void *arg)
{
	struct rdma_conn_param param = {0};
	uint8_t depths = ev->private_data[0], mode = ev->private_data[1];
	struct conn *pc;

	(void)devs;
	(void)arg;
	if (ev->type != RDMA_CM_EVENT_CONNECT_REQUEST)
		return;
	P.depth++;
	if ((mode & MODE_REJECT) || !rex_aconn_dev_get(&P.devs, ev->id->verbs) ||
	    !(pc = new_conn(true, depths, mode))) {
		refuse(ev->id);
	} else {
		start(pc, ev->id, REX_STATE_CONNECTING);
		if (make_queues(pc) || rex_aconn_accept(&pc->ac, &param))
			rex_aconn_close(&pc->ac, true);
		else
			pc->accepted = true;
	}
	P.depth--;
}

/* --- the program's calls ------------------------------------------------------ */

/* After the program posted sends: past the depth it asked for? */
static void note_depth(struct conn *pc)
{
	pc->overran |= pc->ac.sq_posted - pc->ac.sq_done > pc->sends;
}

static void post_sends(struct conn *pc, uint8_t how)
{
	struct ibv_send_wr wr[3];
	unsigned n = how % 3 + 1, i;
	struct rex_aconn *c = &pc->ac;

	/* Within the queue's depth, unless the fuzzer says to overrun it. */
	if (!open_conn(pc) || (!(how & 0x80) && c->sq_posted - c->sq_done + n > pc->sends))
		return;
	for (i = 0; i < n; i++)
		wr[i] = (struct ibv_send_wr){
		    .opcode = IBV_WR_SEND,
		    .send_flags = (how >> (2 + i)) & 1 ? IBV_SEND_SIGNALED : 0,
		    .next = i + 1 < n ? &wr[i + 1] : NULL,
		};
	rex_aconn_post_send(c, wr);
	note_depth(pc);
}

/* A SEND WITH IMM, within the depth too unless \p imm's top bit says. */
static void post_imm(struct conn *pc, uint8_t imm)
{
	struct rex_aconn *c = &pc->ac;

	if (!open_conn(pc) || (!(imm & 0x80) && c->sq_posted - c->sq_done + 1 > pc->sends))
		return;
	rex_aconn_post_imm(c, imm);
	note_depth(pc);
}

static void post_recvs(struct conn *pc, uint8_t how)
{
	struct ibv_recv_wr wr[2] = {{.wr_id = 7, .next = &wr[1]}, {.wr_id = 9}};

	if (!open_conn(pc))
		return;
	if (how & 1)
		rex_aconn_post_recv(&pc->ac, wr);
	else
		rex_aconn_post_recvs(&pc->ac, NULL, how % 4);
}

static void run_rounds(unsigned n)
{
	while (n--)
		if (rex_loop_run_once(P.loop, 0) < 0)
			bad(NULL, "rex_loop_run_once failed");
}

/* The helper's books against the fake's, for every connection with a QP;
 * and what a lost device means to its connections. */
static void check_books(void)
{
	struct fake_books b;
	struct conn *pc;
	unsigned i;

	for (i = 0; i < CONNS; i++) {
		pc = P.conns[i];
		/* Nothing answers a disconnect on a lost device, nor flushes:
		 * no waiting, whether the helper heard of it from the device
		 * or from the connection's DEVICE_REMOVAL. */
		if (pc && pc->ac.state == REX_STATE_DRAINING &&
		    ((pc->ac.dev && pc->ac.dev->lost) || fake_removal_taken(pc->ac.id))) {
			if (pc->ac.await_disconnect || !pc->ac.cq_dead)
				bad(pc, "draining on a lost device, %s",
				    pc->ac.await_disconnect ? "awaiting the disconnect's answer"
				                            : "its CQ not known dead");
			pc->lost_known |= !pc->ac.drain_cut;
		}
		if (!pc || !fake_qp_books(pc->ac.qp, &b))
			continue;
		check_marker(pc, b.marker_full);
		if (b.sends != pc->ac.sq_posted || b.recvs != pc->ac.recvs_posted ||
		    (!b.marker_refused && !b.marker_full && b.sends_done != pc->ac.sq_done))
			bad(pc,
			    "books: helper %llu sends posted, %llu done, %u receives; "
			    "fake %llu, %llu, %u",
			    (unsigned long long)pc->ac.sq_posted,
			    (unsigned long long)pc->ac.sq_done, pc->ac.recvs_posted,
			    (unsigned long long)b.sends, (unsigned long long)b.sends_done, b.recvs);
	}
}

/* One action: \p op picks it, \p a is mostly the connection (a slot of
 * P.conns), \p b says how.
 *   0 dial a client (a: depths, b: mode)     8 post sends (b: count, signals)
 *   (8 and 10: b & 0x80 posts past the depth the program asked for)
 *   1 a connect request (a: depths, b: mode) 9 post receives
 *   2 a CM event for an id (a), b picks it  10 post a SEND WITH IMM (b: imm)
 *   3 the send queue moves (b: outcome)     11 close (b & 1: failed)
 *   4 the receive queue moves               12 rounds of the loop
 *   5 both, up to 8 times                   13 time passes (a ms, x1..x100)
 *   6 an asynchronous event (b: which)      14 a call fails next time (a: which)
 *   7 the device is lost (b: how)           15 protocol_done, the CM channel
 *                                              fails, a poll, the clock's speed */
static void act(uint8_t op, uint8_t a, uint8_t b)
{
	struct conn *pc = P.conns[a % CONNS];

	switch (op % 16) {
	case 0:
		P.depth++;
		dial(a, b);
		P.depth--;
		break;
	case 1:
		fake_connect_request((uint16_t)(a | b << 8));
		break;
	case 2:
		fake_cm_event(a, b);
		break;
	case 3:
	case 4:
		if (pc && pc->ac.qp)
			fake_progress(pc->ac.qp, op % 16 == 4, b);
		break;
	case 5:
		for (unsigned i = 0; pc && pc->ac.qp && i <= b % 8; i++) {
			fake_progress(pc->ac.qp, false, b >> 3);
			fake_progress(pc->ac.qp, true, b >> 3);
		}
		break;
	case 6:
		if (pc && pc->ac.qp)
			fake_async(pc->ac.qp, b);
		break;
	case 7:
		fake_device_lost(b);
		break;
	case 8:
	case 9:
	case 10:
	case 11:
		if (!pc)
			break;
		P.depth++;
		if (op % 16 == 8)
			post_sends(pc, b);
		else if (op % 16 == 9)
			post_recvs(pc, b);
		else if (op % 16 == 10)
			post_imm(pc, b);
		else if (op % 16 == 11)
			rex_aconn_close(&pc->ac, b & 1);
		P.depth--;
		break;
	case 12:
		run_rounds(a % ROUNDS_MAX + 1);
		break;
	case 13:
		fake_advance_ms(a * (unsigned[]){1, 1, 10, 100}[b % 4]);
		break;
	case 14:
		fake_fail_next((enum fake_call)(a % FAKE_CALLS));
		break;
	default:
		if (b % 4 == 0 && pc)
			pc->ac.protocol_done = true;
		else if (b % 4 == 1)
			fake_break_cm_channel();
		else if (b % 4 == 2 && pc) {
			P.depth++;
			rex_aconn_take_completions(&pc->ac);
			P.depth--;
		} else if (b % 4 == 3)
			fake_set_tick((uint64_t)a * 1000u); /* up to 0.26 ms a clock reading */
		break;
	}
	check_books();
}

/* The end of an input: close what is left, let the peer answer and the
 * queues flush, then the deadlines pass; everything must be released. */
static void teardown(void)
{
	unsigned i, s;

	fake_set_tick(0);
	if (P.listener && rdma_destroy_id(P.listener))
		bad(NULL, "rdma_destroy_id of the listener failed");
	P.depth++;
	for (i = 0; i < CONNS; i++)
		if (P.conns[i])
			rex_aconn_close(&P.conns[i]->ac, false);
	P.depth--;
	for (i = 0; i < 4; i++) {
		fake_settle();
		run_rounds(ROUNDS_MAX);
		check_books();
	}
	for (i = 0; i < 20 && P.devs.conns; i++) {
		fake_advance_ms(1000);
		run_rounds(ROUNDS_MAX);
		fake_settle();
		run_rounds(ROUNDS_MAX);
	}
	if (P.devs.conns)
		bad(NULL, "%u connections never released", P.devs.conns);
	/* Before the devices go: an SRQ destroyed only by the device's
	 * release, at the end or when the device was lost. */
	for (s = 0; s < P.serials; s++)
		if (P.released[s] != 1)
			bad(NULL, "connection %u released %u times", s, P.released[s]);
	if (rex_aconn_devs_destroy(&P.devs))
		bad(NULL, "rex_aconn_devs_destroy failed with no connection left");
	if (P.srqs_destroyed != P.srqs_made)
		bad(NULL, "%u shared queues made, %u destroyed at their devices' release",
		    P.srqs_made, P.srqs_destroyed);
	if (rex_loop_destroy(P.loop))
		bad(NULL, "rex_loop_destroy failed");
	fake_end();
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fake_set_quiet(!getenv("FUZZ_ACONN_VERBOSE"));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	struct rex_aconn_attr attr;
	unsigned options = (unsigned)fuzz_take(&in, 1);
	uint8_t op, a, b;

	memset(&P, 0, sizeof(P));
	fake_begin(options);
	rex_aconn_attr_default(&attr);
	/* Deadlines of a few virtual milliseconds, so that they come within
	 * an input: setup, idle (0: off), drain. */
	attr.setup_timeout_ms = 1 + (unsigned)fuzz_take(&in, 1);
	attr.idle_timeout_ms = (options & 0x4) ? 1 + (unsigned)fuzz_take(&in, 1) : 0;
	attr.drain_timeout_ms = 1 + (unsigned)fuzz_take(&in, 1);
	attr.resolve_timeout_ms = 100;
	P.loop = rex_loop_create();
	if (!P.loop || rex_aconn_devs_create(&P.devs, P.loop, "fuzz", &attr, on_cm, NULL))
		bad(NULL, "setting up the loop or the devices failed");
	P.devs.dev_release = dev_release;
	P.devs.srq_event = srq_event;
	if ((options & 0x8) && rex_aconn_listen(&P.devs, NULL, 7471, 8, &P.listener))
		bad(NULL, "rex_aconn_listen failed");
	while (in.n > 0) {
		op = (uint8_t)fuzz_take(&in, 1);
		a = (uint8_t)fuzz_take(&in, 1);
		b = (uint8_t)fuzz_take(&in, 1);
		act(op, a, b);
	}
	teardown();
	return 0;
}
