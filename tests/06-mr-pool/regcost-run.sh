#!/bin/sh
# SPDX-License-Identifier: MIT
#
# regcost-run.sh REGCOST JSON: the test 06-mr-pool.regcost_run (label rdma).
#
# Runs the measurement briefly (4 KiB and 64 KiB, normal and huge pages, 50
# pairs each), then checks its output's shape: the table's header and one
# row per size and kind of page, with numbers where numbers belong (three
# columns: reg + dereg, pool get + put, a window's bind + invalidate); and
# the JSON file, parsed by python3: its keys, four rows, a positive median
# and p99 >= median in each, and a ratio that is the quotient of the medians.
# The numbers themselves are not judged: they are the machine's.
#
# Exit status: 0 pass, 1 fail, 77 skipped (no RDMA device; a failure when
# REX_REQUIRE_RDMA=1).
set -u
regcost=$1 json=$2
rm -f "$json"
out=$("$regcost" -s 4K,64K -n 50 --json "$json" 2>&1)
code=$?
printf '%s\n' "$out"
if [ "$code" -eq 77 ]; then
	if [ "${REX_REQUIRE_RDMA:-0}" = 1 ]; then
		echo "FAIL: RDMA is required here (REX_REQUIRE_RDMA=1) but regcost found no device"
		exit 1
	fi
	exit 77
fi
fail() {
	echo "FAIL: $*"
	exit 1
}
[ "$code" -eq 0 ] || fail "exit code $code, expected 0"

expect() {
	printf '%s\n' "$out" | grep -Eq -- "$1" || fail "no line matches: $1"
}
num='[0-9]+\.[0-9]+'
expect "^regcost: device [a-z0-9_]+; ibv_reg_mr \\+ ibv_dereg_mr of one touched buffer \\(access IBV_ACCESS_LOCAL_WRITE\\)$"
expect "^regcost: against rex_pool_get \\+ rex_pool_put, and bind \\+ invalidate of a type 2 window over it$"
expect "^regcost: 50 pairs per size up to 1 MiB, 200 above; pool pairs timed in batches of 1000; a clock read costs [0-9]+ ns$"
expect "^size +pages +got +calls +reg\\+dereg +pool get\\+put +bind\\+inval +ratio$"
expect "^ +median us +p99 us +median us +p99 us +median us +p99 us +medians$"
for size in 4 64; do
	expect "^$size KiB +normal +normal +50 +$num +$num +$num +$num +$num +$num +[0-9]+$"
	expect "^$size KiB +huge +(MAP_HUGETLB|THP [0-9]+%|normal) +50 +$num +$num +$num +$num +$num +$num +[0-9]+$"
done
expect "^regcost: wrote $json$"

command -v python3 >/dev/null 2>&1 || fail "python3 is needed to check the JSON"
python3 - "$json" <<'PY' || fail "the JSON file is not what it should be"
import json, sys
with open(sys.argv[1]) as f:
    doc = json.load(f)
for key in ("program", "date", "kernel", "device", "access", "unit", "pool_batch",
            "clock_read_ns", "rows"):
    assert key in doc, "no key " + key
assert doc["program"] == "06-mr-pool-regcost" and doc["unit"] == "us"
rows = doc["rows"]
assert [(r["size"], r["pages"]) for r in rows] == [
    (4096, "normal"), (4096, "huge"), (65536, "normal"), (65536, "huge")], rows
for r in rows:
    assert r["got"] in ("normal", "THP", "MAP_HUGETLB"), r["got"]
    assert r["pages"] == "huge" or (r["got"] == "normal" and r["thp_percent"] == 0), r
    assert r["calls"] == 50
    for name in ("reg_dereg", "pool_get_put", "bind_invalidate"):
        s = r[name]
        assert s["n"] == 50
        assert 0 < s["min"] <= s["median"] <= s["p99"] <= s["max"], (name, s)
    # The ratio of the medians, to the precision printed.
    want = r["reg_dereg"]["median"] / r["pool_get_put"]["median"]
    assert abs(r["ratio"] - want) <= 0.05 + want * 0.01, (r["ratio"], want)
print("ok: %s: %d rows, ratios %s" % (sys.argv[1], len(rows), [r["ratio"] for r in rows]))
PY
