# shellcheck shell=bash
# 05-async, exercise 1: busy-poll (docs/05-async.md). The client's loop
# never sleeps: epoll_wait() with a timeout of 0, round after round, most of
# them finding nothing ready. The client's -v line counts them
# (rex_loop_rounds()): a sleeping loop has hardly any idle round, since it
# wakes only when something is ready.

ex_run() {
	ex_pair spin --stop '@BIN@/05-async-server -a @ADDR@ -p @PORT@' \
		"$EX_ROOT/exercises/rusage.py @BIN@/05-async-client -a @ADDR@ -p @PORT@ -q 1 -w 1 -n 2000 -v"
}

ex_judge() {
	ex_expect spin '^client: done: 1 connection, 0 failed$' "the client's connection did its 2000 messages and closed"
	local rounds idle
	ex_need rounds spin 'the loop ran ([0-9]+) rounds, [0-9]+ of them with nothing ready' \
		"the client's -v line about its loop" || return
	idle=$(ex_value spin 'the loop ran [0-9]+ rounds, ([0-9]+) of them with nothing ready')
	echo "  (the client's loop ran $rounds rounds, $idle of them with nothing ready; $(sed -n 's/.*rusage: //p' "$EX_OUT/spin.out"))"
	if [ "$idle" -ge 2000 ]; then
		ex_ok "the loop found nothing ready $idle times for 2000 messages: it spins instead of sleeping"
	else
		ex_not_yet "the loop found nothing ready only $idle times for 2000 messages: it still sleeps in epoll_wait()" \
			"replace rex_loop_run() in main() with while (cl.open) rex_loop_run_once(cl.loop, 0);"
	fi
	ex_all_ok || return
	ex_choice "On Soft-RoCE, who pays for the spinning?" c \
		"c: the spinning client keeps a CPU busy whether a message is due or not (see its user and system time above, against the time it ran), and on Soft-RoCE the CPUs are also the NIC: the kernel's rxe work (packets, completions) and the server compete with it for them. With one connection and one message in flight there is little to gain, since every round trip waits for the server anyway; on a NIC, with the transport in hardware, spinning buys latency for the price of one CPU." \
		"nobody: a CPU that would be idle costs nothing" \
		"only the client: it uses one CPU, the rest of the machine is untouched" \
		"the whole machine: the client holds a CPU, and here the CPUs are also the NIC, so the server and the kernel's RDMA work run slower"
}
