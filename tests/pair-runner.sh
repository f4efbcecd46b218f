#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Runs one end-to-end test: a server, then a client against it, on RDMA.
#
#   pair-runner.sh --port PORT [--timeout SECONDS]
#       [--server PROGRAM ARGS... --end] [--client PROGRAM ARGS... --end]
#       [--server-exit CODE|stop] [--client-exit CODE]
#       [--server-expect REGEX]... [--client-expect REGEX]...
#       [--client-within SECONDS [--client-within-from REGEX]] [--provider siw]
#
# In ARGS, @ADDR@ becomes $RDMA_LAB_ADDR and @PORT@ becomes PORT.
# The server is started first; the runner waits for its "listening" line
# ("NAME: listening ...", never a fixed sleep), then runs the client. Both exit codes must be the
# expected ones ("stop": the server is sent SIGTERM once the client is done,
# for tests whose client is not a real peer) and every expected line must appear in that program's output
# (stdout and stderr together; grep -E regexes). The whole run is bounded by
# --timeout: a program still running then is killed and the test fails.
#
# The client's lines are shown with the time each came, in ms since the
# client was started. --client-within bounds the client's run from its start
# or, with --client-within-from, from its first line matching REGEX: a bound
# on what the program does after a step, without the time a loaded machine
# takes to start it (seconds, in an emulated VM).
#
# --provider siw: a test of Soft-iWARP (label siw); it runs only where an
# iWARP device is (RDMA_LAB_PROVIDER=siw scripts/lab run), and skips elsewhere.
# A program's exit 77 means "no usable RDMA device" and skips the test, unless
# 77 is the exit expected (a program refusing iWARP).
#
# Exit: 0 pass, 1 fail, 77 skipped (no RDMA: RDMA_LAB_ADDR unset or no
# device), unless REX_REQUIRE_RDMA=1, which turns a skip into a failure.
set -u

port="" timeout=120 within="" within_from="" provider=""
server=() client=()
server_exit=0 client_exit=0
server_expect=() client_expect=()

while [ $# -gt 0 ]; do
	case "$1" in
	--port) port=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--server | --client)
		side=${1#--}
		shift
		while [ $# -gt 0 ] && [ "$1" != --end ]; do
			eval "$side+=(\"\$1\")"
			shift
		done
		shift
		;;
	--server-exit) server_exit=$2; shift 2 ;;
	--client-exit) client_exit=$2; shift 2 ;;
	--server-expect) server_expect+=("$2"); shift 2 ;;
	--client-expect) client_expect+=("$2"); shift 2 ;;
	--client-within) within=$2; shift 2 ;;
	--client-within-from) within_from=$2; shift 2 ;;
	--provider) provider=$2; shift 2 ;;
	*) echo "pair-runner: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
[ -n "$port" ] || { echo "pair-runner: --port is required" >&2; exit 2; }
[ -z "$within_from" ] || [ -n "$within" ] ||
	{ echo "pair-runner: --client-within-from needs --client-within" >&2; exit 2; }

skip() {
	if [ "${REX_REQUIRE_RDMA:-0}" = 1 ]; then
		echo "FAIL: RDMA is required here (REX_REQUIRE_RDMA=1) but: $*"
		exit 1
	fi
	echo "SKIP: $* (run the tests through scripts/lab run)"
	exit 77
}
[ -n "${RDMA_LAB_ADDR:-}" ] || skip "RDMA_LAB_ADDR is not set"
if [ "$provider" = siw ]; then
	# An iWARP device's node type is "4: RNIC" (InfiniBand and RoCE: "1: CA").
	grep -qs RNIC /sys/class/infiniband/*/node_type ||
		skip "no iWARP device here (label siw: RDMA_LAB_PROVIDER=siw scripts/lab run -- ctest -L siw)"
fi

substitute() {
	local a
	for a in "$@"; do
		a=${a//@ADDR@/$RDMA_LAB_ADDR}
		printf '%s\0' "${a//@PORT@/$port}"
	done
}
mapfile -d '' server < <(substitute ${server[@]+"${server[@]}"})
mapfile -d '' client < <(substitute ${client[@]+"${client[@]}"})

dir=$(mktemp -d "${TMPDIR:-/tmp}/pair.XXXXXX")
server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill -KILL "$server_pid" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
deadline=$((SECONDS + timeout))
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}

show() { # show NAME FILE: the program's output, indented, for the test log
	echo "--- $1 output ---"
	sed 's/^/  | /' "$2"
}

now_us() { # the wall clock in us (EPOCHREALTIME: bash 5; its point is the locale's)
	echo "${EPOCHREALTIME/[.,]/}"
}

# stamp RAW STAMPED START_US: each line read, as it comes, into RAW as it is
# (what the expected lines are matched against) and into STAMPED after the
# ms since START_US, line for line.
stamp() {
	local line t
	while IFS= read -r line || [ -n "$line" ]; do
		t=${EPOCHREALTIME/[.,]/} # not $(now_us): no fork a line
		printf '%s\n' "$line" >&3
		printf '[%6d ms] %s\n' $(((t - $3) / 1000)) "$line" >&4
	done 3>"$1" 4>"$2"
}

# since_line REGEX: the ms of the client's first line matching REGEX, or nothing
since_line() {
	local n
	n=$(grep -nE -m1 -- "$1" "$dir/client.out" | cut -d: -f1)
	[ -n "$n" ] && sed -n "${n}s/^\[ *\([0-9]*\) ms\].*/\1/p" "$dir/client.ts"
}

