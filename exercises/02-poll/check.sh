# shellcheck shell=bash
# 02-send-recv, exercise 1: poll instead of sleeping (docs/02-send-recv.md).
# The client busy-polls its CQ: it no longer sleeps, and spins in user
# space (ibv_poll_cq() reads the CQ from user memory, no system call). Its
# user time is then a good part of the time it runs; the sleeping client's
# is a few percent. (Its system time says less: on Soft-RoCE every post is
# a system call in which the kernel does the NIC's work, sleeping or not.)

timed_client='bash -c '"'"'TIMEFORMAT="client cpu: user %U sys %S real %R"; time @BIN@/02-send-recv-client -a @ADDR@ -p @PORT@ -n 3000 -w 1'"'"

ex_run() {
	ex_pair poll '@BIN@/02-send-recv-server -a @ADDR@ -p @PORT@' "$timed_client"
}

ex_judge() {
	ex_expect poll '^client: 3000 echoes of 64 bytes intact in ' "3000 echoes came back intact"
	local line user sys real share
	line=$(sed -n 's/.*client cpu: //p' "$EX_OUT/poll.out" | tail -1)
	read -r _ user _ sys _ real <<<"$line"
	if [ -z "$real" ]; then
		ex_not_yet "the client's CPU time is missing (did it run to the end?)"
		return
	fi
	share=$(awk -v u="$user" -v r="$real" 'BEGIN { printf "%.2f", u / r }')
	echo "  (the client used ${user} s of user and ${sys} s of system time in ${real} s)"
	if awk -v x="$share" -v min="$EX_POLL_MIN_SHARE" 'BEGIN { exit !(x >= min) }'; then
		ex_ok "the client spent $share of its run in user space: it polls instead of sleeping"
	else
		ex_not_yet "the client spent only $share of its run in user space (a polling one: $EX_POLL_MIN_SHARE or more): it still sleeps" \
			"replace rex_cq_wait_watch() in wait_for_completions() with a loop around ibv_poll_cq()"
	fi
	ex_all_ok || return
	ex_choice "What does each way of waiting cost, and whom?" b \
		"b: a completion channel costs each wait a system call, a sleep and a wake-up, which shows in the round trip and more in its tail (p99); polling costs a whole CPU for as long as the client waits, whether anything comes or not. On Soft-RoCE the CPU is also the NIC: the spinning client competes with the kernel's RDMA work on the same CPUs. Servers with many idle connections sleep; a benchmark or a latency-critical path polls (06's benchmark does both, -e)." \
		"polling is free: the CPU would be idle anyway, and every round trip gets shorter" \
		"sleeping costs a system call and a wake-up per wait, longer round trips (most in the p99); polling costs a whole CPU for the whole wait, even when nothing comes" \
		"sleeping costs more CPU than polling, because of the system calls"
}
# Measured in the lab (TCG, loaded host): sleeping 0.04, polling 0.46.
EX_POLL_MIN_SHARE=0.2
