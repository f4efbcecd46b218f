#!/bin/sh
# SPDX-License-Identifier: MIT
#
# memlock.sh REGCOST: the test 06-mr-pool.memlock_named (label rdma).
#
# A registration beyond an unprivileged user's locked-memory limit must say
# so: the limit, what was asked, and how to raise it. As the user nobody,
# with `ulimit -l 64` (KiB), regcost registers 1 MiB: it must exit 1 and
# print the message and both hints. Root ignores the limit, hence the
# other user; the device file is opened to others for the test's length.
#
# Exit status: 0 pass, 1 fail, 77 skipped (no RDMA_LAB_ADDR, or not root;
# a failure when REX_REQUIRE_RDMA=1).
set -u
regcost=$1
skip() {
	if [ "${REX_REQUIRE_RDMA:-0}" = 1 ]; then
		echo "FAIL: $*"
		exit 1
	fi
	echo "SKIP: $*"
	exit 77
}
[ -n "${RDMA_LAB_ADDR:-}" ] || skip "RDMA_LAB_ADDR is not set (run through scripts/lab run)"
[ "$(id -u)" -eq 0 ] || skip "needs root, to run regcost as another user"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
dev=$(ls /dev/infiniband/uverbs* 2>/dev/null | head -n 1)
[ -n "$dev" ] || skip "no /dev/infiniband/uverbs*"
mode=$(stat -c %a "$dev")
trap 'chmod "$mode" "$dev"' EXIT
chmod o+rw "$dev"

out=$(sh -c 'ulimit -l 64 && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$0" -s 1M -n 5 --pages normal' \
	"$regcost" 2>&1)
code=$?
printf '%s\n' "$out"
failed=0
fail() {
	echo "FAIL: $*"
	failed=1
}
[ "$code" -eq 1 ] || fail "exit code $code, expected 1"
for want in \
	'06-mr-pool-regcost: ibv_reg_mr of 1048576 bytes: Cannot allocate memory' \
	'  hint: registered memory is pinned, and counts against the locked-memory limit (RLIMIT_MEMLOCK, `ulimit -l`): 64 KiB for this process, and this registration asked for 1024 KiB more' \
	'  hint: raise the limit for this user: `memlock` in /etc/security/limits.conf'; do
	printf '%s\n' "$out" | grep -qF -- "$want" || fail "no line with: $want"
done
[ "$failed" -eq 0 ] && echo PASS
exit "$failed"
