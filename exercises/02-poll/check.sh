# shellcheck shell=bash
# 02-send-recv, exercise 1: poll instead of sleeping (docs/02-send-recv.md).
# The client busy-polls its CQ: it no longer sleeps on the completion
# channel. The client's -v line counts those sleeps (rex_cq_sleeps()): the
# sleeping client takes one for most of its 3000 round trips, a polling one
# none. Its CPU time (the shell's time) is shown, not judged: on a loaded
# machine a spinning process does not get a whole CPU.

timed_client='bash -c '"'"'TIMEFORMAT="client cpu: user %U sys %S real %R"; time @BIN@/02-send-recv-client -a @ADDR@ -p @PORT@ -n 3000 -w 1 -v'"'"

ex_run() {
	ex_pair poll '@BIN@/02-send-recv-server -a @ADDR@ -p @PORT@' "$timed_client"
}

ex_judge() {
	ex_expect poll '^client: 3000 echoes of 64 bytes intact in ' "3000 echoes came back intact"
	local sleeps
	ex_need sleeps poll 'client: debug: slept on the completion channel ([0-9]+) times' \
		"the client's -v line about its sleeps" || return
	echo "  (the client slept on its completion channel $sleeps times; $(sed -n 's/.*client cpu: //p' "$EX_OUT/poll.out"))"
	if [ "$sleeps" -le 30 ]; then
		ex_ok "the client slept $sleeps times for 3000 round trips: it polls"
	else
		ex_not_yet "the client slept on its completion channel $sleeps times for 3000 round trips: it still waits by sleeping" \
			"replace rex_cq_wait_watch() in wait_for_completions() with a loop around ibv_poll_cq()"
	fi
	ex_all_ok || return
	ex_choice "What does each way of waiting cost, and whom?" b \
		"b: a completion channel costs each wait a system call, a sleep and a wake-up, which shows in the round trip and more in its tail (p99); polling costs a whole CPU for as long as the client waits, whether anything comes or not. On Soft-RoCE the CPU is also the NIC: the spinning client competes with the kernel's RDMA work on the same CPUs. Servers with many idle connections sleep; a benchmark or a latency-critical path polls (06's benchmark does both, -e)." \
		"polling is free: the CPU would be idle anyway, and every round trip gets shorter" \
		"sleeping costs a system call and a wake-up per wait, longer round trips (most in the p99); polling costs a whole CPU for the whole wait, even when nothing comes" \
		"sleeping costs more CPU than polling, because of the system calls"
}
