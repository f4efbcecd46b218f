#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The test doctor.breaks (label lab): scripts/doctor on a healthy lab VM, then
# with each check broken on purpose, one at a time, asserting its exit status,
# the exact line that names the cause and the exact "fix:" line; where the VM
# allows it, the test then runs the printed fix itself and waits for the
# doctor to pass again (so the fix is checked too).
#
#   tests/doctor/breaks.sh [BUILD_DIR]   on the host: boots one lab VM for all
#                                        cases; BUILD_DIR (default: build) has
#                                        01-connect's programs for the pair check
#
# Cases, in order:
#   no_rdma    on the host, when its kernel has no RDMA: the doctor says so and
#              sends the user to the lab (exit 1); left out on a host with RDMA
#   healthy    every check ok, 01's pair included, exit 0
#   mtu_low    dummy0's MTU 600: rxe drops to MTU 512, a warning (exit 3)
#              (the doctor's FAIL for an active MTU too large for its
#              interface cannot be made on rxe: rxe recomputes its active
#              MTU from the interface's, e.g. 512 for an MTU of 1050)
#   memlock    as the user nobody with ulimit -l 64 (KiB)
#   memlock_06 as nobody with ulimit -l 8192, Debian's default: a warning
#   access     /dev/infiniband/rdma_cm mode 600, as nobody
#   firewall   a tc filter dropping UDP 4791 on dummy0's ingress
#   firewall_policy  an input policy of drop (nft, a stand-in: the VM's
#              kernel has no nf_tables), with ufw active and without
#   link_down  dummy0 down: rxe0's port leaves ACTIVE
#   address    dummy0 without its IPv4 address
#   device     rxe0 deleted (rdma link delete)
#   modules    rdma_ucm unloaded; last, and not undone: the VM's module files
#              are in its initramfs, outside the root the command runs in
# Not made: a GID table without the address's RoCE v2 entry (the kernel keeps
# it in step with the interface's addresses).
# Exit: 0 pass, 1 fail.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
doctor=$ROOT/scripts/doctor
build=${1:-$ROOT/build}
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# run CASE WANT_EXIT [--as-nobody ULIMIT | DOCTOR ARGS...]: runs the doctor
# once (as the user nobody, with that locked-memory limit, when asked), shows
# its output, and checks its exit status; "expect" then checks its lines.
case_name="" out=""
run() {
	local want=$2 code
	case_name=$1
	shift 2
	if [ "${1:-}" = --as-nobody ]; then
		out=$(sh -c "ulimit -l $2 && exec setpriv --reuid=65534 --regid=65534 --clear-groups \"\$0\" --no-pair" "$doctor" 2>&1)
		code=$?
	else
		out=$("$doctor" "$@" 2>&1)
		code=$?
	fi
	printf '%s\n' "$out" | sed "s/^/  $case_name | /"
	[ "$code" -eq "$want" ] || fail "$case_name: exit $code, not $want"
}
# expect KIND CHECK TEXT: the doctor printed exactly this line ("ok", "warn",
# "FAIL" or "skip", the check's name, what it says).
expect() {
	local want
	want=$(printf '%-5s %-9s %s' "$1" "$2" "$3")
	grep -qxF -- "$want" <<<"$out" || fail "$case_name: no line '$want'"
}
# expect_fix COMMAND NOTE: the fix line under the FAIL or warn line, exactly.
expect_fix() {
	local want
	want=$(printf '%15s fix: %s' "" "$1${2:+   ($2)}")
	grep -qxF -- "$want" <<<"$out" || fail "$case_name: no line '$want'"
}
# expect_re REGEX: a line matching REGEX (for what the VM decides: a GID index).
expect_re() { grep -qE -- "$1" <<<"$out" || fail "$case_name: no line matching '$1'"; }
# apply_fix: run the command of the last run's fix line, as the user would.
apply_fix() {
	local cmd
	cmd=$(sed -n 's/^ \{16\}fix: \(.*\)   (.*)$/\1/p' <<<"$out" | head -n 1)
	echo "  $case_name | (the test runs the fix: $cmd)"
	if [ -z "$cmd" ]; then
		fail "$case_name: no fix line to run"
	elif ! eval "$cmd"; then
		fail "$case_name: its fix '$cmd' failed"
	fi
}
# healthy_again: the VM put right (a port takes a moment to come back ACTIVE).
healthy_again() {
	for _ in $(seq 20); do
		"$doctor" --no-pair >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	fail "$case_name: the VM is not healthy again after the case"
	"$doctor" --no-pair
	echo "FAIL (the remaining cases were not run)"
	exit 1
}

