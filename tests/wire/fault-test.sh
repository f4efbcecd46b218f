#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Faults that need a wire: a chapter's pair across two VMs (scripts/lab
# capture) while scripts/wire-fault breaks the wire between them, and what
# each side must then do, checked from its output and from the capture.
#
#   tests/wire/fault-test.sh CASE [OUT.txt]
#
#   loss-02     both VMs lose 1% of the frames they send (netem) during a
#               chapter 02 run: every echo still intact, and retransmissions
#               in the trace; and the server VM drops the acknowledgement of
#               the last echo (wire-fault lose-ack): the client, with every
#               echo, says bye and leaves before the server's device sends
#               that echo again, and the server must not fail it for that
#               (nor when the disconnect is lost too, as in acks-02)
#   acks-02     the server VM drops every acknowledgement of the last echo,
#               and the client VM holds its disconnect request 6 s: the
#               server's retries of that echo run out first (once and
#               retry_count more, IBV_WC_RETRY_EXC_ERR), and the server
#               must not fail the client for it: its BYE says every echo
#               arrived. Served, exit 0
#   loss-03     the same during a chapter 03 run: the pattern read back
#               intact, retransmissions in the trace
#   silent-03   mid-run, the server VM drops every RoCEv2 packet, both ways:
#               the client's WRITE fails with IBV_WC_RETRY_EXC_ERR after
#               retry_count + 1 tries, ack_timeout apart (common/rex_conn.c:
#               6 and 17, so 7 tries 0.54 s apart), and the time from the
#               last packet it received to the error fits them
#   linkdown-02 mid-run, the client VM's eth0 goes down: the client's send
#               fails at once (IBV_WC_LOC_QP_OP_ERR: no route) or its wait
#               for the echo times out; the server's echo fails with
#               IBV_WC_RETRY_EXC_ERR, or its wait for the next message times
#               out; both say so and exit 1 by themselves, none hangs
#   nortu-01    the client VM loses every CM ReadyToUse it sends, so the
#               server never reads ESTABLISHED: the client's disconnect
#               comes first, alone. 01's server says the client left before
#               its connection was established here, answers the
#               disconnect, and both exit 0
#   nortu-03    the same under 03's tamper server (a descriptor one byte
#               too long): the client refuses it and leaves, the server
#               reads DISCONNECTED in place of ESTABLISHED, and still finds
#               its buffer untouched (exit 0)
#
# OUT.txt: keep an excerpt of the trace and the lines that matter (the pages'
# docs/wire/*-fault-*.txt are made this way). Runs on the host: it boots its
# own VMs (skipped inside the lab VM). Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${REX_BIN:-$ROOT/build/bin}
case=${1:?case: loss-02, acks-02, loss-03, silent-03, linkdown-02, nortu-01 or nortu-03}
keep=${2:-}

if [ "${RDMA_LAB:-}" = vm ]; then
	echo "SKIP: this test boots two VMs; it runs on the host, not inside the lab VM"
	exit 77
fi

# The retry settings common/rex_conn.c gives every connection of 02 .. 04.
RETRY_COUNT=6
ACK_TIMEOUT=17
# One try: 4.096 us x 2^ACK_TIMEOUT, in microseconds (536871 us).
TRY_US=$((4096 * (1 << ACK_TIMEOUT) / 1000))

fault=wire-fault
stop=()
case "$case" in
loss-02)
	server="scripts/$fault loss 1 && scripts/$fault lose-ack 300 && exec $BIN/02-send-recv-server -a \$RDMA_LAB_ADDR"
	client="scripts/$fault loss 1 && exec $BIN/02-send-recv-client -a \$RDMA_LAB_ADDR -w 8 -n 300"
	;;
acks-02)
	server="scripts/$fault lose-ack 300 && exec $BIN/02-send-recv-server -a \$RDMA_LAB_ADDR"
	client="scripts/$fault delay-dreq 6000 && exec $BIN/02-send-recv-client -a \$RDMA_LAB_ADDR -w 8 -n 300"
	;;
loss-03)
	server="scripts/$fault loss 1 && exec $BIN/03-read-write-server -a \$RDMA_LAB_ADDR -s 64K"
	client="scripts/$fault loss 1 && exec $BIN/03-read-write-client -a \$RDMA_LAB_ADDR -s 64K -n 10"
	;;
