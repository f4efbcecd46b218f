# shellcheck shell=bash
# 02-send-recv, part 2, exercise 1: break the credits
# (docs/02-send-recv-credits.md). The break: the client sends without
# credits. With 64 messages in flight and the server's 16 receives, the
# SENDs beyond them meet "receiver not ready" NAKs; the sender's device
# waits the server's min_rnr_timer (655 ms: rdma_cm leaves it 0) and
# tries again, and by then the server has posted its receives again.

# rnr_naks FILE: the rcvd_rnr_err counter of every device, summed.
rnr_naks() { grep -o 'rcvd_rnr_err [0-9]*' "$1" | awk '{ n += $2 } END { print n + 0 }'; }

ex_run() {
	rdma statistic show >"$EX_OUT/stat-before.txt" 2>&1
	ex_pair nocredits '@BIN@/02-send-recv-server -a @ADDR@ -p @PORT@' '@BIN@/02-send-recv-client -a @ADDR@ -p @PORT@ -w 64 -n 200'
	rdma statistic show >"$EX_OUT/stat-after.txt" 2>&1
}

ex_judge() {
	if ex_has nocredits 'bug: sending with 0 credits'; then
		ex_not_yet "the client stopped at its own check ('sending with 0 credits')" \
			"take out that test in post_message() too"
		return
	fi
	local naks
	naks=$(($(rnr_naks "$EX_OUT/stat-after.txt") - $(rnr_naks "$EX_OUT/stat-before.txt")))
	echo "  (rdma statistic: rcvd_rnr_err went up by $naks during the run)"
	if [ "$naks" -gt 0 ]; then
		ex_ok "the client's SENDs met $naks 'receiver not ready' NAKs: it sent beyond the server's receives"
	else
		ex_not_yet "no 'receiver not ready' NAK: the client still waits for its credits" \
			"take out c->credits > 0 in ping_pong() and the credit test in post_message()"
		return
	fi
	local max_ms
	max_ms=$(sed -n 's/.*client: rtt us: .* max \([0-9.]*\)$/\1/p' "$EX_OUT/nocredits.out" | awk '{ printf "%.0f", $1 / 1000 }')
	ex_choice "What did a SEND beyond the server's 16 receives get?" b \
		"b: the server's device had no receive for it, so it answered with an RNR NAK and dropped it; the client's device waits the time the NAK names (the server's min_rnr_timer: 0, which means 655 ms, since rdma_cm leaves it unset) and sends it again, up to rnr_retry (6) times. Here the server has posted its receives again by then, so every message arrives, late." \
		"nothing: it waited in the client's send queue until a credit came" \
		"a 'receiver not ready' NAK; the client's device sent it again later, and it arrived" \
		"the client's QP failed with IBV_WC_RNR_RETRY_EXC_ERR at once"
	echo "  (in this run the slowest round trip, the 'max' of the client's rtt us line, took $max_ms ms)"
	ex_number "The slowest messages waited out one or more RNR waits. How long is one, in milliseconds?" 600 720 \
		"About 655 ms: the NAK names the receiver's min_rnr_timer, which rdma_cm leaves at 0, and 0 means the longest, 655.36 ms (common/rex_aconn.c's servers set 12: 0.64 ms). The slowest round trip here was one wait or a few. 02-send-recv.rnr shows the other end of it: its server never posts a receive, so all 6 retries meet RNR and the SEND fails with IBV_WC_RNR_RETRY_EXC_ERR after about 4 s. Credits make sure no SEND ever waits like this. Put them back: scripts/exercise reset 02-break-credits."
}