if [ "${RDMA_LAB:-}" != vm ]; then
	if [ ! -d /sys/module/ib_uverbs ] && ! modinfo ib_uverbs >/dev/null 2>&1 &&
		! /sbin/modinfo ib_uverbs >/dev/null 2>&1; then
		run no_rdma 1
		expect FAIL modules "this kernel ($(uname -r)) has no RDMA modules (modinfo ib_uverbs finds none)"
		expect_fix "run the chapters in the lab VM instead: scripts/lab run -- scripts/doctor (see README.md)"
		expect skip device "needs modules"
		expect skip pair "needs gid"
		expect_re '^doctor: not ready: fix the first FAIL above'
	else
		echo "  no_rdma | left out: this host's kernel has RDMA modules"
	fi
	case "$build" in /*) ;; *) build=$PWD/$build ;; esac
	[ "$failed" -eq 0 ] || { echo FAIL; exit 1; }
	RDMA_LAB_FORCE_VM=1 exec "$ROOT/scripts/lab" run -- "$0" "$build"
fi
addr=$RDMA_LAB_ADDR

run healthy 0 --build "$build"
expect ok modules "ib_uverbs and rdma_ucm loaded; driver: rdma_rxe"
expect ok device "rxe0 port 1 ACTIVE, on dummy0"
expect ok link "dummy0 is up, IPv4 $addr; using $addr"
expect_re "^ok    gid       index [0-9]+ is RoCE v2 for $addr \(perftest: -x [0-9]+\)$"
expect ok mtu "active MTU 1024, dummy0 MTU 1500"
expect_re '^ok    memlock   root: registrations are not limited'
expect ok access "/dev/infiniband/rdma_cm and uverbs* are readable and writable by root"
expect ok firewall "no rule drops UDP 4791 (nftables, iptables, tc on dummy0)"
expect ok pair "01-connect's server and client connected and disconnected on $addr"
expect_re '^doctor: ready$'

ip link set dummy0 mtu 600
run mtu_low 3 --no-pair
expect warn mtu "active MTU 512, from dummy0's MTU 600: every RDMA message goes in packets of 512 bytes"
expect_fix "ip link set dummy0 mtu 1500" "as root; 4200 or more for MTU 4096"
expect_re '^doctor: ready, with warnings$'
apply_fix
healthy_again

run memlock 1 --as-nobody 64
expect FAIL memlock "ulimit -l is 64 KiB: the chapters register up to 2 MiB at their defaults (06's server 64 MiB)"
expect_fix "echo 'nobody - memlock unlimited' >>/etc/security/limits.d/rdma.conf" "as root; then log in again"
run memlock_06 3 --as-nobody 8192
expect warn memlock "ulimit -l is 8192 KiB: enough for 01-05, not for 06-mr-pool-server at its defaults (64 MiB: 8 buffers of -s 8M; -s 1M needs 8 MiB)"
expect_fix "echo 'nobody - memlock unlimited' >>/etc/security/limits.d/rdma.conf" "as root; then log in again"
expect warn firewall "not checked: listing nftables, iptables and tc rules needs root"
expect_fix "sudo scripts/doctor"

chmod 600 /dev/infiniband/rdma_cm
run access 1 --as-nobody unlimited
expect FAIL access "nobody cannot read and write /dev/infiniband/rdma_cm (crw------- root:root)"
expect_fix "chmod 666 /dev/infiniband/rdma_cm /dev/infiniband/uverbs*" "as root: the kernel's own mode; look for a udev rule that changed it"
apply_fix
healthy_again

tc qdisc replace dev dummy0 clsact
tc filter add dev dummy0 ingress protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 4791 0xffff action drop
run firewall 1 --no-pair
expect FAIL firewall "UDP 4791 (RoCEv2) is dropped: tc filter on dummy0 ingress, pref 1"
expect_fix "tc filter del dev dummy0 ingress pref 1" "as root"
apply_fix
healthy_again
tc qdisc del dev dummy0 clsact

# An input policy that drops by default with nothing accepting UDP 4791, as
# ufw and firewalld set one up. The VM's kernel has no nf_tables, so nft is
# a stand-in that lists such a ruleset: what is tested is the doctor's
# reading of it, its warning and its fix (nft's own rule; ufw's when ufw is
# active). A ruleset that accepts 4791 in that chain is ok.
stand=$(mktemp -d)
cat >"$stand/nft" <<'STAND'
#!/bin/sh
[ -n "${REX_STAND_ACCEPT:-}" ] && rule='		udp dport 4791 accept' || rule='		iif "lo" accept'
printf '%s\n' 'table inet filter {' '	chain input {' \
	'		type filter hook input priority filter; policy drop;' "$rule" '	}' '}'
STAND
printf '#!/bin/sh\necho "Status: active"\n' >"$stand/ufw"
chmod +x "$stand/nft" "$stand/ufw"
case_name=firewall_policy
out=$(PATH="$stand:$PATH" "$doctor" --no-pair 2>&1)
code=$?
printf '%s\n' "$out" | sed "s/^/  $case_name | /"
[ "$code" -eq 3 ] || fail "$case_name: exit $code, not 3"
expect warn firewall "input is dropped by default (nftables: inet filter input) and no rule accepts UDP 4791: RoCEv2 from other machines is dropped, unless a broader rule accepts them"
expect_fix "ufw allow 4791/udp" "as root"
rm "$stand/ufw"
out=$(PATH="$stand:$PATH" "$doctor" --no-pair 2>&1)
printf '%s\n' "$out" | sed "s/^/  $case_name | /"
expect_fix "nft insert rule inet filter input udp dport 4791 accept" "as root"
out=$(PATH="$stand:$PATH" REX_STAND_ACCEPT=1 "$doctor" --no-pair 2>&1)
code=$?
printf '%s\n' "$out" | sed "s/^/  $case_name | /"
[ "$code" -eq 0 ] || fail "$case_name: with 4791 accepted, exit $code, not 0"
expect ok firewall "no rule drops UDP 4791 (nftables, iptables, tc on dummy0)"
rm -r "$stand"

ip link set dummy0 down
run link_down 1 --no-pair
expect FAIL device "rxe0 port 1 is DOWN, not ACTIVE (its interface dummy0 is down or has no carrier)"
expect_fix "ip link set dummy0 up" "as root"
expect skip link "needs device"
expect skip gid "needs link"
apply_fix
healthy_again

ip addr del "$addr/24" dev dummy0
run address 1 --no-pair
expect FAIL link "dummy0 has no IPv4 address, so not $addr (RoCEv2 over IPv4 and the chapters' -a need one)"
expect_fix "ip addr add $addr/24 dev dummy0" "as root; your network's prefix length for 24"
expect skip gid "needs link"
apply_fix
healthy_again

rdma link delete rxe0
run device 1 --no-pair
expect FAIL device "no RDMA device (rdma link show lists none)"
expect_fix "rdma link add rxe0 type rxe netdev dummy0" "as root: Soft-RoCE on that interface; scripts/rxe-up does it by address"
apply_fix
healthy_again

rmmod rdma_ucm
run modules 1 --no-pair
expect FAIL modules "rdma_ucm not loaded (user-space verbs need ib_uverbs, the connection manager rdma_ucm)"
expect_fix "modprobe rdma_ucm" "as root; rdma-core's rdma-load-modules@ service loads them at boot"
expect skip device "needs modules"

[ "$failed" -eq 0 ] && echo PASS
exit "$failed"