# 1. the server, and its listening line
if [ "${#server[@]}" -gt 0 ]; then
	echo "server: ${server[*]}"
	"${server[@]}" >"$dir/server.out" 2>&1 &
	server_pid=$!
	until grep -Eq '^[A-Za-z0-9_-]+: listening' "$dir/server.out" 2>/dev/null; do
		if ! kill -0 "$server_pid" 2>/dev/null; then
			wait "$server_pid"
			server_code=$?
			server_pid=""
			[ "$server_code" -eq 77 ] && [ "$server_exit" != 77 ] && { show server "$dir/server.out"; skip "the server found no RDMA device"; }
			# A server expected to fail before it listens is a valid test.
			break
		fi
		if [ "$SECONDS" -ge "$deadline" ]; then
			show server "$dir/server.out"
			fail "the server printed no 'listening' line within ${timeout}s"
			exit 1
		fi
		sleep 0.05
	done
fi

# 2. the client, bounded by what is left of the timeout
if [ "${#client[@]}" -gt 0 ]; then
	echo "client: ${client[*]}"
	left=$((deadline - SECONDS))
	if [ "$left" -lt 1 ]; then
		fail "no time left for the client within the ${timeout}s timeout"
		exit 1
	fi
	start=$(now_us)
	timeout -k 5 "$left" "${client[@]}" 2>&1 | stamp "$dir/client.out" "$dir/client.ts" "$start"
	code=${PIPESTATUS[0]}
	took_ms=$((($(now_us) - start) / 1000))
	show client "$dir/client.ts"
	echo "client exit code $code after ${took_ms} ms"
	[ "$code" -eq 77 ] && [ "$client_exit" != 77 ] && skip "the client found no RDMA device"
	[ "$code" -eq 124 ] && fail "the client did not finish within the ${timeout}s timeout"
	[ "$code" -eq "$client_exit" ] || fail "client exit code: expected $client_exit, got $code"
	if [ -n "$within" ] && [ -n "$within_from" ]; then
		from_ms=$(since_line "$within_from")
		if [ -z "$from_ms" ]; then
			fail "client output has no line matching: $within_from (the time is bounded from it)"
		elif [ $((took_ms - from_ms)) -gt $((within * 1000)) ]; then
			fail "the client took $((took_ms - from_ms)) ms after its line '$within_from', more than the ${within}s allowed"
		fi
	elif [ -n "$within" ] && [ "$took_ms" -gt $((within * 1000)) ]; then
		fail "the client took ${took_ms} ms, more than the ${within}s allowed"
	fi
	for re in ${client_expect[@]+"${client_expect[@]}"}; do
		grep -Eq -- "$re" "$dir/client.out" || fail "client output has no line matching: $re"
	done
fi

# 3. the server's end
server_code=${server_code:-}
if [ -n "$server_pid" ] && [ "$server_exit" = stop ]; then
	kill -TERM "$server_pid"
	wait "$server_pid"
	server_code=stop
	server_pid=""
elif [ -n "$server_pid" ]; then
	while kill -0 "$server_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.05
	done
	if kill -0 "$server_pid" 2>/dev/null; then
		kill -KILL "$server_pid"
		wait "$server_pid" 2>/dev/null
		server_pid=""
		show server "$dir/server.out"
		fail "the server did not exit within the ${timeout}s timeout"
		exit 1
	fi
	wait "$server_pid"
	server_code=$?
	server_pid=""
fi
if [ "${#server[@]}" -gt 0 ]; then
	show server "$dir/server.out"
	echo "server exit code $server_code"
	[ "$server_code" = "$server_exit" ] || fail "server exit code: expected $server_exit, got $server_code"
	for re in ${server_expect[@]+"${server_expect[@]}"}; do
		grep -Eq -- "$re" "$dir/server.out" || fail "server output has no line matching: $re"
	done
fi

if [ "$failed" -ne 0 ]; then
	exit 1
fi
echo "PASS"
