/* SPDX-License-Identifier: MIT */
/*
 * The ring's bookkeeping (04-imm/wire.h), which both sides keep: the client
 * takes slots in order and gets them back as credits; the server accepts a
 * slot only if it is the next one and the client holds it. Slots must cycle
 * many times round, and every way a client can name the wrong slot must be
 * refused without changing the server's copy.
 */
#include <errno.h>
#include <stdint.h>

#include "check.h"
#include "wire.h"

static void test_init(void)
{
	struct im_ring r;

	im_ring_init(&r, 16);
	CHECK_INT_EQ(r.slots, 16);
	CHECK_INT_EQ(r.next, 0);
	CHECK_INT_EQ(r.held, 16);
	CHECK_INT_EQ(im_ring_out(&r), 0);
}

/* Writer and server side by side, many times round a 4-slot ring, with
 * credits in batches of 2: the two copies never disagree. */
static void test_cycles(void)
{
	struct im_ring client, server;
	char why[IM_WHY_SIZE];
	uint32_t slot, i, mismatches = 0, refusals = 0;

	im_ring_init(&client, 4);
	im_ring_init(&server, 4);
	for (i = 0; i < 1000; i++) {
		if (client.held == 0) {
			/* The server gives back what it has, as the real one does. */
			uint32_t n = im_ring_out(&server);

			im_ring_give(&server, n);
			im_ring_give(&client, n);
		}
		slot = im_ring_take(&client);
		if (slot != i % 4)
			mismatches++;
		if (im_ring_accept(&server, slot, why, sizeof(why)) != 0)
			refusals++;
		if (im_ring_out(&server) >= 2) {
			im_ring_give(&client, 2);
			im_ring_give(&server, 2);
		}
	}
	CHECK_INT_EQ(mismatches, 0);
	CHECK_INT_EQ(refusals, 0);
	CHECK_INT_EQ(client.next, server.next);
	CHECK_INT_EQ(client.held, server.held);
}

/* A one-slot ring: take, give back, take again. */
static void test_one_slot(void)
{
	struct im_ring r;
	char why[IM_WHY_SIZE];

	im_ring_init(&r, 1);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), 0);
	CHECK_INT_EQ(r.held, 0);
	CHECK_INT_EQ(im_ring_out(&r), 1);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), -EACCES);
	CHECK_STR_EQ(why, "slot 0 is not the client's: it holds none");
	im_ring_give(&r, 1);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), 0);
}

static void test_not_held(void)
{
	struct im_ring r, before;
	char why[IM_WHY_SIZE];

	/* Slot 0 written, not yet returned: writing it again would overwrite
	 * a message the server may not have read. */
	im_ring_init(&r, 16);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), 0);
	before = r;
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), -EACCES);
	CHECK_STR_EQ(why, "slot 0 is not the client's: it holds 15 from slot 1 on");
	CHECK_INT_EQ(r.next, before.next); /* unchanged */
	CHECK_INT_EQ(r.held, before.held);

	/* All slots written: none is the client's, whichever it names. */
	im_ring_init(&r, 4);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 1, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 2, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 3, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), -EACCES);
	CHECK_STR_EQ(why, "slot 0 is not the client's: it holds none");
	CHECK_INT_EQ(im_ring_accept(&r, 3, why, sizeof(why)), -EACCES);

	/* Two back: next is slot 0 again, so the client holds 0 and 1; slot
	 * 2 is still the server's. */
	im_ring_give(&r, 2);
	CHECK_INT_EQ(r.next, 0);
	CHECK_INT_EQ(im_ring_accept(&r, 2, why, sizeof(why)), -EACCES);
	CHECK_STR_EQ(why, "slot 2 is not the client's: it holds 2 from slot 0 on");
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 1, why, sizeof(why)), 0);
}

static void test_out_of_order(void)
{
	struct im_ring r;
	char why[IM_WHY_SIZE];

	/* Slot 1 is the client's, but slot 0 comes first. */
	im_ring_init(&r, 16);
	CHECK_INT_EQ(im_ring_accept(&r, 1, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "slot 1 out of order: the next is slot 0");
	CHECK_INT_EQ(r.next, 0);
	CHECK_INT_EQ(r.held, 16);
	/* The last slot it holds, across the end of the ring. */
	im_ring_init(&r, 4);
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 1, why, sizeof(why)), 0);
	CHECK_INT_EQ(im_ring_accept(&r, 2, why, sizeof(why)), 0);
	im_ring_give(&r, 1); /* slot 3 was never written: it holds 3 and 0 */
	CHECK_INT_EQ(im_ring_accept(&r, 0, why, sizeof(why)), -EPROTO);
	CHECK_STR_EQ(why, "slot 0 out of order: the next is slot 3");
	CHECK_INT_EQ(im_ring_accept(&r, 1, why, sizeof(why)), -EACCES);
	CHECK_STR_EQ(why, "slot 1 is not the client's: it holds 2 from slot 3 on");
	CHECK_INT_EQ(im_ring_accept(&r, 3, why, sizeof(why)), 0);
	CHECK_INT_EQ(r.next, 0);
}

/* The largest ring the immediate can address, once round and a bit. */
static void test_largest_ring(void)
{
	struct im_ring r;
	char why[IM_WHY_SIZE];
	uint32_t i, refusals = 0;

	im_ring_init(&r, IM_MAX_SLOTS);
	for (i = 0; i < IM_MAX_SLOTS + 10; i++) {
		if (i == IM_MAX_SLOTS)
			im_ring_give(&r, IM_MAX_SLOTS);
		if (im_ring_accept(&r, i % IM_MAX_SLOTS, why, sizeof(why)))
			refusals++;
	}
	CHECK_INT_EQ(refusals, 0);
	CHECK_INT_EQ(r.next, 10);
	CHECK_INT_EQ(r.held, IM_MAX_SLOTS - 10);
}

int main(void)
{
	test_init();
	test_cycles();
	test_one_slot();
	test_not_held();
	test_out_of_order();
	test_largest_ring();
	return check_finish();
}
