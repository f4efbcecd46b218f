/* SPDX-License-Identifier: MIT */
/*
 * The shares of a shared receive queue (rex_svc_srq.c), the rule alone: a
 * connection starts with REX_SVC_SRQ_FIRST credits; when its peer says it
 * is on its last ones and the queue has more unpromised than two new
 * connections' worth, the share doubles, up to the cap and to what is
 * spare; when the queue has less than that, a share above the least gives
 * one credit back per message; otherwise it stays. A share never goes
 * below the least, never above the cap, and never takes the last two
 * connections' worth.
 */
#include "check.h"
#include "rex_svc_priv.h"

int main(void)
{
	const uint32_t first = REX_SVC_SRQ_FIRST, reserve = 2 * REX_SVC_SRQ_FIRST;
	uint32_t share, free_now, step;

	CHECK_INT_EQ(first, 4);
	/* Growth: doubling, to the cap. */
	CHECK_INT_EQ(rex_svc_srq_next_share(4, 16, 1000, true), 8);
	CHECK_INT_EQ(rex_svc_srq_next_share(8, 16, 1000, true), 16);
	CHECK_INT_EQ(rex_svc_srq_next_share(16, 16, 1000, true), 16);
	CHECK_INT_EQ(rex_svc_srq_next_share(12, 16, 1000, true), 16);
	/* Not asked: it stays. */
	CHECK_INT_EQ(rex_svc_srq_next_share(4, 16, 1000, false), 4);
	CHECK_INT_EQ(rex_svc_srq_next_share(12, 16, 1000, false), 12);
	/* Only what is spare beyond the reserve. */
	CHECK_INT_EQ(rex_svc_srq_next_share(4, 16, reserve + 3, true), 7);
	CHECK_INT_EQ(rex_svc_srq_next_share(4, 16, reserve, true), 4);
	/* A short queue: one back per message, down to the least. */
	CHECK_INT_EQ(rex_svc_srq_next_share(16, 16, reserve - 1, true), 15);
	CHECK_INT_EQ(rex_svc_srq_next_share(5, 16, 0, false), 4);
	CHECK_INT_EQ(rex_svc_srq_next_share(4, 16, 0, false), 4);
	/* A cap at the least: it never moves. */
	CHECK_INT_EQ(rex_svc_srq_next_share(4, 4, 1000, true), 4);

	/* Every start, every spare: within [first, cap], never into the reserve
	 * by growing, and a step of at most doubling. */
	for (share = first; share <= 64; share++)
		for (free_now = 0; free_now <= 200; free_now++)
			for (step = 0; step < 2; step++) {
				uint32_t next = rex_svc_srq_next_share(share, 64, free_now, step);

				if (!check_record(
				        next >= first && next <= 64 && next <= 2 * share &&
				        (next <= share || next - share <= free_now - reserve)))
					printf("share %u free %u low %u -> %u\n", share, free_now,
					       step, next);
			}
	return check_finish();
}
