# shellcheck shell=bash
# 05-async, part 2, exercise 2: completions behind connect requests
# (docs/05-async-machine.md). The break: rex_aconn_devs_read_cm() in
# common/rex_aconn_devs.c takes CM events until the channel is empty or 32
# were taken, with no budget of time (REX_ACONN_CM_BUDGET_MS, 20 ms). The
# run: a 05 server with -v and 32 clients at once (many-clients.sh, the
# scenario of 05-async.many_clients). The server's last -v lines give its
# longest round of CM events and how far into its round an event began at
# the latest. With the budget no event begins 20 ms or more into its round;
# one that did tells the break is in place, whatever the machine's speed.
# The clients' round trips are shown, not judged: they depend on the load.

ex_run() {
	ex_pair many --stop --timeout 240 '@BIN@/05-async-server -a @ADDR@ -p @PORT@ -v' \
		"$EX_DIR/many-clients.sh @BIN@ @ADDR@ @PORT@"
}

ex_judge() {
	local round begun rtt failed
	# Every client must have ended and said how it went; some may have
	# failed: starved of their echoes for the clients' 5 s deadline, which
	# the break can cause on a loaded machine. The server must have served
	# them all and said so.
	ex_need failed many 'check: 32 clients ended well, ([0-9]+) failed' "the clients' summary line" || return
	ex_expect many '^server: done: 64 connections served, [0-9]+ failed, 0 rejected' \
		"the server served the 64 connections and ended when told to"
	ex_need round many 'CM events in a round \(budget [0-9]+\), the longest ([0-9.]+) ms' "the server's 'loop:' line" || return
	ex_need begun many 'latest begun ([0-9.]+) ms into its round' "the server's 'loop:' line" || return
	ex_all_ok || return
	rtt=$(ex_value many 'round trips: (median [0-9]+ us, highest [0-9]+ us)')
	echo "  (the clients' largest round trips: ${rtt:-none}; clients that failed: $failed)"
	if awk -v b="$begun" 'BEGIN { exit !(b <= 20) }'; then
		ex_not_yet "no CM event began more than 20 ms into its round (at the latest $begun ms; the longest round took $round ms): the time budget is still there" \
			"in rex_aconn_devs_read_cm() of common/rex_aconn_devs.c, delete the test 'if (n > 0 && now >= until) break;' and the variable until, and rebuild"
		return
	fi
	ex_ok "a CM event began $begun ms into its round, past the budget of 20 ms; the longest round took $round ms"
	ex_number "Without the time budget, how many CM events can one round take at most?" 32 32 \
		"REX_ACONN_CM_BUDGET, 32 (common/rex_aconn.h): the 'loop:' line names it. Each connect request costs milliseconds (a CQ, a QP, memory, receives posted), so 32 of them can hold the loop for hundreds of milliseconds."
	ex_choice "The first echoes of the clients connected first: where did they wait?" c \
		"Their completions had arrived: the CQ's event was in the completion channel, ready. But the loop reads its fds one at a time, in a round, and the CM channel's callback was reading a burst of connect requests, each one creating a CQ, a QP and memory, until 32 were taken. On a loaded machine the wait can pass the clients' deadline (nothing for 5 s: the connection is dropped). The time budget ends such a round after 20 ms and lets the completions through; compare the clients' round trips with the budget put back (scripts/exercise reset 05-starve-cm, then check again)." \
		"in the client's send queue: the client could not post them" \
		"on the wire: Soft-RoCE was busy with the connect requests' packets" \
		"in the server's completion channel, ready, while the loop was still in one round of CM events" \
		"in the server's receive queue: it had no receives posted yet"
}
