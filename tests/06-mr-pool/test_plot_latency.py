#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""06-mr-pool/plot-latency, from a made-up client JSON whose percentiles are
known: the table it prints (upper bucket edges over the scale, a percentile
left out when fewer than 10 samples lie beyond it, the exact maximum), the
PNG it writes, and its errors (no histogram: exit 1; no arguments: exit 2).

    test_plot_latency.py SOURCE_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys

src, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
tool = f"{src}/06-mr-pool/plot-latency"
failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print(f"FAIL: {what}")


# 1000 samples, half round trips (scale 2): 989 of 20 us (40000 ns, bucket
# [39936, 40447]) and 11 of 200 us (400000 ns, bucket [397312, 401407]),
# the largest exactly 400500 ns.
doc = {"op": "send", "mode": "lat", "results": [
    {"bytes": 64, "iterations": 1000, "t_min_us": 20.0, "histogram": {
        "unit": "ns", "scale": 2, "sub_buckets": 64, "n": 1000, "min": 40000, "max": 400500,
        "buckets": [[39936, 40447, 989], [397312, 401407, 11]]}}]}
with open(f"{work}/lat.json", "w") as f:
    json.dump(doc, f)
r = subprocess.run([tool, f"{work}/lat.png", f"{work}/lat.json"], capture_output=True, text=True)
print(r.stdout, r.stderr)
check(r.returncode == 0, f"exit {r.returncode}, expected 0")
lines = r.stdout.splitlines()
check(lines and lines[0].split()[:7] == ["run", "50%", "90%", "99%", "99.9%", "99.99%", "max"],
      f"header: {lines[:1]}")
row = lines[1].split() if len(lines) > 1 else []
# 50%, 90%, 99% (rank 990: the first slow one; 10 beyond it): upper edges
# over 2 in us; 99.9% and 99.99%: fewer than 10 beyond, "-"; max exact.
check(row == ["send", "64B", "(half", "round", "trip),", "1000", "samples", "20.22", "20.22", "200.25", "-", "-", "200.25"],
      f"row: {row}")
png = f"{work}/lat.png"
check(os.path.exists(png) and open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", "lat.png not written")

with open(f"{work}/bw.json", "w") as f:
    json.dump({"op": "write", "mode": "bw", "results": [{"bytes": 64, "iterations": 5}]}, f)
r = subprocess.run([tool, f"{work}/bw.png", f"{work}/bw.json"], capture_output=True, text=True)
check(r.returncode == 1 and "no latency histogram" in r.stderr, f"bw.json: {r.returncode} {r.stderr}")
r = subprocess.run([tool], capture_output=True, text=True)
check(r.returncode == 2, f"no arguments: exit {r.returncode}, expected 2")
print("FAILED" if failures else "ok")
sys.exit(1 if failures else 0)
