#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The test doctor.peer (label lab): scripts/doctor --peer across the lab's
# wire. 01-connect-server runs in one VM (10.78.0.1); in the other
# (10.78.0.2) the doctor checks its own machine and then reaches that
# server over the wire: "ok peer". Then, with nobody at 10.78.0.9, the peer
# check fails, names the cause and says what to start first (exit 1).
#
#   tests/doctor/peer.sh [BUILD_DIR]   on the host (boots two lab VMs);
#                                      BUILD_DIR (default: build) has
#                                      01-connect's programs
# Exit: 0 pass, 1 fail.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-$ROOT/build}
case "$build" in /*) ;; *) build=$PWD/$build ;; esac
failed=0
fail() { echo "FAIL: $*"; failed=1; }

# In the client VM: the doctor twice, each followed by its exit status. The
# server VM's address is RDMA_LAB_ADDR there, the VM's own RDMA_LAB_SELF.
client="scripts/doctor --no-pair --build $build -a \$RDMA_LAB_SELF --peer \$RDMA_LAB_ADDR; echo \"doctor exit \$?\";
	scripts/doctor --no-pair --build $build -a \$RDMA_LAB_SELF --peer 10.78.0.9; echo \"doctor exit \$?\""
out=$(cd "$ROOT" && scripts/lab pair --two-vms --timeout 300 \
	"$build/bin/01-connect-server -a \$RDMA_LAB_ADDR" "$client" 2>&1)
printf '%s\n' "$out" | sed 's/^/  | /'

# has TEXT: a line of the client VM is exactly TEXT.
has() { grep -qxF -- "[client-vm] $1" <<<"$out" || fail "no line '[client-vm] $1'"; }
has "ok    peer      01-connect's client reached the server on 10.78.0.1, over the wire, and disconnected"
has "doctor exit 0"
grep -qE '^\[client-vm\] FAIL  peer      01-connect-client to 10\.78\.0\.9 failed: 01-connect-client: .+$' <<<"$out" ||
	fail "no FAIL line for the peer 10.78.0.9"
has "                fix: start build/bin/01-connect-server -a 10.78.0.9 on that machine first, and run scripts/doctor there too (its firewall check)"
has "doctor exit 1"
[ "$failed" -eq 0 ] || { echo FAIL; exit 1; }
echo PASS
