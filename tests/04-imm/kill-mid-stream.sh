#!/bin/sh
# SPDX-License-Identifier: MIT
#
# kill-mid-stream.sh: kill one side of chapter 04 with SIGKILL while the
# client is streaming, as a crash would, so that a test can check what the
# other side does. Used through tests/pair-runner.sh:
#
#   kill-mid-stream.sh serve PIDFILE SERVER ARGS...
#       (as the runner's server) write our pid to PIDFILE, then become the
#       server: the pid is the server's
#   kill-mid-stream.sh kill-client PIDFILE CLIENT ARGS...
#   kill-mid-stream.sh kill-server PIDFILE CLIENT ARGS...
#       (as the runner's client) run the client; once it says it is
#       streaming, let it stream for KILL_AFTER seconds (default 0.5), then
#       SIGKILL the client, or the server whose pid is in PIDFILE. Print the
#       client's output. Exit: 0 when the client was killed as asked
#       (kill-client), or the client's own exit status (kill-server).
set -u
mode=$1 pidfile=$2
shift 2

if [ "$mode" = serve ]; then
	echo $$ >"$pidfile"
	exec "$@"
fi

out=$(mktemp "${TMPDIR:-/tmp}/kill-mid-stream.XXXXXX")
"$@" >"$out" 2>&1 &
client=$!
# Wait (a minute at most) for the line the client prints as it starts to stream.
tries=0
until grep -q ': streaming ' "$out"; do
	if ! kill -0 "$client" 2>/dev/null || [ "$tries" -ge 1200 ]; then
		echo "kill-mid-stream: the client never started streaming"
		cat "$out"
		kill -KILL "$client" 2>/dev/null
		rm -f "$out"
		exit 1
	fi
	tries=$((tries + 1))
	sleep 0.05
done
sleep "${KILL_AFTER:-0.5}"
case "$mode" in
kill-client)
	kill -KILL "$client"
	echo "kill-mid-stream: killed the client (pid $client) while it streamed"
	;;
kill-server)
	server=$(cat "$pidfile")
	kill -KILL "$server"
	echo "kill-mid-stream: killed the server (pid $server) while the client streamed"
	;;
*)
	echo "kill-mid-stream: unknown mode '$mode'"
	kill -KILL "$client"
	exit 2
	;;
esac
wait "$client"
code=$?
cat "$out"
rm -f "$out" "$pidfile"
echo "kill-mid-stream: client exit code $code"
if [ "$mode" = kill-client ]; then
	[ "$code" -eq 137 ]
	exit
fi
exit "$code"
