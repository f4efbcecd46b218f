#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# exercises/05-starve-loop/sigint-client.sh BIN ADDR PORT: the client half of
# the check's run (scripts/pair runs it as the client command). Runs 05's
# client with 32 connections of 16 messages in flight each (as many as the
# server takes), waits until all 32 are established, lets them echo for 4 s,
# says so in a line of its own and sends SIGINT to the server listening on
# ADDR PORT, then waits for the client. Exit status: the client's.
set -uo pipefail
bin=$1 addr=$2 port=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin/05-async-client" -a "$addr" -p "$port" -q 32 -w 16 -n 100000 >"$out" 2>&1 &
client=$!
tail -n +1 -f --pid="$client" "$out" &
for _ in $(seq 300); do
	grep -q '^client: 32 connections established' "$out" && break
	kill -0 "$client" 2>/dev/null || break
	sleep 0.1
done
# The server's pid first, the line and the signal then: in an emulated VM
# pgrep takes a good part of a second, which would count as the server's.
server=$(pgrep -f "^[^ ]*05-async-server -a $addr -p $port( |\$)" | head -n 1)
sleep 4
echo "check: SIGINT to the server"
kill -INT "$server"
wait "$client"
status=$?
wait # tail ends with the client
exit "$status"
