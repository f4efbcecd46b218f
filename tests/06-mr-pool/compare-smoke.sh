#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The comparison with perftest, one repetition of two small points (WRITE
# bandwidth at 4 KiB, WRITE latency at 8 B): it ends with 0, both programs
# gave a result at every point, and what it writes is whole: the table,
# JSON (parsed), CSV (every row, every column) and the two plots; our
# server's pool was sized to the point (twice, a page at least a half) and
# its latency answers came from the second half.
#
#   compare-smoke.sh SOURCE_DIR BIN_DIR PORT     (test 06-mr-pool.compare_smoke)
#
# Exit 0 pass, 1 fail, 77 skipped (no RDMA_LAB_ADDR), unless REX_REQUIRE_RDMA=1.
set -u
src=$1 bin=$2 port=$3
if [ -z "${RDMA_LAB_ADDR:-}" ]; then
	[ "${REX_REQUIRE_RDMA:-0}" = 1 ] && { echo "FAIL: no RDMA_LAB_ADDR"; exit 1; }
	echo "SKIP: RDMA_LAB_ADDR is not set (run through scripts/lab run)"
	exit 77
fi
out=$(mktemp -d "$bin/../compare-smoke.XXXXXX")
trap 'rm -rf "$out"' EXIT
python3 "$src/06-mr-pool/compare.py" --bin "$bin" --out "$out" --port "$port" --pairs 1 \
	--ops write --modes bw,lat --bw-sizes 4096 --lat-sizes 8 --scale 0.1
code=$?
if [ "$code" -ne 0 ]; then
	echo "FAIL: compare exited with $code"
	for f in "$out"/raw/*.log; do echo "--- $f"; cat "$f"; done
	exit 1
fi
python3 - "$out" <<'PY'
import csv, json, os, re, sys
out = sys.argv[1]
bad = []
doc = json.load(open(f"{out}/compare.json"))
for key in ("date", "device", "kernel", "pairs", "rule"):
    if key not in doc["meta"]:
        bad.append(f"compare.json: meta has no {key}")
points = doc["points"]
if [(p["op"], p["mode"], p["bytes"]) for p in points] != [("write", "bw", 4096), ("write", "lat", 8)]:
    bad.append(f"compare.json: points {[(p['op'], p['mode'], p['bytes']) for p in points]}")
for p in points:
    for tool in ("ours", "perftest"):
        if p[tool]["runs_ok"] != 1:
            bad.append(f"{p['mode']}: {tool} gave {p[tool]['runs_ok']} results of 1")
        elif not p[tool][p["metric"]]["median"] > 0:
            bad.append(f"{p['mode']}: {tool}'s {p['metric']} is not positive")
    if not (p["ratio"] or 0) > 0:
        bad.append(f"{p['mode']}: no ratio")
    if p["verdict"] != "too few pairs" or p["interval"] is not None:
        bad.append(f"{p['mode']}: one pair gave a verdict: {p['verdict']}")
rows = list(csv.DictReader(open(f"{out}/compare.csv")))
if len(rows) != 4:
    bad.append(f"compare.csv: {len(rows)} rows, not 4")
for r in rows:
    empty = [k for k in ("op", "mode", "bytes", "tool", "median", "min", "max", "ratio") if not r.get(k)]
    if empty:
        bad.append(f"compare.csv: empty {empty} in {r}")
text = open(f"{out}/compare.txt").read()
if ("ratio" not in text or not re.search(r"^write +bw +4096 .* too few pairs ", text, re.M)
        or not re.search(r"^write +lat +8 .* too few pairs ", text, re.M)):
    bad.append("compare.txt: not the table")
wide = [line for line in text.splitlines() if len(line) > 100]
if wide:
    bad.append(f"compare.txt: lines wider than 100 columns: {wide[:1]}")
# Our server's pool sized to the point, twice, a page at least a half
# (--server-pool point), and latency answers from the second half.
if doc["meta"].get("server_pool") != "point" or not doc["meta"].get("server_pool_halves"):
    bad.append(f"compare.json: server_pool {doc['meta'].get('server_pool')!r}, not 'point' in halves")
for tag in ("write-bw-4096-1-ours", "write-lat-8-1-ours"):
    log = open(f"{out}/raw/{tag}.server.log").read()
    if not re.search(r"^server: pool on \S+: 8 buffers of 8192 bytes", log, re.M):
        bad.append(f"raw/{tag}.server.log: no pool of 8 buffers of 8192 bytes")
log = open(f"{out}/raw/write-lat-8-1-ours.server.log").read()
if not re.search(r"^server: .*: write lat, .*, answers from the buffer's second half: accepting", log, re.M):
    bad.append("raw/write-lat-8-1-ours.server.log: answers not from the buffer's second half")
for png in ("bw.png", "lat.png", "ratio.png"):
    path = f"{out}/{png}"
    if not os.path.exists(path) or open(path, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
        bad.append(f"{png}: missing or not a PNG")
for b in bad:
    print("FAIL:", b)
print("PASS" if not bad else f"{len(bad)} failures")
sys.exit(1 if bad else 0)
PY
