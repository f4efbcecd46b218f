#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The tests labelled "wire": a chapter's pair across two VMs on one virtual
# wire, captured (scripts/lab capture), decoded (scripts/wire-trace), and the
# protocol the chapter's page claims checked packet by packet, so that a page
# cannot claim what the code does not put on the wire. Each is also that
# chapter's end-to-end pair across two hosts.
#
#   tests/wire/wire-test.sh CHAPTER [OUT.txt]
#
# CHAPTER is 01 .. 06, or 06g (06's grants: memory windows). OUT.txt: where to keep the trace (the pages' traces in
# docs/wire/ are made this way: each page names the command). Runs on the host: it
# boots its own VMs (skipped inside the lab VM). Exit: 0 pass, 1 fail, 77 skipped.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${REX_BIN:-$ROOT/build/bin}
chapter=${1:?chapter 01..06}
keep=${2:-}

if [ "${RDMA_LAB:-}" = vm ]; then
	echo "SKIP: this test boots two VMs; it runs on the host, not inside the lab VM"
	exit 77
fi
# The chapter's commands, small runs. $RDMA_LAB_ADDR is the server VM's address.
stop=()
case "$chapter" in
01) server="$BIN/01-connect-server -a \$RDMA_LAB_ADDR" client="$BIN/01-connect-client -a \$RDMA_LAB_ADDR" ;;
02) server="$BIN/02-send-recv-server -a \$RDMA_LAB_ADDR" client="$BIN/02-send-recv-client -a \$RDMA_LAB_ADDR -n 3" ;;
03) server="$BIN/03-read-write-server -a \$RDMA_LAB_ADDR -s 8K" client="$BIN/03-read-write-client -a \$RDMA_LAB_ADDR -s 8K -n 1" ;;
04) server="$BIN/04-imm-server -a \$RDMA_LAB_ADDR -s 1K -k 4" client="$BIN/04-imm-client -a \$RDMA_LAB_ADDR -s 1K -n 6" ;;
05) stop=(--stop) server="$BIN/05-async-server -a \$RDMA_LAB_ADDR" client="$BIN/05-async-client -a \$RDMA_LAB_ADDR -q 3 -w 2 -n 4" ;;
06) stop=(--stop) server="$BIN/06-mr-pool-server -B \$RDMA_LAB_ADDR -s 64K -o write" client="$BIN/06-mr-pool-client -o write -s 64K -n 200 \$RDMA_LAB_ADDR" ;;
# 06's grants: the hostile client's stale-inv case, a SEND WITH INVALIDATE of its
# window's key, then a WRITE with that key, which earns a NAK.
06g) stop=(--stop) server="$BIN/06-mr-pool-server -B \$RDMA_LAB_ADDR -s 64K -o write" client="$BIN/../tests/06-mr-pool-grant-client -a \$RDMA_LAB_ADDR --case stale-inv" ;;
*) echo "no such chapter: $chapter"; exit 2 ;;
esac
[ -x "${server%% *}" ] || { echo "SKIP: ${server%% *} is not built"; exit 77; }

# shellcheck source=capture.sh
. "$(dirname "${BASH_SOURCE[0]}")/capture.sh"
wire_capture wire-test 120
[ "$rc" -eq 0 ] || { echo "FAIL: scripts/lab capture exited with $rc after ${took}s"; exit 1; }
# The kept trace (a page's): its first 60 packets, and a line counting the rest.
[ -z "$keep" ] || "$ROOT/scripts/wire-trace" --max 60 --width 100 "$work/wire.pcap" >"$keep" || { echo "FAIL: cannot write $keep"; exit 1; }
echo "--- trace: $(($(wc -l <"$t") - 1)) packets, the first 40 ---"
head -n 41 "$t"

# what: the opcode column (after ms and dir) of the packets, without the header.
# (A file, not a pipe: "grep -q" leaves early, and pipefail would count it.)
awk 'NR > 1 { w = substr($0, 17, 30); sub(/ +$/, "", w); print w }' "$t" >"$work/whats"
whats() { cat "$work/whats"; }
has() { grep -qxF -- "$1" "$work/whats" || fail "no '$1' on the wire"; }
none() { ! grep -qE -- "$1" "$work/whats" || fail "unexpected on the wire: $(grep -E -- "$1" "$work/whats" | sort -u | tr '\n' ',')"; }

