#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Tests of scripts/pair with shell stand-ins for the programs: no RDMA, no VM.
#
#   tests/scripts/pair.sh CASE      (test pair.CASE, label lab: on the host)
#
# Cases:
#   waits_for_listening  the client starts only after the server's listening
#                        line, which comes 2 s late
#   order                lines of both programs, stdout and stderr, come out
#                        once, unlabelled, in the order they were written
#   stops_server         a server that never exits is stopped 10 s after the
#                        client, with a line saying so; exit 0
#   stop_at_once         --stop: SIGTERM as soon as the client is done; the
#                        server's exit status after it is the pair's
#   kills_stubborn_server  one that ignores SIGTERM gets SIGKILL
#   client_failure       the client's exit status is the pair's
#   server_failure       so is the server's, when the client succeeded
#   server_exits_early   a server that exits before listening: its status,
#                        and no client
#   quick_server         a server that exits right after its listening line
#                        still counts as listening: the client runs
#   timeout              --timeout ends a hung client (and the server): 124
#   bad_usage            wrong command lines: 2, before anything runs
#   all_lines            every line, when the server exits with more in the
#                        pipe than it holds
# Exit: 0 pass, 1 fail.
#
# The commands are for "sh -c", in single quotes on purpose:
# shellcheck disable=SC2016
set -uo pipefail
PAIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/pair
case_name=${1:?which case?}

T=$(mktemp -d "${TMPDIR:-/tmp}/pair-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
export T
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

# run [ARGS...]: scripts/pair ARGS; sets out (what it printed, stdout and
# stderr), rc and ms (how long it took).
run() {
	local start
	start=$(date +%s%3N)
	out=$("$PAIR" "$@" 2>&1)
	rc=$?
	ms=$(($(date +%s%3N) - start))
	echo "--- scripts/pair exited with $rc after $ms ms; it printed:"
	printf '%s\n' "$out" | sed 's/^/  | /'
}
expect_rc() { [ "$rc" -eq "$1" ] || fail "exit status: expected $1, got $rc"; }
expect_line() { grep -qxE -- "$1" <<<"$out" || fail "no line matching: $1"; }
expect_no_line() { ! grep -qE -- "$1" <<<"$out" || fail "a line matches, and none should: $1"; }
expect_output() { # expect_output LINE...: exactly these lines, in this order
	local want
	want=$(printf '%s\n' "$@")
	[ "$out" = "$want" ] || fail "the output is not, line for line:$(printf '\n  > %s' "$@")"
}
expect_ms_between() { # expect_ms_between LOW HIGH
	if [ "$ms" -lt "$1" ] || [ "$ms" -gt "$2" ]; then
		fail "it took $ms ms, expected $1 to $2 ms"
	fi
}
# A shell snippet that waits for the file $T/NAME: "$(until NAME)".
until_file() { printf 'until [ -e "$T/%s" ]; do sleep 0.05; done' "$1"; }

case "$case_name" in
waits_for_listening)
	run 'echo "x: starting"; sleep 2; touch "$T/listening"; echo "x: listening on nothing"; sleep 0.5; echo "x: done"' \
		'if [ -e "$T/listening" ]; then echo "client: started after the listening line"; else echo "client: started too early"; exit 1; fi'
	expect_rc 0
	expect_output "x: starting" "x: listening on nothing" "client: started after the listening line" "x: done"
	expect_ms_between 2000 8000
	;;
order)
	# The two take turns, each waiting for the other's file: the order of the
	# lines is fixed, and half of them go to stderr.
	run "echo x: listening; $(until_file 1); echo 'server: two' >&2; touch \"\$T/2\"; $(until_file 3); echo 'server: four'" \
		"echo 'client: one' >&2; touch \"\$T/1\"; $(until_file 2); echo 'client: three'; touch \"\$T/3\""
	expect_rc 0
	expect_output "x: listening" "client: one" "server: two" "client: three" "server: four"
	;;
times)
	# --times: every line, the programs' and pair's own, starts with the
	# seconds since the server was started; the client's line, 1 s after
	# the server's, says so.
	run --times 'echo "x: listening"; sleep 1; echo "server: late"' 'echo "client: early"; sleep 1; echo "client: done"'
	expect_rc 0
	expect_line '\[  0\.[0-9]{3}\] x: listening'
	expect_line '\[  [12]\.[0-9]{3}\] client: done'
	expect_no_line '^[^[]'
	;;
