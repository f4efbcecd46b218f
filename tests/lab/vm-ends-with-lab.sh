#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Test lab.vm_ends_with_lab: the lab's VM ends when scripts/lab ends, however
# scripts/lab ends.
#
#   tests/lab/vm-ends-with-lab.sh [CASE...]
#
# Cases (all of them by default, run side by side):
#   term     SIGTERM to scripts/lab                  it must exit 143
#   int      SIGINT to scripts/lab (kill -INT)       130
#   ctrl-c   SIGINT to its whole process group, as a terminal's Ctrl-C   130
#   kill     SIGKILL to scripts/lab                  137 (it cannot clean up itself)
#   time     RDMA_LAB_TIMEOUT=30 runs out            125, "ran out of time"
#   two      SIGTERM to "scripts/lab pair --two-vms"  143, both VMs gone
# Each runs "scripts/lab run -- sleep 600" in the VM ("two": a pair of
# sleeps, one in each VM), waits until the console says "lab: rxe0 is up"
# (except "time"; "two": both VMs), ends it, and then requires that its QEMUs
# (the lab's children, the pids in their -pidfile) and its run folder are
# gone within 5 s. Other VMs on this machine are left alone.
#
# Runs on the host, never inside the lab VM (label "lab": scripts/check runs
# these tests on the host). It uses the lab cache as scripts/lab does
# (RDMA_LAB_CACHE) and prepares it first. Exit: 0 pass, 1 fail, 77 skipped.
set -euo pipefail
REX_SCRIPT=vm_ends_with_lab
# shellcheck source=../../scripts/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib.sh"
LAB=$REX_ROOT/scripts/lab
BOOT_LIMIT=150 # seconds to wait for "rxe0 is up" when all cases boot at once
GONE_LIMIT=5   # seconds QEMU and the run folder may outlive scripts/lab

if [ "${RDMA_LAB:-}" = vm ]; then
	echo "SKIP: this test boots VMs; it runs on the host, not inside the lab VM"
	exit 77
fi

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(term int ctrl-c kill time two)

"$LAB" prepare

work=$(mktemp -d "${TMPDIR:-/tmp}/vm-ends.XXXXXX")
trap 'rm -rf "$work"' EXIT

# alive PID RUN: PID is a live process (not a zombie) whose command line
# names the run folder RUN, that is, still our QEMU.
alive() {
	local state
	state=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $state != Z* ]] && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF -- "$2/"
}
# any_alive RUN PID...: one of the PIDs is still a QEMU of RUN.
any_alive() {
	local run=$1 pid
	shift
	for pid in "$@"; do alive "$pid" "$run" && return 0; done
	return 1
}

