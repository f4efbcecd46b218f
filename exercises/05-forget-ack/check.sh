# shellcheck shell=bash
# 05-async, part 3, exercise 1: forget an acknowledgement
# (docs/05-async-peers.md). The break: release() no longer acknowledges
# the CQ events the loop read and had not acknowledged yet (it does so 64
# at a time). ibv_destroy_cq() waits for every event to be acknowledged, so
# the first connection to be released hangs its program, for ever. The
# check looks at where the hung server sleeps: /proc says it waits in user
# space (a futex: a condition variable), not in a system call of the device's.

ex_run() {
	# Where the server sleeps, once a second for 20 s at most (by the clock:
	# a reading takes two programs, slow in a loaded VM): kept when it has
	# slept on a futex three readings running (hung), else the last reading
	# that said anything. The pair (100 messages a connection) is done in
	# seconds unless hung; once the server has gone there is nothing more to
	# read, and when the pair is done the sampler is stopped.
	(
		w="" last="" hung=0 seen=false end=$((SECONDS + 20))
		while [ "$SECONDS" -lt "$end" ]; do
			sleep 1
			# The program itself, not the "sh -c" that scripts/pair started it with.
			pid=$(pgrep -f "^[^ ]*05-async-server -a $RDMA_LAB_ADDR -p $EX_PORT\$" | head -1)
			if [ -z "$pid" ]; then
				! $seen || break
				continue
			fi
			seen=true
			w=$(cat "/proc/$pid/wchan" 2>/dev/null) || w=""
			[ -z "$w" ] || last=$w
			if [[ "$w" == futex* ]]; then hung=$((hung + 1)); else hung=0; fi
			[ "$hung" -lt 3 ] || break
		done
		printf '%s\n' "$last" >"$EX_OUT/server-wchan.txt"
	) &
	local sampler=$!
	ex_pair ack --stop --timeout 25 '@BIN@/05-async-server -a @ADDR@ -p @PORT@' '@BIN@/05-async-client -a @ADDR@ -p @PORT@ -q 8 -w 4 -n 100'
	if [ "$(ex_exit ack)" != 124 ]; then
		kill "$sampler" 2>/dev/null
	fi
	wait "$sampler"
}

ex_judge() {
	if [ "$(ex_exit ack)" = 0 ] && ex_has ack '^client: done: '; then
		ex_not_yet "the pair ended as usual: release() still acknowledges the CQ events" \
			"delete the rex_loop_cq_ack() call in release() of common/rex_aconn.c, and rebuild"
		return
	fi
	ex_expect ack '^client: 8 connections established' "the client's 8 connections were established"
	if [ "$(ex_exit ack)" = 124 ]; then
		ex_ok "neither program finished: the time limit (25 s) ended them"
	else
		ex_not_yet "the pair should hang until its time limit (it exited $(ex_exit ack))"
	fi
	local wchan
	wchan=$(cat "$EX_OUT/server-wchan.txt" 2>/dev/null)
	if [[ "$wchan" == futex* ]]; then
		ex_ok "the server slept on a futex ($wchan in /proc/PID/wchan, 3 s running): waiting for something in its own process, not for the device"
	else
		ex_not_yet "the hung server should be asleep on a futex (its wchan: '${wchan:-no server running}')"
	fi
	ex_all_ok || return
	ex_choice "Why does the server stop there, and only since CQ events are acknowledged in batches?" b \
		"b: ibv_destroy_cq() waits until every CQ event read from the completion channel has been acknowledged (ibv_ack_cq_events()). The loop counts the events it reads and acknowledges them 64 at a time, because each acknowledgement takes a lock; release() acknowledges the rest, fewer than 64. Without that, the count never matches and ibv_destroy_cq() waits for ever, in the client and the server alike. When every event was acknowledged as it was read, nothing was ever left over. Put it back: scripts/exercise reset 05-forget-ack." \
		"the CQ still holds completions nobody polled, and ibv_destroy_cq() waits for them to be polled" \
		"ibv_destroy_cq() waits for every event read to be acknowledged; the loop acknowledges 64 at a time, and the rest of a batch was left for release()" \
		"the peer never answered the disconnect, and the CQ cannot go before the QP is disconnected"
}
