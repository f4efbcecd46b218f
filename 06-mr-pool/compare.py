#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run chapter 06's benchmark and perftest side by side, in pairs, on the
RDMA device of this machine, and write what they measured: a table of
medians, spreads, ratios with their 95% intervals and a verdict per point,
the same as JSON and CSV, and PNG plots.

The rule for reading, the same for wins and losses: each point runs as N
pairs (ours and perftest, back to back, the order alternating from one pair
to the next). Each pair gives a speed ratio, ours over perftest, written so
that above 1 means ours is faster (bandwidth: ours / perftest; latency:
perftest / ours). The point's ratio is the median of its pairs' ratios, and
its interval the distribution-free confidence interval of a median from the
sign test: the k-th smallest and k-th largest ratio, k the largest with
P(Binomial(N, 1/2) < k) <= 2.5%. The verdict comes from the interval alone:
"faster" when it lies above 1, "slower" below 1, "not told apart" when it
holds 1. It needs N >= 6 pairs (with 6 to 8, the interval is min..max).

With --against pool, the second program is ours too, its server run with
-g pool (every client gets the pool's rkey) while ours keeps its windows:
the ratio is then what least privilege costs, windows over pool rkey, by
the same rule. With --against self, both programs are ours, run alike:
every difference is the lab's noise, and a verdict other than "not told
apart" is the rule's false alarm (one in twenty points or fewer, were the
pairs independent).

06-mr-pool/compare runs this where RDMA works (the lab's VM on a machine
without it); see there for the command line. This file only needs Python 3's
standard library, perftest's programs, our two programs and gnuplot.
"""

import argparse
import datetime
import json
import math
import os
import re
import select
import signal
import statistics
import subprocess
import sys
import time

# perftest's programs, by operation and mode.
PERFTEST = {
    ("write", "bw"): "ib_write_bw",
    ("send", "bw"): "ib_send_bw",
    ("read", "bw"): "ib_read_bw",
    ("write", "lat"): "ib_write_lat",
    ("send", "lat"): "ib_send_lat",
    ("read", "lat"): "ib_read_lat",
    ("fadd", "bw"): "ib_atomic_bw",
    ("cas", "bw"): "ib_atomic_bw",
    ("fadd", "lat"): "ib_atomic_lat",
    ("cas", "lat"): "ib_atomic_lat",
}
# perftest's atomic programs take the operation as -A, and 8 bytes only.
ATOMIC = {"fadd": "FETCH_AND_ADD", "cas": "CMP_AND_SWAP"}

# Iterations per run, by mode and size: enough for a median on Soft-RoCE,
# few enough that a repetition takes seconds in the lab's emulated VM. The
# same count goes to both programs. Latency takes 10,000 samples: a
# percentile p is quoted only when n (1 - p) >= 10 samples lie beyond it
# (QUOTABLE_TAIL), so 99.9% needs 10,000.
def iterations(mode, size, scale):
    if mode == "lat":
        n = 10000
    elif size <= 4096:
        n = 2000
    elif size <= 65536:
        n = 500
    else:
        n = 50
    return max(10, int(n * scale))


START_TIMEOUT = 30  # s: a server prints its ready line within this
RUN_TIMEOUT = 300  # s: one client run, at most


def say(text):
    print(f"compare: {text}", flush=True)


def fail(text):
    print(f"compare: error: {text}", file=sys.stderr, flush=True)
    sys.exit(1)


def stale_binaries(bin_dir, programs, chapters):
    """A warning when a program in bin_dir is missing, or when a source of
    the chapters' folders or common/ is newer than every program built
    from them there (the last build came before the last edit), else None:
    a run of an old build measures old code, and nothing else would say so."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    newest, newest_path = 0.0, None
    for folder in list(chapters) + ["common"]:
        for name in os.listdir(os.path.join(root, folder)):
            path = os.path.join(root, folder, name)
            if name.endswith((".c", ".h")) and os.path.getmtime(path) > newest:
                newest, newest_path = os.path.getmtime(path), path
    for program in programs:
        if not os.path.exists(os.path.join(bin_dir, program)):
            return (f"{os.path.join(bin_dir, program)} does not exist: build it first "
                    f"(cmake --build build), or give --bin")
    built = [os.path.join(bin_dir, name) for name in os.listdir(bin_dir)
             if name.startswith(tuple(f"{c}-" for c in chapters))]
    last = max(built, key=os.path.getmtime)
    if newest_path and os.path.getmtime(last) < newest:
        return (f"{os.path.relpath(newest_path, root)} is newer than {last}, the last program "
                f"built from it: this run measures an old build (rebuild it, or give --bin)")
    return None


