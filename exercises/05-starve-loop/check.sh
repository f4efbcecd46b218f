# shellcheck shell=bash
# 05-async, part 2, exercise 1: starve the loop (docs/05-async-machine.md).
# The break: cq_events() in common/rex_loop_cq.c takes CQ events until the
# channel is empty, not at most REX_LOOP_BUDGET (64) a round. The run: a 05
# server with -v and one client of 32 busy connections (sigint-client.sh);
# once all 32 are established and have echoed for 4 s, SIGINT to the server.
# The server's last -v line says how many completion events its longest
# round took: never more than 64 with the budget, so more than 64 tells the
# break is in place whatever the machine's speed. How long the signal
# waited is shown, not judged: it depends on when the channel runs dry.

ex_run() {
	ex_pair sigint --timeout 150 '@BIN@/05-async-server -a @ADDR@ -p @PORT@ -v' \
		"$EX_DIR/sigint-client.sh @BIN@ @ADDR@ @PORT@"
}

ex_judge() {
	local most took
	ex_expect sigint '^client: 32 connections established' "the client's 32 connections were established"
	ex_expect sigint '^check: SIGINT to the server$' "SIGINT was sent to the server 4 s later"
	ex_expect sigint '^server: SIGINT: no new connections; closing 32 open$' "the server saw its SIGINT and closed the 32 connections"
	ex_need most sigint 'loop: at most ([0-9]+) completion events in a round' "the server's 'loop:' line" || return
	ex_all_ok || return
	took=$(ex_since sigint '^check: SIGINT to the server$' '^server: SIGINT: ')
	echo "  (the server saw the signal $took s after it was sent)"
	if [ "$most" -le 64 ]; then
		ex_not_yet "the longest round took $most completion events: the budget of 64 is still there" \
			"in cq_events() of common/rex_loop_cq.c, make the loop for (taken = 0;; taken++), and rebuild"
		return
	fi
	ex_ok "one round took $most completion events, while the signal, the CM and the timers waited"
	ex_number "With the budget back, how many completion events can one round take at most?" 64 64 \
		"REX_LOOP_BUDGET, 64 (common/rex_loop.h): the 'loop:' line names it. A round of 64 events is over in milliseconds; the signalfd, the CM channel and the timerfd are read in the same round, after it."
	ex_choice "Without the budget, what ends a round of completion events?" b \
		"Only an empty channel. The loop takes its ready fds one at a time, in a round, and calls epoll_wait() again when the round's callbacks return: the signalfd, the CM channel and the timerfd wait for the completion channel's callback. Without the budget that callback returns when the channel runs dry, and with 32 busy connections each completion it handles sends an echo whose answer raises the next event; in the lab it ran dry after 100 to 1,800 events, and the signal waited anything from a hundredth of a second to two seconds (up to 0.7 s with the budget, on a loaded machine): that is why this check reads the count, not the wait. Enough busy peers could keep the channel from running dry at all, and the signal, the CM's events and the deadlines would wait as long: the budget makes a round's length the server's choice, not the peers'. Put it back: scripts/exercise reset 05-starve-loop." \
		"the size of the CQ: a round stops when the CQ it polls is empty" \
		"only an empty completion channel, however long the peers keep it busy" \
		"the kernel's scheduler, which preempts the loop after a time slice and lets the signal in" \
		"epoll_wait()'s timeout"
}
