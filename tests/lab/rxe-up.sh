#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Test lab.rxe_up: scripts/rxe-up, the one Soft-RoCE setup script of the lab's
# VMs and of the Vagrantfile's provisioning, on the host with stand-ins for
# "ip", "rdma" and "modprobe" (this host has no RDMA; the lab's VMs run the
# real thing at every boot).
#
#   tests/lab/rxe-up.sh
#
# Cases: it finds the interface by its address prefix and adds rxe0 there;
# it does nothing when rxe0 exists (idempotent, as a systemd unit at every
# boot needs); no such address: exit 1 and a message; modprobe fails: exit 1;
# --name; a bad command line: exit 2. And the Vagrantfile and the lab's init
# both run this script, not a copy. Exit: 0 pass, 1 fail.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rxe-up.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0

# The stand-ins log their command lines to $work/log. RXE_EXISTS=1: "rdma dev
# show" finds the device; MODPROBE_FAILS=1: modprobe fails.
mkdir "$work/bin"
cat >"$work/bin/ip" <<'STUB'
#!/bin/sh
echo "ip $*" >>"$STUB_LOG"
cat <<'OUT'
1: lo    inet 127.0.0.1/8 scope host lo\       valid_lft forever preferred_lft forever
2: eth0    inet 10.0.2.15/24 brd 10.0.2.255 scope global eth0\       valid_lft forever
3: eth1    inet 192.168.77.10/24 brd 192.168.77.255 scope global eth1\       valid_lft forever
OUT
STUB
cat >"$work/bin/rdma" <<'STUB'
#!/bin/sh
echo "rdma $*" >>"$STUB_LOG"
[ "$1 $2" = "dev show" ] && { [ "${RXE_EXISTS:-0}" = 1 ] && exit 0; exit 1; }
exit 0
STUB
cat >"$work/bin/modprobe" <<'STUB'
#!/bin/sh
echo "modprobe $*" >>"$STUB_LOG"
[ "${MODPROBE_FAILS:-0}" = 1 ] && exit 1
exit 0
STUB
chmod +x "$work/bin/"*

# run CODE ENV... -- ARGS...: scripts/rxe-up ARGS exits with CODE; its output
# is in $work/out and the stand-ins' log in $work/log.
run() {
	local code=$1 envs=() rc=0
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	: >"$work/log"
	env STUB_LOG="$work/log" PATH="$work/bin:$PATH" ${envs[@]+"${envs[@]}"} \
		sh "$ROOT/scripts/rxe-up" "$@" >"$work/out" 2>&1 || rc=$?
	if [ "$rc" -ne "$code" ]; then
		fail "rxe-up $*: exit status $rc, expected $code"
		return 1
	fi
}
fail() {
	echo "FAIL: $*"
	sed 's/^/  out | /' "$work/out"
	sed 's/^/  log | /' "$work/log"
	failed=1
}
ok() { echo "ok: $*"; }
has() { grep -qxF -- "$1" "$work/$2"; }

if run 0 -- 192.168.77.; then
	if has "rdma link add rxe0 type rxe netdev eth1" log; then ok "finds eth1 by 192.168.77. and adds rxe0 on it"; else fail "no 'rdma link add rxe0 type rxe netdev eth1'"; fi
fi
if run 0 -- 10.0.2.15; then
	if has "rdma link add rxe0 type rxe netdev eth0" log; then ok "a whole address works too (eth0)"; else fail "no 'rdma link add rxe0 type rxe netdev eth0'"; fi
fi
if run 0 RXE_EXISTS=1 -- 192.168.77.; then
	if grep -q 'link add' "$work/log"; then fail "rxe0 exists but it ran 'rdma link add' again"; else ok "idempotent: rxe0 exists, nothing added"; fi
fi
if run 1 -- 172.16.; then
	if grep -q 'no interface has an IPv4 address starting with 172.16.' "$work/out"; then ok "no such address: exit 1 and says so"; else fail "no message naming the prefix"; fi
fi
if run 0 -- --name rxe9 192.168.77.; then
	if has "rdma link add rxe9 type rxe netdev eth1" log; then ok "--name rxe9"; else fail "--name rxe9 not used"; fi
fi
if [ -d /sys/module/rdma_rxe ]; then
	ok "(rdma_rxe is loaded here: the modprobe case does not apply)"
elif run 1 MODPROBE_FAILS=1 -- 192.168.77.; then
	if grep -q 'modprobe rdma_rxe failed' "$work/out"; then ok "modprobe fails: exit 1 and says so"; else fail "no message about modprobe"; fi
fi
run 2 -- && ok "no prefix: exit 2"
run 2 -- a b && ok "two prefixes: exit 2"

# One script, not copies: the Vagrantfile installs it, the lab's init runs it.
if grep -q 'install -m 755 /vagrant/scripts/rxe-up ' "$ROOT/Vagrantfile" && ! grep -v '^ *#' "$ROOT/Vagrantfile" | grep -q 'rdma link add'; then
	ok "the Vagrantfile installs scripts/rxe-up and has no rxe setup of its own"
else
	echo "FAIL: the Vagrantfile does not install scripts/rxe-up, or adds rxe itself"
	failed=1
fi
if grep -q 'scripts/rxe-up' "$ROOT/scripts/lab-init.sh" && ! grep -v '^[[:space:]]*#' "$ROOT/scripts/lab-init.sh" | grep -q 'rdma link add'; then
	ok "the lab's init runs scripts/rxe-up and has no rxe setup of its own"
else
	echo "FAIL: scripts/lab-init.sh does not run scripts/rxe-up, or adds rxe itself"
	failed=1
fi

[ "$failed" -eq 0 ] && echo PASS || echo FAIL
exit "$failed"