all_lines)
	# Every line, however many: a server that exits with a backlog in the
	# pipe (3,000 lines of 100 bytes, more than the pipe holds) and a
	# client of 2,000 lines, each written whole (sed -u, as the programs
	# write a line at a time); the server's last line has no newline.
	# Reading the rest for a second only lost the tail (2,382 of 3,000).
	run 'echo "x: listening"; seq 3000 | sed -u "s/.*/server: debug: line & of 3000, padded to about a hundred bytes like a -v line/"; printf "server: last"' \
		'seq 2000 | sed -u "s/^/client: line /"'
	expect_rc 0
	expect_line 'server: debug: line 3000 of 3000, .*'
	expect_line '^client: line 2000$'
	expect_line '^server: last$'
	n=$(grep -c '^server: debug: line' <<<"$out")
	[ "$n" -eq 3000 ] || fail "$n of the server's 3000 lines"
	n=$(grep -c '^client: line' <<<"$out")
	[ "$n" -eq 2000 ] || fail "$n of the client's 2000 lines"
	;;
stops_server)
	run 'echo "x: listening"; exec sleep 600' 'echo "client: done"'
	expect_rc 0
	expect_line "pair: the server is still running 10s after the client ended: stopping it"
	expect_line "pair: stopped the server with SIGTERM \(it did not exit by itself\)"
	expect_ms_between 10000 16000
	;;
stop_at_once)
	# --stop: SIGTERM as soon as the client is done, not 10 s later, and
	# the server's own exit status after it counts.
	run --stop 'trap "echo \"x: SIGTERM: done\"; exit 0" TERM; echo "x: listening"; while :; do :; done' 'echo "client: done"'
	expect_rc 0
	expect_output "x: listening" "client: done" "pair: the client is done: stopping the server (--stop)" "x: SIGTERM: done"
	expect_ms_between 0 4000
	run --stop 'trap "echo \"x: could not close\" >&2; exit 1" TERM; echo "x: listening"; while :; do :; done' 'echo "client: done"'
	expect_rc 1
	expect_line "pair: the server exited with status 1"
	# The server program under its "sh -c" gets the SIGTERM, not the shell:
	# the shell's status is the program's (0), not 143.
	run --stop 'echo "x: listening"; sh -c "trap \"echo x: stopped; exit 0\" TERM; while :; do :; done"' 'echo "client: done"'
	expect_rc 0
	expect_line "x: stopped"
	;;
kills_stubborn_server)
	export REX_PAIR_GRACE=1 REX_PAIR_KILL_AFTER=1
	run 'trap "" TERM; echo "x: listening"; while :; do sleep 0.1; done' 'echo "client: done"'
	expect_rc 0
	expect_line "pair: stopped the server with SIGKILL \(it did not exit by itself\)"
	expect_ms_between 2000 7000
	;;
client_failure)
	run 'echo "x: listening"; sleep 0.5; echo "x: bye"' 'echo "client: no luck" >&2; exit 3'
	expect_rc 3
	expect_line "pair: the client exited with status 3"
	expect_line "x: bye"
	;;
server_failure)
	run 'echo "x: listening"; sleep 0.5; exit 4' 'echo "client: fine"'
	expect_rc 4
	expect_line "pair: the server exited with status 4"
	;;
server_exits_early)
	run 'echo "x: cannot listen" >&2; exit 5' 'touch "$T/client-ran"'
	expect_rc 5
	expect_line "x: cannot listen"
	expect_line "pair: the server exited with status 5 before it printed a listening line; the client was not started"
	[ ! -e "$T/client-ran" ] || fail "the client ran"
	;;
quick_server)
	run 'echo "x: one"; echo "x: two"; echo "x: listening"; exit 0' 'echo "client: ran"'
	expect_rc 0
	expect_output "x: one" "x: two" "x: listening" "client: ran"
	;;
timeout)
	run --timeout 3 'echo "x: listening"; exec sleep 600' 'echo $$ >"$T/client.pid"; echo "client: stuck"; exec sleep 600'
	expect_rc 124
	expect_line "pair: timed out after 3s: killing the server and the client"
	expect_ms_between 3000 7000
	if [ -s "$T/client.pid" ] && kill -0 "$(cat "$T/client.pid")" 2>/dev/null; then
		fail "the client (pid $(cat "$T/client.pid")) still runs"
	fi
	;;
bad_usage)
	for args in "only-one" "a b c" "--timeout 0 a b" "--timeout x a b" "--frobnicate a b"; do
		# shellcheck disable=SC2086 # the words of $args are the arguments
		run $args
		expect_rc 2
		expect_no_line "^(a|b|only-one)$"
	done
	run --help
	expect_rc 0
	expect_line "  scripts/pair \[--timeout SECONDS\] \[--stop\] \[--times\] 'SERVER COMMAND' 'CLIENT COMMAND'"
	;;
*)
	echo "no case '$case_name'"
	exit 2
	;;
esac

[ "$failed" -eq 0 ] && echo PASS
exit "$failed"
