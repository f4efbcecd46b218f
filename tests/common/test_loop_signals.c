/* SPDX-License-Identifier: MIT */
/*
 * rex_loop's signals: SIGUSR1 and SIGUSR2, raised while the loop owns them,
 * become calls of its function (not a handler, not the default action,
 * which would end this test); a second set of signals is refused; and
 * rex_loop_destroy() gives the signal mask back as it was.
 */
#include <errno.h>
#include <signal.h>

#include "check.h"
#include "rex_loop.h"

struct seen {
	int usr1, usr2, other;
};

static void on_signal(struct rex_loop *loop, int signo, void *arg)
{
	struct seen *s = arg;

	(void)loop;
	if (signo == SIGUSR1)
		s->usr1++;
	else if (signo == SIGUSR2)
		s->usr2++;
	else
		s->other++;
}

int main(void)
{
	static const int signals[] = {SIGUSR1, SIGUSR2};
	struct rex_loop *loop = rex_loop_create();
	struct seen seen = {0};
	sigset_t now;
	int i;

	CHECK_TRUE(loop != NULL);
	if (!loop)
		return check_finish();
	CHECK_INT_EQ(rex_loop_add_signals(loop, signals, 2, on_signal, &seen), 0);
	CHECK_INT_EQ(rex_loop_add_signals(loop, signals, 1, on_signal, &seen), -EBUSY);
	CHECK_INT_EQ(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	CHECK_INT_EQ(sigismember(&now, SIGUSR1), 1);

	CHECK_INT_EQ(raise(SIGUSR1), 0);
	CHECK_INT_EQ(raise(SIGUSR2), 0);
	for (i = 0; i < 100 && seen.usr1 + seen.usr2 < 2; i++)
		rex_loop_run_once(loop, 10);
	CHECK_INT_EQ(seen.usr1, 1);
	CHECK_INT_EQ(seen.usr2, 1);
	CHECK_INT_EQ(seen.other, 0);

	CHECK_INT_EQ(rex_loop_destroy(loop), 0);
	CHECK_INT_EQ(sigprocmask(SIG_BLOCK, NULL, &now), 0);
	CHECK_INT_EQ(sigismember(&now, SIGUSR1), 0);
	CHECK_INT_EQ(sigismember(&now, SIGUSR2), 0);
	return check_finish();
}
