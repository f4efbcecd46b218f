#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Latency under an offered load: 06's client with -m load, a sweep of
offered rates up to past the point where the server's side saturates, for
each op, in one lab run.

For each op it first measures the capacity: a bandwidth run of the same
size, QPs and depth (-m bw -t DEPTH), its messages per second. The offered
rates are then --fractions of that capacity (or --rates, given). Each rate
runs --repeats times, every run a client of its own against one server per
op: -m load --rate R for --duration seconds. A request is timed from when
it was due, not from when it went out (the client's -m load says how), so
past the capacity the latency grows with the queue, as a user would see it.

For each (op, rate) the table gives the medians of the runs' achieved rate,
late requests (posted 50 us or more after due), and latency percentiles
(50, 90, 99, 99.9) and maximum, the 99th percentile with its spread
(min..max of the runs). One rule for all: the medians of the runs; nothing
is compared with a second program here, so there is no ratio and no
verdict, only the curve and where it bends.

06-mr-pool/load runs this where RDMA works (the lab's VM on a machine
without it); see there for the command line.
"""

import argparse
import datetime
import json
import os
import signal
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Run, gnuplot, stale_binaries  # noqa: E402  one way to run a program, one to plot

START_TIMEOUT = 30  # s: the server's listening line
FIGURES = [("achieved_rps", "achieved"), ("late", "late"), ("t_typical_us", "p50"),
           ("t_p90_us", "p90"), ("t_p99_us", "p99"), ("t_p999_us", "p99.9"), ("t_max_us", "max")]


def say(text):
    print(f"load: {text}", flush=True)


def client(args, port, extra, tag):
    """One client run; its JSON's first result, or None (raw/TAG.client.log says why)."""
    path = f"{args.out}/raw/{tag}.json"
    argv = [f"{args.bin}/06-mr-pool-client", "-p", str(port), "-s", str(args.size),
            "-q", str(args.qps), "-t", str(args.depth), "-D", str(args.duration),
            "--json", path] + extra + [args.addr]
    run = Run(argv, f"{args.out}/raw/{tag}.client.log")
    status, _, _ = run.finish(args.duration + 120)
    if status != 0:
        say(f"  {tag}: the client exited with {status} (see raw/{tag}.client.log)")
        return None
    with open(path) as f:
        return json.load(f)["results"][0]


def sweep_op(args, op, port):
    """The capacity, then every rate's runs, against one server."""
    server = Run([f"{args.bin}/06-mr-pool-server", "-B", args.addr, "-p", str(port)],
                 f"{args.out}/raw/{op}.server.log")
    if not server.read_until(r"^server: listening", START_TIMEOUT):
        server.stop(signal.SIGKILL)
        server.finish(5)
        say(f"{op}: the server did not get ready (see raw/{op}.server.log)")
        return None
    points, capacity = [], None
    try:
        bw = client(args, port, ["-o", op, "-m", "bw"], f"{op}-capacity")
        if bw:
            capacity = bw["msg_rate_mpps"] * 1e6
            say(f"{op}: capacity {capacity:.0f} requests/s (bandwidth run, depth {args.depth})")
        if args.rates:
            rates = [int(r) for r in args.rates.split(",")]
        elif capacity:
            rates = [max(1, round(float(f) * capacity)) for f in args.fractions.split(",")]
        else:
            return None
        for rate in rates:
            runs = []
            for k in range(args.repeats):
                say(f"{op}: {rate} requests/s, run {k + 1} of {args.repeats}")
                r = client(args, port, ["-o", op, "-m", "load", "--rate", str(rate),
                                        "--schedule", args.schedule], f"{op}-{rate}-{k + 1}")
                if r:
                    runs.append(r)
            points.append({"op": op, "offered_rps": rate, "runs": runs,
                           "capacity_rps": capacity})
    finally:
        server.stop(signal.SIGTERM)
        server.finish(15)
    return points


def summarise(point):
    runs = point["runs"]
    for key, _ in FIGURES:
        vals = [r[key] for r in runs]
        point[key] = ({"median": statistics.median(vals), "min": min(vals), "max": max(vals)}
                      if vals else None)
    return point


def fmt(fig, digits=1):
    return "-" if fig is None else f"{fig['median']:.{digits}f}"


def format_table(points, meta):
    out = [f"# 06-mr-pool's client -m load, {meta['date']}, {meta['device']}, kernel "
           f"{meta['kernel']}\n",
           f"# {meta['size']} B, {meta['qps']} QP, at most {meta['depth']} in flight, "
           f"{meta['duration']} s a run, {meta['schedule']} schedule, {meta['repeats']} runs a "
           "rate\n",
           "# a request is timed from when it was due; late: posted 50 us or more after due\n",
           "# figures: medians of the runs (p99 with min..max); of cap: offered / capacity,\n",
           "# a bandwidth run's messages/s at the same size, QPs and depth\n",
           f"{'op':<6} {'offered':>8} {'of cap':>6} {'achieved':>9} {'late':>7} {'p50 us':>8} "
           f"{'p90 us':>8} {'p99 us':>8} {'p99 min..max':>17} {'p99.9 us':>9} {'max us':>9}\n"]
    for p in points:
        cap = p["capacity_rps"]
        share = f"{p['offered_rps'] / cap:.2f}" if cap else "-"
        p99 = p["t_p99_us"]
        p99_spread = f"{p99['min']:.1f}..{p99['max']:.1f}" if p99 else "-"
        out.append(f"{p['op']:<6} {p['offered_rps']:>8} {share:>6} {fmt(p['achieved_rps'], 0):>9} "
                   f"{fmt(p['late'], 0):>7} {fmt(p['t_typical_us']):>8} {fmt(p['t_p90_us']):>8} "
                   f"{fmt(p99):>8} "
                   f"{p99_spread:>17} "
                   f"{fmt(p['t_p999_us']):>9} {fmt(p['t_max_us']):>9}\n")
    return "".join(out)


def plot(out, points, ops):
    """load.png: per op, the percentiles' medians against the offered rate."""
    with open(f"{out}/load.dat", "w") as f:
        for op in ops:
            f.write(f"# {op}: offered p50 p90 p99 p99.9 achieved\n")
            for p in (p for p in points if p["op"] == op and p["t_p99_us"]):
                f.write(f"{p['offered_rps']} " +
                        " ".join(str(p[k]["median"]) for k in
                                 ("t_typical_us", "t_p90_us", "t_p99_us", "t_p999_us",
                                  "achieved_rps")) + "\n")
            f.write("\n\n")
    lines = ["set multiplot layout 1," + str(len(ops)) +
             " title 'Latency under an offered load, timed from when each request was due'",
             "set logscale y", "set grid", "set key top left",
             "set xlabel 'offered [requests/s]'", "set ylabel 'latency [us]'",
             "set format x '%.0s%c'", "set xtics rotate by -45"]
    for i, op in enumerate(ops):
        lines.append(f"set title '{op}'")
        lines.append(", ".join(
            (("plot " if k == 0 else "") +
             f"'load.dat' index {i} using 1:{k + 2} with linespoints lw 2 title '{name}'")
            for k, name in enumerate(("p50", "p90", "p99", "p99.9"))))
    lines.append("unset multiplot")
    gnuplot(out, "load.png", lines)


def main():
    p = argparse.ArgumentParser(prog="06-mr-pool/load", description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--out", required=True)
    p.add_argument("--addr", default=os.environ.get("RDMA_LAB_ADDR"))
    p.add_argument("--ops", default="write,read,send")
    p.add_argument("--size", type=int, default=8)
    p.add_argument("--qps", type=int, default=1)
    p.add_argument("--depth", type=int, default=16)
    p.add_argument("--duration", type=int, default=3)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--fractions", default="0.1,0.25,0.5,0.7,0.8,0.9,1.0,1.1,1.3")
    p.add_argument("--rates", default="", help="requests/s, instead of --fractions")
    p.add_argument("--schedule", choices=("fixed", "poisson"), default="fixed")
    p.add_argument("--port", type=int, default=21300)
    args = p.parse_args()
    if not args.addr:
        print("load: error: no address: give --addr or set RDMA_LAB_ADDR", file=sys.stderr)
        return 2
    stale = stale_binaries(args.bin, ["06-mr-pool-server", "06-mr-pool-client"], ["06-mr-pool"])
    if stale:
        print(f"load: warning: {stale}", file=sys.stderr, flush=True)
    if args.repeats < 1 or args.duration < 1:
        print("load: error: --repeats and --duration want 1 or more", file=sys.stderr)
        return 2
    os.makedirs(f"{args.out}/raw", exist_ok=True)
    devices = sorted(os.listdir("/sys/class/infiniband")) or ["?"]
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "device": devices[0], "kernel": os.uname().release, "size": args.size,
            "qps": args.qps, "depth": args.depth, "duration": args.duration,
            "schedule": args.schedule, "repeats": args.repeats}
    ops = args.ops.split(",")
    points, missing = [], 0
    for i, op in enumerate(ops):
        got = sweep_op(args, op, args.port + i)
        if got is None:
            missing += 1
            continue
        for point in got:
            missing += args.repeats - len(point["runs"])
            points.append(summarise(point))
    text = format_table(points, meta)
    with open(f"{args.out}/load.txt", "w") as f:
        f.write(text)
    with open(f"{args.out}/load.json", "w") as f:
        json.dump({"meta": meta, "points": points}, f, indent=1)
    with open(f"{args.out}/load.csv", "w") as f:
        f.write("op,offered_rps,capacity_rps," +
                ",".join(f"{k}_median,{k}_min,{k}_max" for k, _ in FIGURES) + "\n")
        for pt in points:
            f.write(f"{pt['op']},{pt['offered_rps']},{pt['capacity_rps'] or ''}," +
                    ",".join(",".join(str(pt[k][m]) if pt[k] else "" for m in
                                      ("median", "min", "max")) for k, _ in FIGURES) + "\n")
    plot(args.out, points, [op for op in ops if any(p["op"] == op for p in points)])
    sys.stdout.write(text)
    say(f"wrote {args.out}/load.txt, load.json, load.csv, load.png and raw/")
    if missing:
        say(f"{missing} run(s) gave no figures: raw/ says why")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