def rdma_device():
    """The first RDMA device and the GID index of its RoCE v2 IPv4 address."""
    base = "/sys/class/infiniband"
    try:
        devices = sorted(os.listdir(base))
    except FileNotFoundError:
        devices = []
    if not devices:
        fail("no RDMA device here (/sys/class/infiniband is empty): run it through 06-mr-pool/compare")
    dev = devices[0]
    gids = f"{base}/{dev}/ports/1/gids"
    types = f"{base}/{dev}/ports/1/gid_attrs/types"
    for index in sorted(os.listdir(gids), key=int):
        try:
            with open(f"{gids}/{index}") as f:
                gid = f.read().strip()
            with open(f"{types}/{index}") as f:
                kind = f.read().strip()
        except OSError:
            continue  # an empty slot of the table
        if gid.startswith("0000:0000:0000:0000:0000:ffff:") and kind == "RoCE v2":
            return dev, int(index)
    fail(f"{dev} has no RoCE v2 GID for an IPv4 address")


class Run:
    """One program's run: its output, exit status and CPU time. Output is
    read from the pipe's fd with os.read(), so select() sees all of it."""

    def __init__(self, argv, log):
        self.argv = argv
        self.log = log
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.fd = self.proc.stdout.fileno()
        self.partial = b""
        self.lines = []
        self.eof = False

    def pump(self, timeout):
        """Take what the program wrote within timeout s; False at its end."""
        if self.eof:
            return False
        ready, _, _ = select.select([self.fd], [], [], max(0.0, timeout))
        if not ready:
            return True
        data = os.read(self.fd, 65536)
        if not data:
            self.eof = True
            if self.partial:
                self.lines.append(self.partial.decode(errors="replace") + "\n")
            return False
        *whole, self.partial = (self.partial + data).split(b"\n")
        self.lines.extend(w.decode(errors="replace") + "\n" for w in whole)
        return True

    def read_until(self, pattern, timeout):
        """Read until a line matches pattern (True), the program ends or the
        time runs out (False)."""
        end = time.monotonic() + timeout
        seen = 0
        while True:
            for line in self.lines[seen:]:
                if re.search(pattern, line):
                    return True
            seen = len(self.lines)
            if time.monotonic() >= end or not self.pump(end - time.monotonic()):
                return False

    def finish(self, timeout):
        """Wait for the end, with CPU time from wait4(). Returns (status, user s, sys s)."""
        end = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > end:
                self.stop(signal.SIGKILL)
                pid, status, usage = os.wait4(self.proc.pid, 0)
                self.lines.append("compare: killed: it ran out of time\n")
                break
            self.pump(0.1)
        drain_end = time.monotonic() + 5  # a child of its may hold the pipe open
        while time.monotonic() < drain_end and self.pump(drain_end - time.monotonic()):
            pass
        self.proc.stdout.close()
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        with open(self.log, "w") as f:
            f.write("$ " + " ".join(self.argv) + "\n")
            f.writelines(self.lines)
            f.write(f"exit status {self.proc.returncode}\n")
        return self.proc.returncode, usage.ru_utime, usage.ru_stime

    def stop(self, sig=signal.SIGTERM):
        try:
            os.killpg(self.proc.pid, sig)
        except ProcessLookupError:
            pass


def parse_perftest(lines, mode):
    """The numbers of perftest's result row (the line after '#bytes')."""
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#bytes") and i + 1 < len(lines):
            v = lines[i + 1].split()
            try:
                # perftest prints "inf" or "nan" for a time it could not
                # measure: no result then (and JSON has no such numbers).
                if not all(math.isfinite(float(x)) for x in v[:9 if mode == "lat" else 5]):
                    return None
                # A bandwidth of 0: perftest had no clock to divide by
                # (see perftest_clock_failed): no result either.
                if mode == "bw" and not (float(v[2]) > 0 and float(v[3]) > 0):
                    return None
                if mode == "bw":
                    return {"bytes": int(v[0]), "iterations": int(v[1]),
                            "bw_peak_mib_s": float(v[2]), "bw_avg_mib_s": float(v[3]),
                            "msg_rate_mpps": float(v[4])}
                return {"bytes": int(v[0]), "iterations": int(v[1]), "t_min_us": float(v[2]),
                        "t_max_us": float(v[3]), "t_typical_us": float(v[4]),
                        "t_avg_us": float(v[5]), "t_stdev_us": float(v[6]),
                        "t_p99_us": float(v[7]), "t_p999_us": float(v[8])}
            except (IndexError, ValueError):
                return None
    return None


def perftest_clock_failed(lines):
    """perftest turns cycles into time by its own measure of the CPU's clock,
    taken at start against gettimeofday(); when that measure is too noisy (a
    busy or emulated CPU) it says so on stderr ("Correlation coefficient r^2:
    0.61 < 0.9") and goes on with a clock of 0 MHz: bandwidth 0, latency inf.
    Returns that line, or None."""
    for line in lines:
        if "Correlation coefficient" in line:
            return line.strip()
    return None


