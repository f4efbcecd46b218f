#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The scale sweep, two points (1 and 64 connections), one pair each: it ends
# with 0, every run gave its figures, what it writes is whole (table, JSON
# with each point's connections and mode, CSV, its five plots), and the
# figures say what a shared receive queue is for, read from `rdma resource
# show mr` as the sweep read it (1000 messages a connection: the first
# connections must still be open when the last is set up, which under a
# loaded host took 1.3 s; with 100, one of three loaded rounds failed on
# that; and 6000 a run at least: one connection's 2000 lasted 0.7 s, as
# long as one reading of the server, four calls of `rdma` at 0.22 s each,
# and a fresh machine's run once read no QP in three readings): with
# receives of their own, the server's
# registered bytes grow by two regions a connection (receive and send
# slots); on the shared queue by one (send slots only), its receive memory
# at 64 connections that of 1: one pool, the same length.
#
#   scale-smoke.sh SOURCE_DIR BIN_DIR PORT     (test 06-mr-pool.scale_smoke)
#
# Exit 0 pass, 1 fail, 77 skipped (no RDMA_LAB_ADDR), unless REX_REQUIRE_RDMA=1.
set -u
src=$1 bin=$2 port=$3
if [ -z "${RDMA_LAB_ADDR:-}" ]; then
	[ "${REX_REQUIRE_RDMA:-0}" = 1 ] && { echo "FAIL: no RDMA_LAB_ADDR"; exit 1; }
	echo "SKIP: RDMA_LAB_ADDR is not set (run through scripts/lab run)"
	exit 77
fi
out=$(mktemp -d "$bin/../scale-smoke.XXXXXX")
trap 'rm -rf "$out"' EXIT
python3 "$src/06-mr-pool/scale.py" --bin "$bin" --out "$out" --port "$port" --pairs 1 \
	--points 1,64 --count 1000 --messages 6000 --srq-recvs 512
code=$?
if [ "$code" -ne 0 ]; then
	echo "FAIL: the sweep exited with $code"
	# Each reading of the server: from and to (s since "established"), QPs.
	python3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["runs"]:
    print(r["connections"], r["mode"], r.get("error", "ok"), "readings:", r.get("reading_log"))' \
		"$out/scale.json" 2>&1
	for f in "$out"/raw/*.txt; do echo "--- $f"; cat "$f"; done
	exit 1
fi
python3 - "$out" <<'PY'
import csv, json, os, sys
out = sys.argv[1]
bad = []
doc = json.load(open(f"{out}/scale.json"))
runs = {(r["connections"], r["mode"]): r for r in doc["runs"]}
if sorted(runs) != [(1, "own"), (1, "srq"), (64, "own"), (64, "srq")]:
    bad.append(f"scale.json: runs {sorted(runs)}")
for key, r in sorted(runs.items()):
    if "error" in r:
        bad.append(f"{key}: {r['error']}")
    for k in ("mr_bytes", "mrs", "qps", "cqs", "rss_kib", "setup_median_ms", "msgs_per_s",
              "rtt_median_us", "rtt_p99_us", "cpu_busy_pct", "server_cpu_pct", "client_cpu_pct"):
        if not (r.get(k) or 0) > 0:
            bad.append(f"{key}: {k} is {r.get(k)}")
    if r.get("qps") != key[0] or r.get("cqs") != key[0]:
        bad.append(f"{key}: {r.get('qps')} QPs and {r.get('cqs')} CQs, not one each a connection")
if not bad:
    # One connection's own regions: two of one length (receive and send slots).
    one = runs[(1, "own")]
    (slot_len, n), = [(int(k), v) for k, v in one["mr_lengths"].items()] or [(0, 0)]
    if n != 2:
        bad.append(f"one connection, own receives: MRs {one['mr_lengths']}, not two alike")
    grow_own = runs[(64, "own")]["mr_bytes"] - one["mr_bytes"]
    grow_srq = runs[(64, "srq")]["mr_bytes"] - runs[(1, "srq")]["mr_bytes"]
    if grow_own != 63 * 2 * slot_len:
        bad.append(f"own receives: 63 more connections registered {grow_own} bytes, "
                   f"not 63 x 2 x {slot_len}")
    if grow_srq != 63 * slot_len:
        bad.append(f"shared queue: 63 more connections registered {grow_srq} bytes, "
                   f"not 63 x {slot_len}: its receive memory grew")
    for n in (1, 64):
        r = runs[(n, "srq")]
        pools = {k: v for k, v in r["mr_lengths"].items() if int(k) != slot_len}
        if len(pools) != 1 or list(pools.values()) != [1] or r["mrs"] != n + 1:
            bad.append(f"shared queue, {n} connections: MRs {r['mr_lengths']}, not one pool "
                       f"and {n} send regions")
        if r.get("srq", {}).get("receives") != 512:
            bad.append(f"shared queue, {n} connections: the server's line says {r.get('srq')}")
    points = [(e["connections"], e["mode"]) for e in doc["table"]]
    if points != [(1, "own"), (1, "srq"), (1, "srq/own"), (64, "own"), (64, "srq"), (64, "srq/own")]:
        bad.append(f"scale.json: table {points}")
rows = list(csv.DictReader(open(f"{out}/scale.csv")))
if [(r["connections"], r["mode"]) for r in rows] != [("1", "own"), ("1", "srq"), ("64", "own"), ("64", "srq")]:
    bad.append("scale.csv: its rows")
text = open(f"{out}/scale.txt").read()
if "srq/own" not in text or "messages/s" not in text:
    bad.append("scale.txt: no table")
for png in ("memory", "objects", "setup", "rate", "rtt"):
    if os.path.getsize(f"{out}/{png}.png") < 1000:
        bad.append(f"{png}.png is empty")
for b in bad:
    print("FAIL:", b)
if not bad:
    print(open(f"{out}/scale.txt").read(), end="")
    print("PASS: the sweep's two points, whole; a shared queue's receive memory does not grow")
sys.exit(1 if bad else 0)
PY