# Every chapter connects and disconnects through the CM.
for m in ConnectRequest ConnectReply ReadyToUse DisconnectRequest DisconnectReply; do
	has "CM $m"
done
case "$chapter" in
01)
	none '^RC ' # 01 moves no data: only the CM's messages (on QP 1)
	;;
02)
	has "RC Send Only"
	has "RC Acknowledge"
	none 'RDMA|Immediate'
	# The client's messages and the server's echoes: SENDs both ways.
	grep -q 'c>s  RC Send Only' "$t" || fail "no SEND from the client"
	grep -q 's>c  RC Send Only' "$t" || fail "no SEND (echo) from the server"
	;;
03)
	for op in "RC RDMA Write First" "RC RDMA Write Middle" "RC RDMA Write Last" "RC RDMA Read Request" \
		"RC RDMA Read Response First" "RC RDMA Read Response Last"; do
		has "$op"
	done
	# The server's side only answers: acknowledgements and READ responses.
	bad=$(awk 'NR > 1 && $2 == "s>c" && $3 == "RC" && $0 !~ /RC (Acknowledge|RDMA Read Response)/' "$t")
	[ -z "$bad" ] || fail "the server sent more than ACKs and READ responses: $bad"
	# Data (payload) moves only in RDMA WRITE and READ packets, and one 20-byte SEND: the client's "done".
	bad=$(awk 'NR > 1 && $3 == "RC" && $0 !~ /RDMA (Write|Read)/ && $0 !~ /Send Only/ && substr($0, 63, 5) + 0 > 0' "$t")
	[ -z "$bad" ] || fail "payload outside RDMA WRITE and READ: $bad"
	;;
04)
	has "RC RDMA Write Only Immediate"
	has "RC Send Only Immediate"
	none 'RDMA Read'
	;;
05)
	qps=$(awk 'NR > 1 && $3 == "RC" { print substr($0, 48, 5) + 0 }' "$t" | sort -u | wc -l)
	[ "$qps" -ge 3 ] || fail "the 3 connections' packets go to $qps queue pairs, not 3"
	# Interleaved: the destination QP changes from one packet to the next many times.
	switches=$(awk 'NR > 1 && $3 == "RC" { q = substr($0, 48, 5) + 0; if (p != "" && q != p) s++; p = q } END { print s + 0 }' "$t")
	[ "$switches" -ge 6 ] || fail "the queue pairs' packets are not interleaved ($switches switches)"
	echo "05: $qps queue pairs, $switches switches between them"
	;;
06)
	n=$(grep -c '^RC RDMA Write' "$work/whats")
	# 200 WRITEs of 64 KiB at an MTU of 1024 bytes: 64 packets each.
	[ "$n" -ge $((200 * 64)) ] || fail "$n RDMA WRITE packets, expected at least $((200 * 64))"
	rate=$(awk -v n="$n" 'NR > 1 && $0 ~ /RC RDMA Write/ { if (f == "") f = $1; l = $1 } END { if (l > f) printf "%d RDMA WRITE packets in %.0f ms: %.0f packets/s", n, l - f, n / ((l - f) / 1000) }' "$t")
	echo "06: $rate"
	[ -z "$keep" ] || echo "rate: $rate" >>"$keep"
	;;
06g)
	# The client's end: a SEND WITH INVALIDATE of its key; the server's
	# ENDED; the client's WRITE with the revoked key, and the NAK it earns.
	grep -qE '^ +[0-9.]+  c>s  RC Send Only Invalidate' "$t" || fail "no SEND WITH INVALIDATE from the client"
	grep -qE '^ +[0-9.]+  s>c  RC Acknowledge .*NAK: remote access error' "$t" || fail "no NAK (remote access error) from the server"
	# The bind and the local work of the server never reach the wire: the
	# server sends nothing but acknowledgements, its control messages
	# (SEND Only Immediate) and the NAK.
	bad=$(awk 'NR > 1 && $2 == "s>c" && $3 == "RC" && $0 !~ /RC (Acknowledge|Send Only Immediate)/' "$t")
	[ -z "$bad" ] || fail "the server sent more than ACKs and control messages: $bad"
	;;
esac
wire_end