silent-03)
	# The server would wait for the client's "done" for minutes: --stop.
	stop=(--stop)
	server="scripts/$fault silent --after 200 & exec $BIN/03-read-write-server -a \$RDMA_LAB_ADDR -s 8K"
	client="exec scripts/$fault time --until IBV_WC_RETRY_EXC_ERR $BIN/03-read-write-client -a \$RDMA_LAB_ADDR -s 8K -n 1000000"
	;;
linkdown-02)
	server="exec $BIN/02-send-recv-server -a \$RDMA_LAB_ADDR"
	client="scripts/$fault link-down --after 100 & exec $BIN/02-send-recv-client -a \$RDMA_LAB_ADDR -n 100000"
	;;
nortu-01)
	server="exec $BIN/01-connect-server -a \$RDMA_LAB_ADDR"
	client="scripts/$fault no-rtu && exec $BIN/01-connect-client -a \$RDMA_LAB_ADDR"
	;;
nortu-03)
	server="exec $BIN/03-read-write-tamper-server -a \$RDMA_LAB_ADDR -s 64K --tamper length"
	client="scripts/$fault no-rtu && exec $BIN/03-read-write-client -a \$RDMA_LAB_ADDR -s 64K"
	;;
*) echo "no such case: $case"; exit 2 ;;
esac
prog=${server##*exec }
[ -x "${prog%% *}" ] || { echo "SKIP: ${prog%% *} is not built"; exit 77; }

# shellcheck source=capture.sh
. "$(dirname "${BASH_SOURCE[0]}")/capture.sh"
# The server's waits after a link went down (10 s, then 15 s for the
# disconnect) are longer than scripts/pair's grace for it: give it 30 s.
export REX_PAIR_GRACE=30
wire_capture fault-test 150

expect() { grep -qE -- "$1" "$out" || fail "no line matching '$1'"; }

# Requests (SEND, RDMA WRITE, READ request) that a loss made the sender
# send again, as the server VM's capture shows them:
#   gap   a request whose PSN skips past the next one expected: the packets
#         between were lost on the way (a READ request of N bytes takes
#         N/MTU PSNs, one per response packet)
#   late  a PSN seen again 400 ms or more after its last time: the sender
#         waited for an acknowledgement that was lost, then sent it again
# Quick repeats (rxe sometimes sends a packet twice within milliseconds,
# with no loss) count as neither. Keys: direction and QP (both sides' QPs
# may have the same number). A line of "again": KIND, the trace's line
# number, the PSN that was missing (gap) or repeated (late), the packet.
awk 'NR > 1 && $3 == "RC" && $0 !~ /Acknowledge|Read Response/ {
	key = $2 " " (substr($0, 47, 6) + 0); psn = substr($0, 53, 9) + 0; id = key " " psn
	if ((key in next_psn) && psn > next_psn[key]) print "gap\t" NR "\t" next_psn[key] "\t" $0
	else if ((id in seen) && $1 - seen[id] >= 400) print "late\t" NR "\t" psn "\t" $0
	seen[id] = $1
	n = 1
	if ($0 ~ /Read Request/ && match($0, /len=[0-9]+/)) {
		n = int((substr($0, RSTART + 4, RLENGTH - 4) + 1023) / 1024); if (n < 1) n = 1 }
	if (!(key in next_psn) || psn + n > next_psn[key]) next_psn[key] = psn + n }' "$t" >"$work/again"
again=$(wc -l <"$work/again")