def parse_ours(json_path):
    try:
        with open(json_path) as f:
            doc = json.load(f)
        row = doc["results"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None
    return row if row.get("verified") else None


# one_run()'s answer when perftest could not measure its clock: not a
# measurement of the work, so the run is made again, up to CLOCK_TRIES runs
# in all. Its measure fails about 3 runs in 100 alone in the lab, far more
# beside other tests: twice in a row once in about 30 smoke tests (2026-11-29).
CLOCK_FAILED = "clock failed"
CLOCK_TRIES = 4


def pinned(args, side, argv):
    """argv under taskset when --pin names CPUs: side 0 the server, 1 the client."""
    return ["taskset", "-c", args.pin.split(",")[side]] + argv if args.pin else argv


# --server-pool point: our server's pool buffers are twice the point's
# size, a page at least each half, as perftest registers one buffer of a
# half to receive into and a half to send from; the server's default is 8
# buffers of 8 MiB, 64 MiB registered, and in the lab that costs READ's and
# the atomics' latency a few percent. With room for both halves our
# server's latency answers come from the second, as perftest's do (docs:
# part 3, what is left). --ours-server-args comes after, so its -s wins.
PAGE = 4096


def server_pool(args, size):
    return ["-s", str(2 * max(size, PAGE))] if args.server_pool == "point" else []


def one_run(tool, op, mode, size, n, args, dev, gid, port, rawdir, tag):
    """Start a server, run a client against it, stop the server. Returns the
    client's result dict (with cpu_user_s and cpu_sys_s from wait4) or None."""
    log = f"{rawdir}/{tag}"
    if tool == "perftest" and args.against == "perftest":
        prog = PERFTEST[(op, mode)]
        common = [prog, "-d", dev, "-x", str(gid), "-F", "-p", str(port), "-n", str(n)]
        common += ["-A", ATOMIC[op]] if op in ATOMIC else ["-s", str(size)]
        if mode == "bw":
            common += ["-t", str(args.depth), "-q", str(args.qps)]
        common += args.perftest_args.split()
        # perftest writes through stdio: unbuffered, its ready line shows at once.
        server = Run(pinned(args, 0, ["stdbuf", "-o0"] + common), log + ".server.log")
        ready = r"Waiting for client"
        client_argv = common + [args.addr]
    else:
        # --against pool: the "perftest" slot is ours with the pool's rkey;
        # --against self: ours, run as the other.
        grant = ["-g", "pool"] if tool == "perftest" and args.against == "pool" else []
        server = Run(pinned(args, 0, [f"{args.bin}/06-mr-pool-server", "-B", args.addr, "-p",
                                      str(port)] + server_pool(args, size)
                                     + args.ours_server_args.split() + grant),
                     log + ".server.log")
        ready = r"^server: listening"
        json_path = f"{rawdir}/{tag}.json"
        client_argv = [f"{args.bin}/06-mr-pool-client", "-p", str(port), "-o", op, "-m", mode,
                       "-n", str(n), "--json", json_path]
        client_argv += [] if op in ATOMIC else ["-s", str(size)]
        if args.figures == "perftest":
            # perftest's figures, its timestamps (the cycle counter), and its
            # pings: posted and polled with the verbs alone (a lent QP).
            client_argv += ["--as-perftest", "--cycles"]
            if mode == "lat":
                client_argv.append("--lend")
        client_argv += args.ours_args.split()
        if mode == "bw":
            client_argv += ["-t", str(args.depth), "-q", str(args.qps)]
        client_argv.append(args.addr)
    if not server.read_until(ready, START_TIMEOUT):
        server.stop(signal.SIGKILL)
        server.finish(5)
        say(f"  {tool}: its server did not get ready (see {server.log})")
        return None
    client = Run(pinned(args, 1, client_argv), log + ".client.log")
    status, user, system = client.finish(RUN_TIMEOUT)
    # perftest's server ends with its client; ours serves until told to stop.
    if tool == "ours" or args.against != "perftest":
        server.stop(signal.SIGTERM)
    server.finish(15)
    if status != 0:
        say(f"  {tool}: the client exited with {status} (see {client.log})")
        return None
    row = (parse_perftest(client.lines, mode) if tool == "perftest" and args.against == "perftest"
           else parse_ours(json_path))
    if row is None:
        clock = (perftest_clock_failed(client.lines + server.lines)
                 if tool == "perftest" and args.against == "perftest" else None)
        if clock:
            say(f"  {tool}: no result: it could not measure its CPU clock ({clock}; see {client.log})")
            return CLOCK_FAILED
        say(f"  {tool}: no result in its output (see {client.log})")
        return None
    row["cpu_user_s"] = round(user, 3)
    row["cpu_sys_s"] = round(system, 3)
    return row


# The figure compared, per mode: bandwidth average, typical latency. The
# table shows the others too.
METRIC = {"bw": "bw_avg_mib_s", "lat": "t_typical_us"}
LAT_COLUMNS = ["t_typical_us", "t_p99_us", "t_p999_us"]


# A percentile is quoted when at least this many samples lie beyond it.
QUOTABLE_TAIL = 10
PERCENTILE = {"t_p99_us": 0.99, "t_p999_us": 0.999}


def quotable(key, samples):
    p = PERCENTILE.get(key)
    return p is None or samples * (1 - p) >= QUOTABLE_TAIL - 1e-9


def speed_ratio(mode, ours, perftest):
    """Ours over perftest, as speed: above 1, ours is faster."""
    if not ours or not perftest:
        return None
    key = METRIC[mode]
    a, b = ours.get(key), perftest.get(key)
    if not a or not b:
        return None
    return a / b if mode == "bw" else b / a


def sign_interval(values, level=0.95):
    """The sign test's confidence interval for the median of values:
    (low, high, confidence), or None when len(values) is too small for level."""
    n = len(values)
    xs = sorted(values)
    tail = 0.0  # P(X <= k-1), X ~ Binomial(n, 1/2)
    best = None
    for k in range(1, n // 2 + 1):
        tail += math.comb(n, k - 1) / 2 ** n
        if 2 * tail > 1 - level + 1e-12:
            break
        best = (xs[k - 1], xs[n - k], 1 - 2 * tail)
    return best


def verdict(interval):
    if interval is None:
        return "too few pairs"
    low, high, _ = interval
    if low > 1:
        return "faster"
    if high < 1:
        return "slower"
    return "not told apart"


def summarise(rows, key):
    values = [r[key] for r in rows if key in r]
    if not values:
        return None
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def main():
    p = argparse.ArgumentParser(prog="06-mr-pool/compare", description=__doc__.split("\n\n")[0])
    p.add_argument("--addr", default=os.environ.get("RDMA_LAB_ADDR"))
    p.add_argument("--bin", default="build/bin")
    p.add_argument("--out", help="the directory for the table, JSON, CSV, plots and raw/")
    p.add_argument("--table", metavar="JSON",
                   help="run nothing: print the table of an earlier run from its compare.json")
    p.add_argument("--pairs", type=int, default=9,
                   help="runs of each program per point, in pairs (6 or more for a verdict)")
    p.add_argument("--ops", default="write,send,read,fadd,cas")
    p.add_argument("--modes", default="bw,lat")
    p.add_argument("--bw-sizes", default="4096,65536,1048576")
    p.add_argument("--lat-sizes", default="8,4096")
    p.add_argument("--depth", type=int, default=128)
    p.add_argument("--qps", type=int, default=1)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--port", type=int, default=21100)
    p.add_argument("--tools", default="ours,perftest")
    p.add_argument("--figures", choices=("perftest", "exact"), default="perftest",
                   help="how ours computes t_max, t_stdev, percentiles and BW peak, and (perftest) "
                        "times its runs by the cycle counter (--cycles) and posts and polls "
                        "latency pings on a lent QP (--lend)")
    p.add_argument("--ours-args", default="",
                   help="more arguments for 06-mr-pool-client (say '-l 32' or '-w 128')")
    p.add_argument("--ours-server-args", default="",
                   help="more arguments for 06-mr-pool-server (say '-s 64K')")
    p.add_argument("--server-pool", choices=("point", "default"), default="point",
                   help="point: our server's pool buffers twice the point's size (-s 2*SIZE, a "
                        "page at least a half), as perftest registers a half to receive into and "
                        "a half to send from; default: the server's own (8 buffers of 8 MiB)")
    p.add_argument("--perftest-args", default="",
                   help="more arguments for perftest's programs, both sides (say '--use_old_post_send')")
    p.add_argument("--pin", default="",
                   help="SERVER_CPUS,CLIENT_CPUS: both programs of both tools pinned (taskset -c)")
    p.add_argument("--against", choices=("perftest", "pool", "self"), default="perftest",
                   help="pool: hold ours (a window per client) against ours with -g pool; "
                        "self: against ours, run alike (the rule's false alarms)")
    args = p.parse_args()
    if args.table:
        try:
            with open(args.table) as f:
                saved = json.load(f)
            print(format_table(saved["points"], saved["meta"]), end="")
        except (OSError, ValueError, KeyError, TypeError) as e:
            p.error(f"--table {args.table}: not a compare.json ({e})")
        return 0
    if not args.out:
        p.error("no --out: give the directory for the results")
    if not args.addr:
        fail("no address: give --addr or set RDMA_LAB_ADDR")
    if args.pairs < 1:
        fail("--pairs wants 1 or more")
    if args.pin and not re.fullmatch(r"\d+,\d+", args.pin):
        fail(f"--pin {args.pin}: not SERVER_CPU,CLIENT_CPU (say 0,1)")
    stale = stale_binaries(args.bin, ["06-mr-pool-server", "06-mr-pool-client"], ["06-mr-pool"])
    if stale and "ours" in args.tools.split(","):
        say(f"warning: {stale}")
    dev, gid = rdma_device()
    rawdir = f"{args.out}/raw"
    os.makedirs(rawdir, exist_ok=True)

    points = []
    for mode in args.modes.split(","):
        sizes = args.bw_sizes if mode == "bw" else args.lat_sizes
        for op in args.ops.split(","):
            if (op, mode) not in PERFTEST:
                fail(f"no perftest program for {op} {mode}")
            # An atomic has one size, 8 bytes.
            for size in (["8"] if op in ATOMIC else sizes.split(",")):
                points.append((op, mode, int(size)))
    tools = args.tools.split(",")
    if not tools or any(t not in ("ours", "perftest") for t in tools):
        fail(f"--tools takes ours, perftest or both, not '{args.tools}'")
    total = len(points) * args.pairs * len(tools)
    say(f"{len(points)} points x {args.pairs} pairs x {len(tools)} programs = {total} runs on {dev} "
        f"(GID index {gid}), {args.addr}; outputs in {args.out}")

    results = {}
    done = 0
    started = time.monotonic()
    port = args.port
    for pi, (op, mode, size) in enumerate(points, 1):
        n = iterations(mode, size, args.scale)
        for pair in range(1, args.pairs + 1):
            # A pair: both programs back to back, who goes first alternating,
            # so that a drift in the machine weighs on both alike.
            for tool in (tools if pair % 2 else tools[::-1]):
                elapsed = time.monotonic() - started
                left = "" if done == 0 else f", about {elapsed / done * (total - done):.0f} s left"
                say(f"point {pi}/{len(points)}: {op} {mode} {size} B, pair {pair}/{args.pairs}, "
                    f"{tool} (run {done + 1}/{total}{left})")
                port += 1
                tag = f"{op}-{mode}-{size}-{pair}-{tool}"
                row = one_run(tool, op, mode, size, n, args, dev, gid, port, rawdir, tag)
                for again in range(1, CLOCK_TRIES):
                    if row is not CLOCK_FAILED:
                        break
                    say(f"  perftest: the same run again ({again + 1} of {CLOCK_TRIES} at most: "
                        "its clock, not the work, failed)")
                    port += 1
                    row = one_run(tool, op, mode, size, n, args, dev, gid, port, rawdir,
                                  tag + "-again" + (str(again) if again > 1 else ""))
                row = None if row is CLOCK_FAILED else row
                results.setdefault((op, mode, size, tool), []).append(row)
                done += 1

    # Medians, spreads, and the pairs' ratios read by the one rule.
    table = []
    for op, mode, size in points:
        key = METRIC[mode]
        n = iterations(mode, size, args.scale)
        entry = {"op": op, "mode": mode, "bytes": size, "metric": key, "iterations": n}
        for tool in ("ours", "perftest"):
            rows = [r for r in results.get((op, mode, size, tool), []) if r]
            entry[tool] = {k: summarise(rows, k) for k in
                           ([key, "cpu_user_s", "cpu_sys_s"] +
                            (LAT_COLUMNS[1:] if mode == "lat" else ["bw_peak_mib_s", "msg_rate_mpps"]))}
            for k in LAT_COLUMNS[1:] if mode == "lat" else []:
                if entry[tool][k] is not None:
                    entry[tool][k]["quotable"] = quotable(k, n)
            entry[tool]["runs_ok"] = len(rows)
            entry[tool]["runs"] = args.pairs if tool in tools else 0
        ratios = [speed_ratio(mode, a, b) for a, b in
                  zip(results.get((op, mode, size, "ours"), []),
                      results.get((op, mode, size, "perftest"), []))]
        ratios = [r for r in ratios if r is not None]
        interval = sign_interval(ratios)
        entry["pair_ratios"] = [round(r, 4) for r in ratios]
        entry["ratio"] = statistics.median(ratios) if ratios else None
        entry["interval"] = None if interval is None else {
            "low": interval[0], "high": interval[1], "confidence": round(interval[2], 4)}
        entry["verdict"] = verdict(interval)
        table.append(entry)

    meta = {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "device": dev, "gid_index": gid, "address": args.addr,
            "pairs": args.pairs, "rule": "sign-test interval of the median pair ratio, 95%",
            "figures": args.figures, "ours_args": args.ours_args,
            "ours_server_args": args.ours_server_args,
            "server_pool": args.server_pool, "server_pool_halves": args.server_pool == "point",
            "perftest_args": args.perftest_args,
            "against": args.against, "pin": args.pin,
            "depth": args.depth, "qps": args.qps, "kernel": os.uname().release,
            "host": os.uname().nodename}
    with open(f"{args.out}/compare.json", "w") as f:
        json.dump({"meta": meta, "points": table}, f, indent=2)
        f.write("\n")
    write_csv(f"{args.out}/compare.csv", table)
    text = format_table(table, meta)
    with open(f"{args.out}/compare.txt", "w") as f:
        f.write(text)
    print(text, end="")
    plot(args.out, table)
    failed = sum(1 for e in table for t in ("ours", "perftest") if e[t]["runs_ok"] < e[t]["runs"])
    say(f"done in {time.monotonic() - started:.0f} s: {args.out}/compare.txt, .json, .csv, "
        f"bw.png, lat.png, ratio.png" + (f"; {failed} points had failed runs (see raw/)" if failed else ""))
    return 1 if failed else 0


def figure(v, digits=1):
    """A figure for the table: fewer decimals as it grows, so that a slow run
    (a latency of 4,002 us in a loaded VM) keeps its column's width."""
    return f"{v:.{digits if v < 1000 else 0}f}"


def fmt(s, digits=1):
    return "-" if s is None else figure(s['median'], digits)


def spread(s, digits=1):
    return "-" if s is None else f"{figure(s['min'], digits)}..{figure(s['max'], digits)}"


def ratio_text(v):
    """A ratio in two decimals, fewer from 10 up (a loaded run: 267.96)."""
    return f"{v:.{2 if v < 10 else 1 if v < 100 else 0}f}"


def interval_text(e):
    i = e["interval"]
    return "-" if i is None else f"{ratio_text(i['low'])}..{ratio_text(i['high'])}"


def cpu(side):
    u, s = side["cpu_user_s"], side["cpu_sys_s"]
    if u is None or s is None:
        return "-"
    total = u['median'] + s['median']
    return f"{total:.{2 if total < 10 else 1 if total < 100 else 0}f}"


# The table fits in 100 columns, as a page's results box does (docs.browser).
TABLE_WIDTH = 100


def format_table(table, meta):
    pin = meta.get("pin")
    out = [f"# ours (06-mr-pool) against perftest (pt), {meta['date']}, {meta['device']},\n"
           f"#   kernel {meta['kernel']}, {meta['pairs']} pairs a point, who goes first alternating\n",
           "# bandwidth: BW average [MiB/s]; latency: t_typical [usec]; median of the runs,\n"
           "#   spread min..max; cpu = client CPU user+sys [s], ours/perftest\n",
           "# ratio: ours / perftest as speed (latency: perftest / ours), above 1 = ours faster;\n"
           "#   median of the pairs' ratios, with the sign test's interval (95% or more);\n"
           "# verdict: from the interval alone: faster, slower, or not told apart\n",
           *([f"# pinned (taskset): servers on CPU {pin.split(',')[0]}, clients on CPU "
              f"{pin.split(',')[1]}\n"] if pin else []),
           *[f"# {who}: {meta[key]}\n" for key, who in
             (("ours_args", "more arguments of our client (--ours-args)"),
              ("ours_server_args", "more arguments of our server (--ours-server-args)"),
              ("perftest_args", "more arguments of perftest (--perftest-args)"))
             if meta.get(key)],
           *(["# our server's pool: buffers of twice the point's size, a page at least a\n"
              "#   half (-s): pings land in one half, answers leave from the other, as\n"
              "#   perftest lays out its buffer\n"]
             if meta.get("server_pool") == "point" and meta.get("server_pool_halves") else
             ["# our server's pool: buffers of the point's size, a page at least (-s), as\n"
              "#   perftest registers a buffer of its run's size\n"]
             if meta.get("server_pool") == "point" else []),
           *(["# against pool: the 'pt' columns are ours too, its server with -g pool\n"
              "#   (one rkey for the whole pool); 'ours' has a window per client:\n"
              "#   the ratio is what least privilege costs\n"] if meta.get("against") == "pool"
             else []),
           *(["# against self: the 'pt' columns are ours too, run alike: every verdict\n"
              "#   but 'not told apart' is a false alarm of the rule\n"]
             if meta.get("against") == "self" else []),
           f"{'op':<5} {'mode':<4} {'bytes':>7} {'ours':>6} {'spread':>12} {'pt':>6} "
           f"{'spread':>12} {'ratio':>5} {'interval':>10} {'verdict':<14} {'cpu o/pt':>9}\n"]
    for e in table:
        o, p = e["ours"], e["perftest"]
        key = e["metric"]
        ratio = "-" if e["ratio"] is None else ratio_text(e["ratio"])
        out.append(f"{e['op']:<5} {e['mode']:<4} {e['bytes']:>7} {fmt(o[key]):>6} "
                   f"{spread(o[key]):>12} {fmt(p[key]):>6} {spread(p[key]):>12} {ratio:>5} "
                   f"{interval_text(e):>10} {e['verdict']:<14} {cpu(o) + '/' + cpu(p):>9}\n")
    counts = {}
    for e in table:
        counts[e["verdict"]] = counts.get(e["verdict"], 0) + 1
    out.append("# verdicts: " + ", ".join(f"{v} {counts[v]}" for v in
                                          ("faster", "slower", "not told apart", "too few pairs")
                                          if v in counts) + "\n")
    lat = [e for e in table if e["mode"] == "lat"]
    if lat:
        out.append("# latency tails [usec], median of the runs; '*' = too few samples to quote\n"
                   f"#   (fewer than {QUOTABLE_TAIL} beyond the percentile)\n")
        out.append(f"{'op':<5} {'bytes':>7} {'samples':>8} {'ours 99%':>9} {'pt 99%':>9} "
                   f"{'ours 99.9%':>10} {'pt 99.9%':>9}\n")
        for e in lat:
            cells = []
            for k in LAT_COLUMNS[1:]:
                for tool in ("ours", "perftest"):
                    v = e[tool][k]
                    cells.append("-" if v is None else
                                 f"{v['median']:.1f}" + ("" if v.get("quotable") else "*"))
            out.append(f"{e['op']:<5} {e['bytes']:>7} {e['iterations']:>8} {cells[0]:>9} "
                       f"{cells[1]:>9} {cells[2]:>10} {cells[3]:>9}\n")
    return "".join(out)


CSV_FIELDS = ["op", "mode", "bytes", "metric", "tool", "runs", "runs_ok", "median", "min", "max",
              "ratio", "ratio_low", "ratio_high", "confidence", "verdict", "cpu_user_s_median",
              "cpu_sys_s_median"]


def write_csv(path, table):
    def num(v, digits):
        return "" if v is None else f"{v:.{digits}f}"
    with open(path, "w") as f:
        f.write(",".join(CSV_FIELDS) + "\n")
        for e in table:
            i = e["interval"] or {}
            for tool in ("ours", "perftest"):
                s = e[tool][e["metric"]] or {}
                u, sy = e[tool]["cpu_user_s"] or {}, e[tool]["cpu_sys_s"] or {}
                row = [e["op"], e["mode"], str(e["bytes"]), e["metric"], tool, str(e[tool]["runs"]),
                       str(e[tool]["runs_ok"]), num(s.get("median"), 3), num(s.get("min"), 3),
                       num(s.get("max"), 3), num(e["ratio"], 4), num(i.get("low"), 4),
                       num(i.get("high"), 4), num(i.get("confidence"), 4), e["verdict"],
                       num(u.get("median"), 3), num(sy.get("median"), 3)]
                f.write(",".join(row) + "\n")


def plot(out, table):
    """bw.png: bandwidth against size, per op, ours beside perftest (min..max).
    lat.png: typical, 99% and 99.9% latency per op and size, ours beside perftest.
    ratio.png: every point's ratio with its interval, against the line of 1."""
    # The atomics' 8 bytes a second would flatten the bandwidth plot: they
    # are in the table and in ratio.png.
    bw = [e for e in table if e["mode"] == "bw" and e["op"] not in ATOMIC]
    lat = [e for e in table if e["mode"] == "lat"]
    if bw:
        ops = sorted({e["op"] for e in bw})
        with open(f"{out}/bw.dat", "w") as f:
            for op in ops:
                f.write(f"# {op}: bytes ours_median ours_min ours_max perftest_median perftest_min perftest_max\n")
                for e in sorted((e for e in bw if e["op"] == op), key=lambda e: e["bytes"]):
                    o, p = e["ours"]["bw_avg_mib_s"], e["perftest"]["bw_avg_mib_s"]
                    vals = [o[k] if o else "NaN" for k in ("median", "min", "max")] + \
                           [p[k] if p else "NaN" for k in ("median", "min", "max")]
                    f.write(f"{e['bytes']} " + " ".join(str(v) for v in vals) + "\n")
                f.write("\n\n")
        plots = []
        # Every (op, program) its own place around the size, 5% apart on the
        # x axis, so that no two error bars coincide.
        places = 2 * len(ops)
        for i, op in enumerate(ops):
            ours, theirs = (1 + 0.05 * (2 * i + k - (places - 1) / 2) for k in (0, 1))
            plots.append(f"'bw.dat' index {i} using ($1*{ours:.3f}):2:3:4 with yerrorlines "
                         f"lw 2 lc {i + 1} title '{op}: ours'")
            plots.append(f"'bw.dat' index {i} using ($1*{theirs:.3f}):5:6:7 with yerrorlines "
                         f"lw 2 dt 2 lc {i + 1} title '{op}: perftest'")
        sizes = sorted({e["bytes"] for e in bw})
        gnuplot(out, "bw.png", [
            "set title 'Bandwidth against message size: ours (solid) and perftest (dashed)'",
            "set xlabel 'message size [bytes]'", "set ylabel 'BW average [MiB/s] (median, min..max)'",
            "set logscale x 2", "set format x '%.0b%B'", "set key left top", "set grid",
            f"set xrange [{sizes[0] / 2}:{sizes[-1] * 2}]", "set yrange [0:*]",
            "set offsets 0, 0, graph 0.08, 0",
            "plot " + ", ".join(plots)])
    if lat:
        with open(f"{out}/lat.dat", "w") as f:
            f.write("# point ours_typical ours_p99 ours_p999 perftest_typical perftest_p99 perftest_p999\n")
            for e in lat:
                label = f"{e['op']} {e['bytes']}B"
                vals = []
                for tool in ("ours", "perftest"):
                    for k in LAT_COLUMNS:
                        s = e[tool][k]
                        ok = s is not None and s.get("quotable", True)
                        vals.append(str(s["median"]) if ok else "NaN")
                f.write(f"\"{label}\" " + " ".join(vals) + "\n")
        # A figure goes in only where some point may quote it (gnuplot
        # refuses a histogram column with no value at all).
        bars = []
        for col, name, lc in ((0, "typical", 1), (1, "99%", 2), (2, "99.9%", 3)):
            if not any(e[t][LAT_COLUMNS[col]] and e[t][LAT_COLUMNS[col]].get("quotable", True)
                       for e in lat for t in ("ours", "perftest")):
                continue
            xtic = ":xtic(1)" if not bars else ""
            bars.append(f"'lat.dat' using {col + 2}{xtic} title 'ours {name}' lc {lc}")
            bars.append(f"'' using {col + 5} title 'perftest {name}' lc {lc} fs pattern 4")
        if bars:
            gnuplot(out, "lat.png", [
                "set title 'Latency: median of the runs of t_typical, 99% and 99.9% "
                "(perftest: hatched; a percentile only where enough samples lie beyond it)'",
                "set ylabel 'latency [usec]'", "set style data histograms",
                "set style histogram clustered gap 1", "set style fill solid 0.8 border -1",
                "set yrange [0:*]", "set offsets 0, 0, graph 0.08, 0",
                "set key left top", "set grid ytics", "set xtics rotate by -30",
                "plot " + ", ".join(bars)])
    rated = [e for e in table if e["ratio"] is not None]
    if rated:
        with open(f"{out}/ratio.dat", "w") as f:
            f.write("# index ratio low high label\n")
            for i, e in enumerate(rated):
                iv = e["interval"]
                low, high = (iv["low"], iv["high"]) if iv else (e["ratio"], e["ratio"])
                f.write(f"{i} {e['ratio']} {low} {high} \"{e['op']} {e['mode']} {e['bytes']}B\"\n")
        gnuplot(out, "ratio.png", [
            "set title 'Ours against perftest: median speed ratio of the pairs, with its 95% "
            "interval (above 1: ours faster)'",
            "set ylabel 'speed ratio, ours / perftest'", "set yrange [0:*]",
            f"set xrange [-0.7:{len(rated) - 0.3}]", "set offsets 0, 0, graph 0.08, 0",
            "set xtics rotate by -30", "set grid ytics", "set key off",
            "plot 1 with lines lc rgb 'gray' dt 2, "
            "'ratio.dat' using 1:2:3:4:xtic(5) with yerrorbars pt 7 ps 1 lw 2 lc 1"])


def gnuplot(out, png, lines):
    script = "\n".join(["set terminal pngcairo noenhanced size 1000,600 font 'Sans,10'",
                        f"set output '{png}'"] + lines) + "\n"
    with open(f"{out}/{png[:-4]}.gp", "w") as f:
        f.write(script)
    r = subprocess.run(["gnuplot", f"{png[:-4]}.gp"], cwd=out, capture_output=True, text=True)
    if r.returncode != 0:
        say(f"gnuplot failed for {png}: {r.stderr.strip()}")


if __name__ == "__main__":
    sys.exit(main())
