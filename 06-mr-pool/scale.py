#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What a connection costs as connections grow: chapter 05's request/reply
service (05-async-server, 05-async-client) at 1, 4, 16, ... connections,
each connection's receives its own ("own") or taken from one shared receive
queue over a pool ("srq", the server's -S), in one lab run.

Every point (connections, mode) runs as --pairs pairs: own and srq back to
back, who goes first alternating, each run with a fresh server. A run's
client opens N connections at once, each sending messages of --size bytes,
one in flight (a request and its echo): --count each, or more where N is
small, so that the run carries --messages at least and lasts long enough
to be seen. Meanwhile, every SAMPLE_S, the server's resources are read the
way a user reads them: `rdma resource show` (its MRs and their bytes, QPs,
CQs, by its pid) and /proc (its resident memory); the run's figures are
those of the reading with the most QPs, which must be N: all connections
open at once; from that reading on the server is left alone.

For each point: the median of the runs of each figure (registered bytes,
MRs, QPs, CQs, resident memory, setup time per connection (median and max,
from the dials to each ESTABLISHED), messages per second, round trip median
and 99th percentile), and for the two modes the rule of 06-mr-pool/compare:
each pair's ratio srq/own as speed (messages/s; for times own/srq: above 1,
srq is faster), the median of the pairs' ratios, the sign test's 95%
interval, and a verdict from the interval alone (compare.py's docstring).

06-mr-pool/scale runs this where RDMA works (the lab's VM on a machine
without it); see there for the command line.
"""

import argparse
import datetime
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import textwrap
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare import Run, gnuplot, sign_interval, stale_binaries, verdict  # noqa: E402  one rule, one place

START_TIMEOUT = 30  # s: the server's listening line
RUN_TIMEOUT = 600  # s: one client run
SAMPLE_S = 0.1  # s between two readings of the server's resources
WIDTH = 90  # columns of scale.txt's prose (its tables are narrower)
DONE_LINE = re.compile(r"^client: connection \d+: \d+ of \d+ echoed")

# The figures of a run: key, column title, unit, how to read it for speed
# (None: a cost, compared by value only).
FIGURES = [
    ("mr_bytes", "registered", "bytes", None),
    ("mrs", "MRs", "", None),
    ("qps", "QPs", "", None),
    ("cqs", "CQs", "", None),
    ("rss_kib", "resident", "KiB", None),
    ("setup_median_ms", "setup median", "ms", "time"),
    ("setup_max_ms", "setup max", "ms", "time"),
    ("msgs_per_s", "messages/s", "", "rate"),
    ("rtt_median_us", "rtt median", "us", "time"),
    ("rtt_p99_us", "rtt p99", "us", "time"),
    ("cpu_busy_pct", "CPUs busy", "%", None),
    ("softirq_pct", "softirq", "%", None),
    ("server_cpu_pct", "server", "%", None),
    ("client_cpu_pct", "client", "%", None),
]
# The columns of the first table (what a connection costs); the rest go in
# the second (speed, and where the CPUs' time went).
COST_FIGURES = 7


def say(text):
    print(f"scale: {text}", flush=True)


def rdma_json(what, pid):
    """`rdma -j -d resource show WHAT`, the entries of process pid."""
    r = subprocess.run(["rdma", "-j", "-d", "resource", "show", what], capture_output=True,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"rdma resource show {what}: {r.stderr.strip()}")
    return [e for e in json.loads(r.stdout or "[]") if e.get("pid") == pid]


def snapshot(pid, conns):
    """The server's resources now, as a user reads them; only {"qps": N}
    while fewer than conns QPs are there (one call of `rdma`).

    Each `rdma resource show` takes about 0.22 s in the lab's emulated VM,
    idle or not, so a reading spans most of a second: as long as a short
    run. It is therefore taken between two counts of the QPs, and kept
    only when both find every connection's. A connection of the client
    opens once and closes once, and has its CQ and regions while it has its
    QP (they are made before it and destroyed after it): one there at both
    counts was there, whole, at every moment between them."""
    qps = len(rdma_json("qp", pid))
    if qps < conns:
        return {"qps": qps}
    mrs = rdma_json("mr", pid)
    lengths = {}
    for m in mrs:
        lengths[m["mrlen"]] = lengths.get(m["mrlen"], 0) + 1
    rss = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    cqs = len(rdma_json("cq", pid))
    after = len(rdma_json("qp", pid))
    if after < conns:
        return {"qps": after}  # one ended meanwhile: this reading is torn
    return {"mr_bytes": sum(m["mrlen"] for m in mrs), "mrs": len(mrs),
            "mr_lengths": {str(k): v for k, v in sorted(lengths.items())},
            "cqs": cqs, "qps": after, "rss_kib": rss}


def cpu_now(pids):
    """The machine's CPU time (/proc/stat, all CPUs: total and softirq) and
    each process's (utime + stime), in clock ticks."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    out = {"total": sum(v[:8]), "idle": v[3] + v[4], "softirq": v[6]}
    for name, pid in pids.items():
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[name] = int(fields[11]) + int(fields[12])
    me = os.times()  # this script's own share, kept in the JSON
    out["harness"] = round((me.user + me.system) * os.sysconf("SC_CLK_TCK"))
    return out


def cpu_shares(a, b):
    """Where the CPUs' time went between two cpu_now() readings, in percent
    of one CPU (2 CPUs fully busy: 200)."""
    total = b["total"] - a["total"]
    if total <= 0:
        return {}
    ncpu = os.cpu_count() or 1
    pct = lambda t: round(100.0 * ncpu * t / total, 1)  # noqa: E731
    return {"cpu_busy_pct": pct(total - (b["idle"] - a["idle"])),
            "softirq_pct": pct(b["softirq"] - a["softirq"]),
            "server_cpu_pct": pct(b["server"] - a["server"]),
            "client_cpu_pct": pct(b["client"] - a["client"]),
            "harness_cpu_pct": pct(b["harness"] - a["harness"])}


def parse_client(lines):
    """The figures the client printed; None where it printed none."""
    text = "".join(lines)
    out = {}
    m = re.search(r"^client: \d+ echoes of \d+ bytes? intact in [0-9.]+ s: (\d+) messages/s$", text,
                  re.M)
    out["msgs_per_s"] = float(m.group(1)) if m else None
    m = re.search(r"^client: rtt us: count \d+ min [0-9.]+ median ([0-9.]+) p99 ([0-9.]+) ", text,
                  re.M)
    out["rtt_median_us"], out["rtt_p99_us"] = (float(m.group(1)), float(m.group(2))) if m else (None, None)
    m = re.search(r"^client: setup ms: count (\d+) median ([0-9.]+) p99 [0-9.]+ max ([0-9.]+)$",
                  text, re.M)
    out["setup_median_ms"], out["setup_max_ms"] = (float(m.group(2)), float(m.group(3))) if m else (None, None)
    m = re.search(r"^client: done: \d+ connections?, (\d+) failed$", text, re.M)
    out["failed"] = int(m.group(1)) if m else None
    return out


def messages_each(args, conns):
    """--count, or more, so that the run carries --messages in all."""
    return max(args.count, -(-args.messages // conns))


def pump_both(server, client, timeout):
    """Wait up to timeout for the client's output, taking the server's as
    well. The server writes a line a connection: read only at its end, its
    pipe (64 KiB) fills at about 700 connections, the server then blocks in
    write(), and its clients starve (idle deadlines, disconnects unanswered)."""
    server.pump(0)
    return client.pump(timeout)


def read_client_until(server, client, pattern, timeout):
    """Run.read_until on the client, the server's pipe kept drained."""
    end, seen = time.monotonic() + timeout, 0
    while True:
        if any(re.search(pattern, line) for line in client.lines[seen:]):
            return True
        seen = len(client.lines)
        left = end - time.monotonic()
        if left <= 0 or not pump_both(server, client, min(SAMPLE_S, left)):
            return False


def one_run(args, conns, mode, port, rawdir, tag):
    """One server and one client; the run's figures, or an "error"."""
    count = messages_each(args, conns)
    server_argv = [f"{args.bin}/05-async-server", "-a", args.addr, "-p", str(port)]
    if mode == "srq":
        server_argv += ["-S", str(args.srq_recvs)]
    client_argv = [f"{args.bin}/05-async-client", "-a", args.addr, "-p", str(port), "-q",
                   str(conns), "-n", str(count), "-w", "1", "-s", str(args.size)]
    run = {"connections": conns, "mode": mode, "count": count}
    server = Run(server_argv, f"{rawdir}/{tag}-server.txt")
    try:
        if not server.read_until(r"^server: listening on", START_TIMEOUT):
            run["error"] = "the server did not start"
            return run
        client = Run(client_argv, f"{rawdir}/{tag}-client.txt")
        best, readings, end = None, 0, time.monotonic() + RUN_TIMEOUT
        log = []
        # Read the server once every connection is up (the client says so:
        # none is being set up any more), while the client runs, until a
        # reading finds every QP before and after the rest (snapshot()); the
        # run is left alone after that. Each reading's moment and QPs are
        # kept in the JSON (since the client's "established" line).
        if not read_client_until(server, client, rf"^client: {conns} connections? established in",
                                 RUN_TIMEOUT):
            end = 0  # never all up: no reading, the run says so below
        up = time.monotonic()
        pids = {"server": server.proc.pid, "client": client.proc.pid}
        cpu_from = cpu_now(pids) if end else None
        cpu_to = None
        # The CPUs' time is taken over the messages: from every connection
        # up to the first one done (its line; all end about together, one
        # in flight each), not the teardown.
        while not client.eof and time.monotonic() < end:
            pump_both(server, client, SAMPLE_S)
            if cpu_from and not cpu_to and any(DONE_LINE.match(x) for x in client.lines):
                cpu_to = cpu_now(pids)
            if best is not None and best["qps"] == conns:
                continue
            t = time.monotonic()
            try:
                now = snapshot(server.proc.pid, conns)
            except (OSError, RuntimeError, ValueError) as e:
                run["error"] = f"no reading of the server: {e}"
                break
            readings += 1
            log.append([round(t - up, 3), round(time.monotonic() - up, 3), now["qps"]])
            if best is None or now["qps"] > best["qps"]:
                best = now
        status, _, _ = client.finish(max(1, end - time.monotonic()))
        if cpu_from and cpu_to:
            run.update(cpu_shares(cpu_from, cpu_to))
        run.update(best or {})
        run["readings"] = readings
        run["reading_log"] = log  # [from s, to s, QPs] since "established"
        run.update(parse_client(client.lines))
        if status != 0 and "error" not in run:
            run["error"] = f"the client exited {status}"
        elif best is None or best["qps"] != conns:
            run.setdefault("error", f"never all {conns} connections open at one reading "
                                    f"({best['qps'] if best else 0} at most of {readings})")
    finally:
        server.stop(signal.SIGTERM)
        server.finish(60)
    text = "".join(server.lines)
    m = re.search(r"^server: shared receive queue: (\d+) receives, (\d+) taken, (\d+) posted at "
                  r"the fewest, (\d+) low-water events", text, re.M)
    if m:
        run["srq"] = {"receives": int(m.group(1)), "taken": int(m.group(2)),
                      "fewest_posted": int(m.group(3)), "low_water_events": int(m.group(4))}
    return run


def summarise(runs, key):
    values = [r[key] for r in runs if r.get(key) is not None and "error" not in r]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def compare_modes(pairs, key, kind):
    """The rule, on one figure: each pair's ratio as speed of srq over own."""
    ratios = []
    for own, srq in pairs:
        a, b = own.get(key), srq.get(key)
        if a and b and "error" not in own and "error" not in srq:
            ratios.append(b / a if kind == "rate" else a / b)
    if not ratios:
        return None
    iv = sign_interval(ratios)
    return {"ratio": statistics.median(ratios), "pairs": len(ratios),
            "interval": {"low": iv[0], "high": iv[1], "confidence": iv[2]} if iv else None,
            "verdict": verdict(iv).replace("faster", "srq faster").replace("slower", "srq slower")}


def main():
    p = argparse.ArgumentParser(description="what a connection costs as connections grow")
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--out", required=True)
    p.add_argument("--addr", default=os.environ.get("RDMA_LAB_ADDR"))
    p.add_argument("--points", default="1,4,16,64,256,1024")
    p.add_argument("--pairs", type=int, default=6)
    p.add_argument("--count", type=int, default=200, help="messages per connection, at least")
    p.add_argument("--messages", type=int, default=10000, help="messages per run, at least")
    p.add_argument("--size", type=int, default=64)
    p.add_argument("--srq-recvs", type=int, default=4608,
                   help="the shared queue's receives (the server's -S)")
    p.add_argument("--port", type=int, default=21400)
    args = p.parse_args()
    if not args.addr:
        p.error("--addr: the address of this machine's RDMA interface")
    if not re.fullmatch(r"[1-9]\d*(,[1-9]\d*)*", args.points):
        p.error(f"--points {args.points}: not a list of connection counts (say 1,4,16)")
    for name in ("pairs", "count", "messages", "size", "srq_recvs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} wants 1 or more")
    stale = stale_binaries(args.bin, ["05-async-server", "05-async-client"], ["05-async"])
    if stale:
        print(f"scale: warning: {stale}", file=sys.stderr, flush=True)
    points = [int(x) for x in args.points.split(",")]
    rawdir = f"{args.out}/raw"
    os.makedirs(rawdir, exist_ok=True)
    started = time.monotonic()
    runs, table = [], []
    port = args.port
    for conns in points:
        pairs = []
        for k in range(args.pairs):
            order = ("own", "srq") if k % 2 == 0 else ("srq", "own")
            got = {}
            for mode in order:
                say(f"{conns} connections, {mode}, pair {k + 1} of {args.pairs} "
                    f"({time.monotonic() - started:.0f} s so far)")
                r = one_run(args, conns, mode, port, rawdir, f"{conns}-{mode}-{k + 1}")
                port += 1  # a fresh port: no old connection's packets
                r["pair"] = k + 1
                if "error" in r:
                    say(f"  {r['error']} (see {rawdir})")
                runs.append(r)
                got[mode] = r
            pairs.append((got["own"], got["srq"]))
        for mode in ("own", "srq"):
            mine = [r for r in runs if r["connections"] == conns and r["mode"] == mode]
            table.append({"connections": conns, "mode": mode,
                          "figures": {k: summarise(mine, k) for k, *_ in FIGURES},
                          "errors": sum("error" in r for r in mine)})
        table.append({"connections": conns, "mode": "srq/own",
                      "rule": {k: compare_modes(pairs, k, kind) for k, _, _, kind in FIGURES
                               if kind}})
    meta = {"date": datetime.datetime.now().isoformat(timespec="seconds"),
            "kernel": os.uname().release, "points": points, "pairs": args.pairs,
            "count": args.count, "messages": args.messages, "size": args.size,
            "srq_recvs": args.srq_recvs,
            "seconds": round(time.monotonic() - started)}
    with open(f"{args.out}/scale.json", "w") as f:
        json.dump({"meta": meta, "table": table, "runs": runs}, f, indent=1)
    write_csv(f"{args.out}/scale.csv", table)
    text = format_table(table, meta)
    with open(f"{args.out}/scale.txt", "w") as f:
        f.write(text)
    print(text, end="")
    plot(args.out, table)
    return 1 if any("error" in r for r in runs) else 0


def fmt(s):
    if s is None:
        return "-"
    v = s["median"]
    return f"{v:.0f}" if abs(v) >= 100 or v == int(v) else f"{v:.1f}"


# The verdicts, one character each in the table (its last note says which).
MARKS = {"srq faster": "+", "srq slower": "-", "not told apart": "=", "too few pairs": "?"}


def format_table(table, meta):
    lines = textwrap.wrap(
        f"What a connection costs: {meta['points']} connections, each sending messages of "
        f"{meta['size']} bytes, one in flight ({meta['count']} each at least, "
        f"{meta['messages']} a run at least); srq: one shared receive queue of "
        f"{meta['srq_recvs']} receives. Medians of {meta['pairs']} runs.", WIDTH)
    for figures, note in (
            (FIGURES[:COST_FIGURES],
             "registered: bytes (rdma resource show mr); resident: KiB (VmRSS); setup: ms from "
             "the dial to ESTABLISHED; srq/own: the median of the pairs' ratios as speed "
             "(above 1: srq faster) and the verdict of its 95% interval: + srq faster, "
             "- srq slower, = not told apart, ? too few pairs"),
            (FIGURES[COST_FIGURES:],
             "rtt: us; CPUs busy, softirq (rxe's work), server, client: percent of one CPU "
             "(2 CPUs: 200) while the messages flow; srq/own as above")):
        head = ["conns", "mode"] + [t for _, t, _, _ in figures]
        rows = [head]
        for e in table:
            if e["mode"] == "srq/own":
                cells = [str(e["connections"]), "srq/own"]
                for k, _, _, kind in figures:
                    r = e["rule"].get(k) if kind else None
                    cells.append(f"{r['ratio']:.2f} {MARKS[r['verdict']]}" if r else "")
            else:
                cells = [str(e["connections"]), e["mode"]] + [fmt(e["figures"][k])
                                                             for k, *_ in figures]
            rows.append(cells)
        widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
        lines.append("")
        for r in rows:
            lines.append("  ".join(c.rjust(w) for c, w in zip(r, widths)).rstrip())
        lines.append("")
        lines.extend(textwrap.wrap(note, WIDTH))
    return "\n".join(lines) + "\n"


def write_csv(path, table):
    with open(path, "w") as f:
        f.write("connections,mode," + ",".join(f"{k}_median,{k}_min,{k}_max" for k, *_ in FIGURES)
                + "\n")
        for e in table:
            if e["mode"] == "srq/own":
                continue
            cells = []
            for k, *_ in FIGURES:
                s = e["figures"][k]
                cells += [str(s[x]) if s else "" for x in ("median", "min", "max")]
            f.write(f"{e['connections']},{e['mode']}," + ",".join(cells) + "\n")


# The plots: file, title, y label, and the figures drawn (key, label, and
# a factor to the plotted unit). Both modes of each: own solid, srq dashed.
PLOTS = [
    ("memory", "Server memory", "MiB", [("mr_bytes", "registered", 1 / 1048576),
                                        ("rss_kib", "resident", 1 / 1024)]),
    ("objects", "Server objects (rdma resource show)", "count",
     [("mrs", "MRs", 1), ("qps", "QPs", 1), ("cqs", "CQs", 1)]),
    ("setup", "Connection setup, dial to ESTABLISHED", "ms",
     [("setup_median_ms", "median", 1), ("setup_max_ms", "max", 1)]),
    ("rate", "Messages per second, all connections together", "messages/s",
     [("msgs_per_s", "messages/s", 1)]),
    ("rtt", "Round trip, one message in flight per connection", "us",
     [("rtt_median_us", "median", 1), ("rtt_p99_us", "99%", 1)]),
]


def plot(out, table):
    """A PNG per group of figures against connections (log scales): each
    figure's median in both modes, with its min..max."""
    keys = [k for k, *_ in FIGURES]
    with open(f"{out}/scale.dat", "w") as f:
        for mode in ("own", "srq"):
            f.write(f"# {mode}: connections, then median min max of each figure\n")
            for e in table:
                if e["mode"] != mode:
                    continue
                vals = []
                for k in keys:
                    s = e["figures"][k]
                    vals += [str(s[x]) if s else "NaN" for x in ("median", "min", "max")]
                f.write(f"{e['connections']} " + " ".join(vals) + "\n")
            f.write("\n\n")
    for name, title, unit, figures in PLOTS:
        series = []
        for n, (key, label, factor) in enumerate(figures):
            col = 2 + 3 * keys.index(key)
            for m, mode in enumerate(("own", "srq")):
                series.append(
                    f"'scale.dat' index {m} using 1:(${col}*{factor}):(${col + 1}*{factor}):"
                    f"(${col + 2}*{factor}) with yerrorlines lw 2 dt {1 + 2 * m} "
                    f"lc rgb '{('#1f4e9c', '#b2242b', '#2e7d32')[n]}' title '{label}, {mode}'")
        gnuplot(out, f"{name}.png", [
            f"set title \"{title}\\nreceives of their own (solid), one shared receive queue "
            "(dashed); median, min..max\"",
            "set xlabel 'connections'", f"set ylabel '{unit}'",
            "set logscale x 2", "set logscale y", "set key left top", "set grid",
            "plot " + ", ".join(series)])

if __name__ == "__main__":
    sys.exit(main())
