#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The test doctor.breaks (label lab): scripts/doctor on a healthy lab VM, then
# with each check broken on purpose, one at a time, asserting the line it
# prints and its exit status, and putting the VM right again after each.
#
#   tests/doctor/breaks.sh       on the host: boots one lab VM for all cases
#
# Cases, in order (the last cannot be undone inside the VM: the VM's module
# files are in its initramfs, outside the root the command runs in):
#   healthy    every check ok, exit 0
#   mtu_low    dummy0's MTU 600: rxe drops to MTU 512, a warning (exit 3)
#              (the doctor's FAIL for an active MTU too large for its
#              interface cannot be made on rxe: rxe recomputes its active
#              MTU from the interface's, e.g. 512 for an MTU of 1050)
#   memlock    as the user nobody with ulimit -l 64 (KiB)
#   memlock_06 as nobody with ulimit -l 8192, Debian's default: a warning
#   access     /dev/infiniband/rdma_cm mode 600, as nobody
#   firewall   a tc filter dropping UDP 4791 on dummy0's ingress
#   link_down  dummy0 down: rxe0's port leaves ACTIVE
#   address    dummy0 without its IPv4 address
#   device     rxe0 deleted (rdma link delete)
#   modules    rdma_ucm unloaded
# Exit: 0 pass, 1 fail.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "${RDMA_LAB:-}" != vm ]; then
	RDMA_LAB_FORCE_VM=1 exec "$ROOT/scripts/lab" run -- "$0"
fi
doctor=$ROOT/scripts/doctor
addr=$RDMA_LAB_ADDR
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
expect() { grep -qE -- "$1" <<<"$out" || fail "$case_name: no line matching '$1'"; }
# healthy_again: the VM put right (a port takes a moment to come back ACTIVE).
healthy_again() {
	local i
	for i in $(seq 20); do
		"$doctor" --no-pair >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	fail "$case_name: the VM is not healthy again after the case"
	"$doctor" --no-pair
	echo "FAIL (the remaining cases were not run)"
	exit 1
}

run healthy 0
for check in modules device link gid mtu memlock access firewall; do
	expect "^ok    $check "
done
expect '^ok    pair      01-connect.s server and client connected'

ip link set dummy0 mtu 600
run mtu_low 3 --no-pair
expect '^warn  mtu       active MTU 512, from dummy0.s MTU 600'
ip link set dummy0 mtu 1500
healthy_again

run memlock 1 --as-nobody 64
expect '^FAIL  memlock   ulimit -l is 64 KiB: the chapters register up to 2 MiB'
expect "fix: as root: echo 'nobody - memlock unlimited' >/etc/security/limits.d/rdma.conf"
run memlock_06 3 --as-nobody 8192
expect '^warn  memlock   ulimit -l is 8192 KiB: enough for 01-05, not for 06-mr-pool-server'
expect '^warn  firewall  not checked: listing nftables, iptables and tc rules needs root'

chmod 600 /dev/infiniband/rdma_cm
run access 1 --as-nobody unlimited
expect '^FAIL  access    nobody cannot read and write /dev/infiniband/rdma_cm \(crw-------'
chmod 666 /dev/infiniband/rdma_cm
healthy_again

tc qdisc replace dev dummy0 clsact
tc filter add dev dummy0 ingress protocol ip prio 1 u32 match ip protocol 17 0xff match ip dport 4791 0xffff action drop
run firewall 1 --no-pair
expect '^FAIL  firewall  UDP 4791 \(RoCEv2\) is dropped: tc filter on dummy0 ingress'
tc qdisc del dev dummy0 clsact
healthy_again

ip link set dummy0 down
run link_down 1 --no-pair
expect '^FAIL  device    rxe0 port 1 is DOWN, not ACTIVE'
expect 'fix: ip link set dummy0 up'
expect '^skip  gid       needs link'
ip link set dummy0 up
healthy_again

ip addr del "$addr/24" dev dummy0
run address 1 --no-pair
expect '^FAIL  link      dummy0 has no IPv4 address'
ip addr add "$addr/24" dev dummy0
healthy_again

rdma link delete rxe0
run device 1 --no-pair
expect '^FAIL  device    no RDMA device'
expect 'fix: rdma link add rxe0 type rxe netdev dummy0'
rdma link add rxe0 type rxe netdev dummy0
healthy_again

rmmod rdma_ucm
run modules 1 --no-pair
expect '^FAIL  modules   rdma_ucm not loaded'
expect 'fix: modprobe rdma_ucm'

[ "$failed" -eq 0 ] && echo PASS
exit "$failed"