case "$case" in
loss-*)
	[ "$rc" -eq 0 ] || fail "the pair exited with $rc, not 0: 1% loss must cost time, not data"
	expect 'wire-fault: .* loses 1% of the frames it sends'
	if [ "$case" = loss-02 ]; then
		expect 'client: 300 echoes of 64 bytes intact'
		expect 'wire-fault: .* drops every RC Acknowledge of our message 300'
		expect 'server: echoed 300 messages'
		# Its disconnect lost too (1%), the server's retries run out first (acks-02).
		expect 'server: [0-9]+ echo(es)? (was|were) not acknowledged (when the client left|before our retries ran out)'
		expect 'server: client said bye'
	else
		expect 'client: wrote 65536 bytes, read them back: intact'
		expect 'server: 65536 bytes arrived intact'
	fi
	# On the server VM's eth0 a lost frame shows as a gap or a late repeat.
	gaps=$(grep -c '^gap' "$work/again") late=$(grep -c '^late' "$work/again")
	[ "$again" -ge 1 ] || fail "no retransmission in the trace (no gap, no late repeat)"
	echo "$case: $(($(wc -l <"$t") - 1)) packets; sent again after a loss: $gaps after a gap, $late after a timeout"
	if [ -n "$keep" ]; then
		# The first loss: from a few packets before it shows (a gap, or a
		# late repeat) to the lost packet sent again, or 6 packets on.
		IFS=$'\t' read -r kind line missing packet < <(head -n 1 "$work/again")
		dir=$(awk '{ print $2 }' <<<"$packet")
		end=$(awk -v from="$line" -v dir="$dir" -v psn="$missing" \
			'NR > from && $2 == dir && substr($0, 53, 9) + 0 == psn { print NR; exit }' "$t")
		[ "$kind" = gap ] && [ -n "$end" ] || end=$((line + 4))
		[ "$kind" = late ] && end=$((line + 2))
		{ head -n 1 "$t"
		  if [ "$end" -le $((line + 16)) ]; then
			sed -n "$((line > 6 ? line - 4 : 2)),$((end + 2))p" "$t"
		  else # a long way to the packet sent again: the two ends
			sed -n "$((line > 6 ? line - 4 : 2)),$((line + 6))p" "$t"
			echo "      ...  ($((end - line - 9)) packets left out)"
			sed -n "$((end - 2)),$((end + 2))p" "$t"
		  fi
		  echo "(in all $(($(wc -l <"$t") - 1)) packets; sent again after a loss: $gaps after a gap, $late after a timeout)"; } | wire_fold >"$keep"
	fi
	;;
acks-02)
	[ "$rc" -eq 0 ] || fail "the pair exited with $rc, not 0: the client was served"
	expect 'wire-fault: .* drops every RC Acknowledge of our message 300'
	expect 'wire-fault: .* holds every CM DisconnectRequest it sends for 6000 ms'
	expect 'client: 300 echoes of 64 bytes intact'
	expect 'server: echoed 300 messages'
	expect 'server: 1 echo was not acknowledged before our retries ran out: its BYE says every echo arrived'
	expect 'server: client said bye'
	expect 'server: client disconnected'
	expect 'server: done: 1 client served, 0 failed'
	# The last echo on the wire: once, and once for each retry.
	last=$(awk 'NR > 1 && $2 == "s>c" && $3 == "RC" && /Send/ { psn = substr($0, 53, 9) + 0 } END { print psn }' "$t")
	sends=$(awk -v psn="$last" 'NR > 1 && $2 == "s>c" && $3 == "RC" && /Send/ && substr($0, 53, 9) + 0 == psn' "$t" | wc -l)
	[ "$sends" -eq $((RETRY_COUNT + 1)) ] ||
		fail "the last echo went $sends times on the wire, not $((RETRY_COUNT + 1))"
	echo "acks-02: the last echo went $sends times on the wire"
	;;
