#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Test scripts.usage: every script answers -h and --help with its usage and
# exit status 0, and a bad command line with exit status 2 and a message,
# before it does anything else (no build, no VM).
#
#   tests/scripts/usage.sh
#
# Exit: 0 pass, 1 fail.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
failed=0

# expect CODE REGEX SCRIPT ARGS...: SCRIPT ARGS exits with CODE, and its
# output (stdout and stderr) has a line matching REGEX.
expect() {
	local code=$1 re=$2 script=$3 out rc=0
	shift 3
	out=$(timeout 20 "$ROOT/scripts/$script" "$@" 2>&1 </dev/null) || rc=$?
	if [ "$rc" -ne "$code" ] || ! grep -qE -- "$re" <<<"$out"; then
		echo "FAIL: scripts/$script $*: expected exit status $code and a line matching '$re'; got $rc and:"
		printf '%s\n' "$out" | sed 's/^/  | /'
		failed=1
	else
		echo "ok: scripts/$script $* -> $rc"
	fi
}

for script in lab pair tour check doctor vagrant-check wire-trace wire-fault exercise; do
	for flag in -h --help; do
		expect 0 "^scripts/$script: " "$script" "$flag"
	done
done
expect 2 "unknown command 'frobnicate'" lab frobnicate
expect 2 "^  scripts/lab run " lab
expect 2 "pair wants two commands" lab pair 'only the server'
expect 2 "pair wants two commands" lab pair a b c
expect 2 "--timeout wants whole seconds" lab pair --timeout soon a b
expect 2 "unknown option '--frobnicate'" lab pair --frobnicate a b
expect 2 "no command given after --" lab run --
expect 2 "capture wants two commands" lab capture 'only the server'
expect 2 "unknown option '--two-vms'" lab capture --two-vms a b
expect 2 "unknown option '--out'" lab pair --out x a b
expect 2 "--out needs a file name" lab capture --out
expect 0 "^scripts/rxe-up: " rxe-up --help
expect 2 "one address prefix is needed" rxe-up
expect 0 "^scripts/siw-up: " siw-up --help
expect 2 "one address prefix is needed" siw-up
expect 2 "--name needs a device name" siw-up --name
# The lab's provider comes from the environment: a bad one is a usage error.
export RDMA_LAB_PROVIDER=frobnicate
expect 2 "RDMA_LAB_PROVIDER must be rxe or siw, not 'frobnicate'" lab where
unset RDMA_LAB_PROVIDER
expect 2 "one capture file is needed" wire-trace
expect 2 "--width needs a number of columns, 60 or more" wire-trace --width 20 x.pcap
expect 2 "unknown fault 'frobnicate'" wire-fault frobnicate
expect 2 "loss wants a percentage" wire-fault loss lots
expect 2 "expected --after N" wire-fault silent --after soon
expect 2 "time wants a command" wire-fault time --until x
expect 2 "no-rtu takes no arguments" wire-fault no-rtu --after 3
expect 2 "lose-ack wants a message sequence number" wire-fault lose-ack 1.5
expect 2 "lose-ack wants a message sequence number" wire-fault lose-ack 16777216
# A good command line, here on the host: refused, eth0 untouched.
expect 1 "runs only inside the two VMs" wire-fault link-down
expect 2 "unknown option '--frobnicate'" doctor --frobnicate
expect 2 "wants an IPv4 address like" doctor -a not-an-address
expect 2 "-a needs an IPv4 address" doctor -a
expect 2 "--build needs a build directory" doctor --build
expect 2 "unknown option '--frobnicate'" vagrant-check --frobnicate
expect 2 "--timeout wants whole seconds" vagrant-check --timeout soon
expect 2 "unknown option '--frobnicate'" tour --frobnicate
expect 2 "takes no arguments" check --frobnicate
expect 2 "unknown command 'frobnicate'" exercise frobnicate
expect 2 "which exercise\\?" exercise check
expect 2 "no exercise 'nope'" exercise hint nope
expect 2 "unknown option '--frobnicate'" exercise list --frobnicate
expect 2 "one exercise at a time" exercise check 01-disconnect 01-padding

[ "$failed" -eq 0 ] && echo PASS
exit "$failed"