# run_case NAME: one case; says PASS or FAIL (with the lab's output) and
# returns 0 or 1.
run_case() {
	local name=$1 out=$work/$1.out
	local signal="" target expect_rc limit=() qemu="" run="" i rc=0
	case "$name" in
	term) signal=TERM expect_rc=143 ;;
	int) signal=INT expect_rc=130 ;;
	ctrl-c) signal=INT expect_rc=130 ;;
	kill) signal=KILL expect_rc=137 ;;
	# The limit must leave the test time to see QEMU before the lab stops
	# it: with 5 s, six VMs booting at once beside two busy loops made the
	# poll below miss QEMU's whole life ("scripts/lab ended before it
	# started QEMU"). The other cases take 40 s or more: 30 s costs nothing.
	time) expect_rc=125 limit=(RDMA_LAB_TIMEOUT=30) ;;
	two) signal=TERM expect_rc=143 ;;
	*) echo "$name: FAIL: no such case"; return 1 ;;
	esac
	fail() {
		echo "$name: FAIL: $*"
		sed 's/^/  | /' "$out"
		local pid
		for pid in $qemu; do ! alive "$pid" "$run" || kill -KILL "$pid"; done
		return 1
	}
	local cmd=(run -- sleep 600) vms=1 booted='^lab: rxe0 is up'
	if [ "$name" = two ]; then
		cmd=(pair --two-vms --timeout 600 'echo two: listening; exec sleep 600' 'exec sleep 600')
		vms=2 booted='^\[(server|client)-vm\] lab: rxe0 is up'
	fi

	# setsid: its own process group, like a command started from a terminal.
	# env --default-signal: a background job of a script ignores SIGINT, and
	# the lab could not trap it.
	setsid env --default-signal=INT RDMA_LAB_FORCE_VM=1 RDMA_LAB_CPUS=1 RDMA_LAB_MEM=512 \
		${limit[@]+"${limit[@]}"} "$LAB" "${cmd[@]}" >"$out" 2>&1 &
	local lab=$! started=$SECONDS first
	# QEMU is the lab's child; the folder of its pidfile is the run folder
	# (two VMs: the run folder's server/ and client/).
	# A process takes QEMU's name early in its exec, and its command line a
	# moment later (/proc/PID/cmdline is empty in between: 26 of 300
	# launches on this machine): wait for the command line, not the name.
	# The command line is read once: QEMU may be gone a moment later (the
	# case "time" stops it 30 s after it started; a loaded host can spend
	# that long in this loop).
	local cmdline=""
	for ((i = 0; i < BOOT_LIMIT * 10; i++)); do
		qemu=$(pgrep -P "$lab" -x qemu-system-x86 | xargs || true)
		if [ "$(wc -w <<<"$qemu")" -ge "$vms" ]; then
			cmdline=$(tr '\0' '\n' <"/proc/${qemu%% *}/cmdline" 2>/dev/null || true)
			grep -q '/qemu.pid$' <<<"$cmdline" && break
		fi
		kill -0 "$lab" 2>/dev/null || fail "scripts/lab ended before it started QEMU" || return 1
		sleep 0.1
	done
	[ "$(wc -w <<<"$qemu")" -eq "$vms" ] || fail "not $vms QEMU after ${BOOT_LIMIT}s: '$qemu'" || return 1
	first=${qemu%% *}
	run=$(sed -n 's|/qemu.pid$||p' <<<"$cmdline")
	[ "$vms" -eq 1 ] || run=$(dirname "$run")
	# While the lab runs, its run folder exists (after it, it must be gone:
	# checked below).
	[ -n "$run" ] && { [ -d "$run" ] || ! kill -0 "$lab" 2>/dev/null; } ||
		fail "QEMU $first has no run folder ($run; state $(ps -o stat= -p "$first"))" || return 1
	if [ -n "$signal" ]; then
		until [ "$(grep -cE "$booted" "$out")" -ge "$vms" ]; do
			[ $((SECONDS - started)) -lt "$BOOT_LIMIT" ] || fail "the VM did not boot within ${BOOT_LIMIT}s" || return 1
			kill -0 "$lab" 2>/dev/null || fail "scripts/lab ended before the VM booted" || return 1
			sleep 0.1
		done
		[ "$vms" -eq 2 ] || [ "$(cat "$run/qemu.pid" 2>/dev/null)" = "$qemu" ] || fail "$run/qemu.pid is not $qemu" || return 1
		target=$lab
		[ "$name" = ctrl-c ] && target=-$lab # the process group
		kill -s "$signal" -- "$target"
	fi
	local ended=$SECONDS
	wait "$lab" 2>/dev/null || rc=$? # (2>/dev/null: no "Killed" notice from bash)
	[ "$rc" -eq "$expect_rc" ] || fail "scripts/lab exited with $rc, expected $expect_rc" || return 1
	if [ "$name" = time ]; then
		grep -q 'ran out of time' "$out" || fail "no 'ran out of time' message" || return 1
	fi
	for ((i = 0; i < GONE_LIMIT * 10; i++)); do
		# shellcheck disable=SC2086 # $qemu: one or two pids
		! any_alive "$run" $qemu && [ ! -e "$run" ] && break
		sleep 0.1
	done
	# shellcheck disable=SC2086
	! any_alive "$run" $qemu || fail "QEMU $qemu still runs ${GONE_LIMIT}s after scripts/lab ended" || return 1
	[ ! -e "$run" ] || fail "the run folder $run is still there ${GONE_LIMIT}s after scripts/lab ended" || return 1
	echo "$name: PASS (${signal:+SIG$signal after the boot, }exit $rc; QEMU $qemu and its run folder gone; $((SECONDS - started)) s, $((SECONDS - ended)) s to end)"
}

pids=()
for name in "${cases[@]}"; do
	run_case "$name" >"$work/$name.result" 2>&1 &
	pids+=($!)
done
failed=0
for i in "${!cases[@]}"; do
	wait "${pids[$i]}" || failed=1
	cat "$work/${cases[$i]}.result"
done
[ "$failed" -eq 0 ] && echo PASS || echo FAIL
exit "$failed"
