# shellcheck shell=bash
# 02-send-recv, part 2, exercise 2: a zero-copy echo
# (docs/02-send-recv-credits.md). The server echoes each message out of the
# receive buffer it arrived in: no send buffers, no copy. Seen from outside,
# the server then holds one memory registration, not two (rdma resource
# show mr, sampled while the client runs); and with 16 messages in flight
# the pair must not end up waiting for each other.

# The client, with the registrations sampled while it runs: each sample
# finds our server by its CM id on our port (rdma resource show cm_id: its
# pid), then lists the memory registrations (rdma resource show mr). Other
# 02 servers may run beside it (the suite runs its proofs in parallel).
# shellcheck disable=SC2016 # $c and $EX_OUT: for the shell that runs the client
sampled_client='@BIN@/02-send-recv-client -a @ADDR@ -p @PORT@ -n 5000 -w 16 & c=$!
while kill -0 $c 2>/dev/null; do
echo "@ server $(rdma resource show cm_id | grep "comm 02-send-recv-se" | grep -E "src-addr [^ ]*:@PORT@( |$)" | grep -oE "pid [0-9]+" | head -1)"
rdma resource show mr; sleep 0.1; done >"$EX_OUT/mr.txt" 2>&1
wait $c'

# server_mrs: the most memory registrations our server held in one sample.
server_mrs() {
	awk '/^@ server pid / { pid = $4; n = 0; next } /^@/ { pid = ""; next }
		pid != "" && $0 ~ (" pid " pid " ") { if (++n > max) max = n } END { print max + 0 }' "$EX_OUT/mr.txt"
}

ex_run() {
	ex_pair echo '@BIN@/02-send-recv-server -a @ADDR@ -p @PORT@' "$sampled_client"
}

ex_judge() {
	if ex_has echo '^client: nothing completed within'; then
		ex_not_yet "the pair stopped: the client waited for an echo that never came, and the server for a credit" \
			"the credit of a receive posted again only when its echo's SEND completes has no message to ride on; post a spare receive for each echo that can be in flight, so that an echo returns its own credit at once"
		return
	fi
	ex_expect echo '^client: 5000 echoes of 64 bytes intact in ' "5000 echoes, 16 in flight, came back intact" \
		"the client's lines above say what went wrong"
	local mrs
	mrs=$(server_mrs)
	echo "  (the server held $mrs memory registrations while the client ran, by rdma resource show mr)"
	if [ "$mrs" -eq 1 ]; then
		ex_ok "the server registers its receive buffers only: its echoes leave from them"
	elif [ "$mrs" -eq 0 ]; then
		ex_not_yet "no sample of rdma resource show mr caught the server's registrations" \
			"run the check again; if it says this twice, the server ended before the client"
	else
		ex_not_yet "the server holds $mrs registrations: it still copies each echo into a send buffer" \
			"send the echo from the receive buffer (its lkey is the receive buffers' MR's) and drop the send buffers"
	fi
	ex_all_ok || return
	ex_choice "Which credit comes back late once the echo leaves from the receive buffer?" c \
		"c: the receive the message came in can be posted again only when its echo's SEND completes, after the echo has left; so that echo cannot carry the receive's credit, and the next echo must. The client's messages are never delayed: the server's credits to the client (its receives for echoes) come back with every DATA." \
		"the client's credit for its receive of the echo" \
		"none: the server still returns a credit with each echo, for the same receive" \
		"the server's credit for the receive the echoed message came in"
	ex_choice "Can both sides end up waiting for each other?" b \
		"b: with 16 messages in flight and the server's 16 receives, the server can post all 16 echoes before any of their SENDs completes, so none carries a credit; then the client has none and sends nothing, and a credit that waits for the next echo waits for ever. The fix here: post a spare receive for each echo that can be in flight (32 receives for 16 credits), so an echo returns its own credit at once, and its buffer goes back to the spares when the SEND completes. Or send credits in a message of their own when none can ride on an echo." \
		"no: RC delivers every message, so a credit cannot be lost" \
		"yes: when every echo went out before any of their SENDs completed, no echo carried a credit, and the client, with none left, sends nothing that would bring the next echo" \
		"only when a message is lost"
}