silent-03)
	expect 'wire-fault: .* drops every RoCEv2 packet'
	expect '03-read-write-client: RDMA (WRITE|READ): work completion failed: transport retry counter exceeded \(IBV_WC_RETRY_EXC_ERR 12,'
	[ "$rc" -eq 1 ] || fail "the pair exited with $rc, not 1 (the client's failure)"
	# The last request the client started (a WRITE's first packet, or a
	# READ request), and how often it went: once, and once for each retry.
	awk 'NR > 1 && $2 == "c>s" && $3 == "RC" && /Write First|Write Only|Read Request/ {
		psn = substr($0, 53, 9) + 0; line[NR] = $0; p[NR] = psn; last = psn }
		END { for (i in p) if (p[i] == last) print i "\t" line[i] }' "$t" | sort -n | cut -f2- >"$work/tries"
	tries=$(wc -l <"$work/tries")
	[ "$tries" -eq $((RETRY_COUNT + 1)) ] ||
		fail "the last request went $tries times on the wire, not $((RETRY_COUNT + 1)) (once and $RETRY_COUNT retries)"
	# The gaps between the tries, in ms: from the second try on (the first
	# try's timer may have started with an earlier packet), one ack timeout.
	gaps=$(awk 'NR > 2 { printf "%d ", $1 - p } { p = $1 }' "$work/tries")
	for g in $gaps; do
		[ "$g" -ge $((TRY_US / 1000 * 9 / 10)) ] && [ "$g" -le $((TRY_US / 1000 + 300)) ] ||
			fail "tries $g ms apart, not about $((TRY_US / 1000)) ms (ack_timeout $ACK_TIMEOUT)"
	done
	# From the last packet the client received to its error: the tries after
	# the first, at least; all of them and 1.5 s of slack at most.
	silence=$(sed -nE 's/.*wire-fault: ([0-9]+)\.([0-9]+) s after rxe0 last received a packet: .*RETRY_EXC.*/\1\2/p' "$out")
	lo=$((RETRY_COUNT * TRY_US / 1000 * 9 / 10)) hi=$(((RETRY_COUNT + 1) * TRY_US / 1000 + 1500))
	if [ -z "$silence" ]; then
		fail "wire-fault did not time the client's error"
	else
		silence=$((10#$silence))
		[ "$silence" -ge "$lo" ] && [ "$silence" -le "$hi" ] ||
			fail "the error came $silence ms after the last packet, not within $lo .. $hi ms"
	fi
	echo "silent-03: the last request went $tries times, gaps (ms): $gaps; error ${silence:-?} ms after the last packet in (expected $lo .. $hi)"
	if [ -n "$keep" ]; then
		line=$(grep -nxF -- "$(head -n 1 "$work/tries")" "$t" | head -n 1 | cut -d: -f1)
		{ head -n 1 "$t"; sed -n "$((line > 6 ? line - 4 : 2)),\$p" "$t" | grep -vE 'Middle'
		  for re in 'wire-fault: .* drops every' 'client: RDMA .*IBV_WC_RETRY_EXC_ERR 12' 'wire-fault: .* s after rxe0 last received a packet: '; do
			grep -m1 -E -- "$re" "$out" | sed -E 's/^\[[a-z]+-vm\] /# /'
		  done; } | wire_fold >"$keep"
	fi
	;;
linkdown-02)
	expect 'wire-fault: .* eth0 goes down'
	# The server either had an echo on its way, never acknowledged, or was
	# waiting for the next message, and its own wait ran out.
	expect '02-send-recv-server: send: work completion failed: transport retry counter exceeded \(IBV_WC_RETRY_EXC_ERR 12,|server: nothing from .* within 10 s'
	expect 'server: done: 1 client served, 1 failed'
	# The client either was sending when its link went, and its device
	# could not (no route), or was waiting for an echo, and its own wait
	# ran out.
	expect '02-send-recv-client: send: work completion failed: local QP operation error \(IBV_WC_LOC_QP_OP_ERR 2,|client: nothing completed within 10 s'
	expect 'VMs done in .*; server VM exited with 1, client VM with 1'
	[ "$rc" -eq 1 ] || fail "the pair exited with $rc, not 1"
	! grep -q 'pair: timed out\|pair: the server is still running' "$out" || fail "a program had to be stopped"
	;;
nortu-*)
	expect 'wire-fault: .* eth0 loses every CM ReadyToUse it sends'
	# The server VM's capture: the handshake with no ReadyToUse, then the
	# client's disconnect request and the server's reply.
	grep -q 'c>s  CM ConnectRequest' "$t" || fail "no ConnectRequest in the trace"
	grep -q 's>c  CM ConnectReply' "$t" || fail "no ConnectReply in the trace"
	! grep -q 'CM ReadyToUse' "$t" || fail "a ReadyToUse reached the server: the fault did not hold"
	grep -q 'c>s  CM DisconnectRequest' "$t" || fail "no DisconnectRequest from the client in the trace"
	grep -q 's>c  CM DisconnectReply' "$t" || fail "the server did not answer the disconnect (no DisconnectReply)"
	! grep -q 'expected RDMA_CM_EVENT_ESTABLISHED' "$out" || fail "a program wanted ESTABLISHED only"
	! grep -q 'pair: timed out\|pair: the server is still running' "$out" || fail "a program had to be stopped"
	if [ "$case" = nortu-01 ]; then
		[ "$rc" -eq 0 ] || fail "the pair exited with $rc, not 0"
		expect 'server: client left before its connection was established here'
		expect 'server: client disconnected'
		expect 'client: disconnected'
	else
		# The client's refusal is its exit 1; the server's verdict is its lines.
		[ "$rc" -eq 1 ] || fail "the pair exited with $rc, not 1 (the client's refusal)"
		expect 'client: refusing the server.s descriptor: length 65537 beyond the 65536 bytes asked for'
		expect 'tamper-server: rdma_cm: .* left before its connection was established here'
		expect 'tamper-server: client disconnected'
		expect 'tamper-server: buffer untouched'
	fi
	;;
esac
wire_end
