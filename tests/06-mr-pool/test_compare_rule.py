#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compare.py's rule for reading, without RDMA: the sign test's interval
against the binomial tables, the verdict from the interval alone (the same
for wins and losses), speed ratios in one direction for both modes, which
percentiles may be quoted, and what the table, CSV and plots carry; the
tables under docs/results/ are their JSON files' (--table); a stale build
is named (stale_binaries()).

    test_compare_rule.py SOURCE_DIR OUT_DIR      (test 06-mr-pool.compare_rule)
"""
import csv
import importlib.util
import json
import os
import sys

src, out = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("compare", f"{src}/06-mr-pool/compare.py")
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)
bad = []


def check(cond, what):
    if not cond:
        bad.append(what)


# The sign test: fewer than 6 pairs give no 95% interval; 6 to 8 give
# min..max; 9 the 2nd and 8th; 20 the 6th and 15th (binomial tables).
check(compare.sign_interval([1.0] * 5) is None, "5 pairs gave an interval")
for n, (k, level) in {6: (1, 0.96875), 8: (1, 0.99219), 9: (2, 0.96094), 20: (6, 0.95861)}.items():
    got = compare.sign_interval([float(x) for x in range(n, 0, -1)])
    check(got is not None and got[0] == k and got[1] == n + 1 - k and abs(got[2] - level) < 1e-4,
          f"{n} pairs: interval {got}, not ranks {k}..{n + 1 - k} at {level}")

# One rule: faster, slower, not told apart, from the interval alone.
check(compare.verdict((1.05, 1.3, 0.96)) == "faster", "an interval above 1 is not 'faster'")
check(compare.verdict((0.5, 0.97, 0.96)) == "slower", "an interval below 1 is not 'slower'")
check(compare.verdict((0.9, 1.2, 0.96)) == "not told apart", "an interval holding 1")
check(compare.verdict(None) == "too few pairs", "no interval")

# Speed ratios: above 1 means ours is faster, in both modes.
check(compare.speed_ratio("bw", {"bw_avg_mib_s": 30.0}, {"bw_avg_mib_s": 20.0}) == 1.5, "bw ratio")
check(compare.speed_ratio("lat", {"t_typical_us": 20.0}, {"t_typical_us": 30.0}) == 1.5,
      "lat ratio: lower latency must read as faster")
check(compare.speed_ratio("lat", None, {"t_typical_us": 30.0}) is None, "a failed run gives a ratio")

# Percentiles: 99.9% wants 10,000 samples, 99% wants 1,000.
check(compare.quotable("t_p999_us", 10000) and not compare.quotable("t_p999_us", 9999), "99.9% rule")
check(compare.quotable("t_p99_us", 1000) and not compare.quotable("t_p99_us", 999), "99% rule")


# perftest's rows: a bandwidth of 0 (no clock to divide by) is no result, and
# the line saying why is found.
hdr = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]\n"
good = compare.parse_perftest([hdr, " 4096       1000           39.55              39.50                 0.010112\n"], "bw")
check(good is not None and good["bw_avg_mib_s"] == 39.5, f"a bw row read as {good}")
check(compare.parse_perftest([hdr, " 4096       1000           0.00               0.00                  0.000000\n"],
                             "bw") is None, "a bandwidth of 0 taken as a result")
clock = compare.perftest_clock_failed(["Correlation coefficient r^2: 0.61 < 0.9\n", hdr])
check(clock == "Correlation coefficient r^2: 0.61 < 0.9", f"the clock's failure not found: {clock}")
check(compare.perftest_clock_failed([hdr]) is None, "a clock failure found where there is none")


# A table as main() makes it, from made-up runs: one point faster, one
# slower, one not told apart, one with too few pairs.
def point(op, mode, size, ours, pt, samples=10000):
    key = compare.METRIC[mode]
    e = {"op": op, "mode": mode, "bytes": size, "metric": key, "iterations": samples}
    for tool, vals in (("ours", ours), ("perftest", pt)):
        rows = [{key: v, "cpu_user_s": 0.1, "cpu_sys_s": 0.2, "t_p99_us": v * 2,
                 "t_p999_us": v * 3, "bw_peak_mib_s": v, "msg_rate_mpps": 0.01} for v in vals]
        e[tool] = {k: compare.summarise(rows, k) for k in
                   [key, "cpu_user_s", "cpu_sys_s", "t_p99_us", "t_p999_us"]}
        for k in ("t_p99_us", "t_p999_us"):
            e[tool][k]["quotable"] = compare.quotable(k, samples)
        e[tool]["runs"] = e[tool]["runs_ok"] = len(vals)
    ratios = [compare.speed_ratio(mode, {key: a}, {key: b}) for a, b in zip(ours, pt)]
    iv = compare.sign_interval(ratios)
    e["ratio"] = sorted(ratios)[len(ratios) // 2]
    e["interval"] = None if iv is None else {"low": iv[0], "high": iv[1], "confidence": iv[2]}
    e["verdict"] = compare.verdict(iv)
    return e


table = [point("write", "bw", 4096, [30, 31, 29, 32, 30, 31, 33, 30, 29], [20, 21, 22, 20, 19, 21, 20, 22, 21]),
         point("write", "bw", 65536, [10, 11, 9, 10, 12, 10, 11, 10, 9], [20, 21, 22, 20, 19, 21, 20, 22, 21]),
         point("send", "lat", 8, [50, 60, 40, 55, 45, 52, 48, 58, 42], [50, 45, 55, 48, 52, 60, 40, 47, 53], 1000),
         point("read", "lat", 8, [50, 60, 40], [50, 45, 55])]
check([e["verdict"] for e in table] == ["faster", "slower", "not told apart", "too few pairs"],
      f"verdicts {[e['verdict'] for e in table]}")
meta = {"date": "today", "device": "rxe0", "kernel": "6.1", "pairs": 9}
text = compare.format_table(table, meta)
check("# verdicts: faster 1, slower 1, not told apart 1, too few pairs 1" in text, "verdict counts")
# A run given more arguments says so (a saved table must tell its run apart).
check("arguments" not in text, "a run without more arguments names some")
text_lend = compare.format_table(table, dict(meta, ours_server_args="--lend"))
check("# more arguments of our server (--ours-server-args): --lend\n" in text_lend,
      "a run with the server's --lend does not say so")
tails = [l.split() for l in text.splitlines() if l.startswith("send ") and "lat" not in l]
check(tails == [["send", "8", "1000", "100.0", "100.0", "150.0*", "150.0*"]],
      f"1,000 samples: 99% quoted, 99.9% marked '*': {tails}")
# A slow run in a loaded VM (4,002 us; 10.08 s of CPU; perftest at 3,776 us,
# a ratio of 268) keeps the width too.
slow = [point("write", "lat", 8, [4001.9] * 6, [13.5] * 6),
        point("write", "lat", 8, [14.1] * 6, [3776.1] * 6)]
for side in ("ours", "perftest"):
    slow[0][side]["cpu_user_s"]["median"] = 10.0
text_slow = compare.format_table(slow, meta)
wide = [l for l in (text + text_slow).splitlines() if len(l) > compare.TABLE_WIDTH]
check(not wide, f"table lines wider than {compare.TABLE_WIDTH} columns: {wide[:2]}")

# The tables the pages show are the tables of the runs' JSON files,
# printed by --table: the figures on a page are a run's, not edited.
for saved in ("06-compare", "06-compare-2026-11-24", "06-compare-2026-11-27",
              "06-compare-2026-11-29-0843", "06-compare-2026-11-29-1336", "06-compare-2026-11-29-1416",
              "06-compare-2026-11-29-2128", "06-compare-2026-11-29-2358",
              "06-compare-2026-11-30-lat30", "06-compare-self-2026-11-30-send8",
              "06-compare-2026-12-07-lend", "06-compare-2026-12-07-lend-lat30",
              "06-compare-2026-12-07-code", "06-compare-2026-12-07-code-lat30",
              "06-compare-2026-12-08-code", "06-compare-2026-12-08-option",
              "06-compare-2026-12-08-option2",
              "06-compare-self-2026-12-08", "06-compare-self-2026-12-08-2",
              "06-compare-self",
              "06-grant-cost"):
    with open(f"{src}/docs/results/{saved}.json") as f:
        run = json.load(f)
    with open(f"{src}/docs/results/{saved}.txt") as f:
        check(f.read() == compare.format_table(run["points"], run["meta"]),
              f"docs/results/{saved}.txt is not compare.py --table {saved}.json")
os.makedirs(out, exist_ok=True)
compare.write_csv(f"{out}/compare.csv", table)
rows = list(csv.DictReader(open(f"{out}/compare.csv")))
check(len(rows) == 8, f"{len(rows)} CSV rows, not 8")
check([r["verdict"] for r in rows[::2]] == ["faster", "slower", "not told apart", "too few pairs"],
      "CSV verdicts")
check(all(r["ratio_low"] and r["ratio_high"] for r in rows[:6]), "CSV intervals")
compare.plot(out, table)
for png in ("bw.png", "lat.png", "ratio.png"):
    path = f"{out}/{png}"
    ok = os.path.exists(path) and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n"
    check(ok, f"{png} not written")
    gp = open(f"{out}/{png[:-4]}.gp").read()
    check("set yrange [0:*]" in gp, f"{png}: the y axis does not start at 0")

# A stale build is named: a source newer than every program built from it,
# or a program missing; a build newer than every source is not, nor one
# where one program was built after the last edit.
bindir = f"{out}/bin"
os.makedirs(bindir, exist_ok=True)
progs = ["06-mr-pool-server", "06-mr-pool-client"]
for prog in progs:
    open(f"{bindir}/{prog}", "w").close()
    os.utime(f"{bindir}/{prog}", (1, 1))
stale = compare.stale_binaries(bindir, progs, ["06-mr-pool"])
check(stale is not None and "is newer than" in stale and stale.startswith(("06-mr-pool/", "common/"))
      and "the last program built from it" in stale, f"an old build: {stale}")
future = os.path.getmtime(f"{src}/06-mr-pool/compare.py") + 10 ** 6
for prog in progs:
    os.utime(f"{bindir}/{prog}", (future, future))
check(compare.stale_binaries(bindir, progs, ["06-mr-pool"]) is None, "a new build called stale")
os.utime(f"{bindir}/06-mr-pool-client", (1, 1))
check(compare.stale_binaries(bindir, progs, ["06-mr-pool"]) is None,
      "a build in which only the server changed called stale")
os.remove(f"{bindir}/06-mr-pool-client")
stale = compare.stale_binaries(bindir, progs, ["06-mr-pool"])
check(stale is not None and "06-mr-pool-client does not exist" in stale, f"a missing program: {stale}")

for b in bad:
    print(f"FAIL: {b}")
print("PASS" if not bad else f"{len(bad)} failed")
sys.exit(1 if bad else 0)
