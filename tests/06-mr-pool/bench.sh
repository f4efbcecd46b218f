#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# End-to-end tests of the benchmark (label bench): one 06-mr-pool-server,
# clients against it, their output, JSON and CSV checked.
#
#   bench.sh BIN_DIR PORT SCENARIO [ARGS...]
#
#   sweep OP        bw and lat short sweeps of OP: table shape, rows, JSON
#                   (parsed by python3, every field), CSV (22 columns),
#                   "data verified", the server's CPU in every row, exit 0;
#                   bw with -q 2 -Q 4 (a per-QP line under each row, the
#                   QPs' messages adding up), lat with -e (not for write);
#                   for send also bw with -D 1 and -I 64, and lat with -D 1
#                   (its figures from a histogram of every sample)
#   atomic OP       fadd or cas against a server that serves atomics only
#                   (its pool registered for remote atomics alone): bw on 2
#                   QPs and lat (busy, and -e), the counter checked after
#                   each run ("data verified"), JSON and CSV
#   load            -m load: WRITE at 2000 requests/s on 2 QPs for 2 s (the
#                   parameters line, the table's header and row, the
#                   requests done: at most the schedule's 4000 (one due when
#                   the time is up is not sent; a loaded VM sent 3000-odd),
#                   the percentiles in order, the histogram holding every
#                   request, data verified), READ on a Poisson schedule
#                   (-n 500: 500 done), and --max-p99: far below any run,
#                   exit 3 and a line naming the percentile; far above, exit 0
#   lend            --lend: READ, FETCH_AND_ADD, WRITE and SEND latency on a
#                   lent QP, data verified; the server's answers from its
#                   buffer's second half (the accepting lines say so)
#   lend_server     a server with --lend: SEND, WRITE and WRITE WITH IMM
#                   latency answered on its lent QP (data verified: the
#                   run's result came after the lend; a 4 KiB buffer's
#                   answers echo the pings), a client that lends
#                   nothing, a bandwidth run, which the server serves
#                   through the helper, and a client stopped (SIGSTOP)
#                   mid-run: dropped by the server's probes, the next
#                   served, no QP held
#   cycles          --cycles: READ and SEND latency, FETCH_AND_ADD bandwidth, timed by the cycle
#                   counter (the parameters line says so); its samples, from
#                   the histogram, add up to at most the run's time by the
#                   clock (+10%) and a fifth of it at least (two runs'
#                   medians are no measure: under
#                   load one SEND run's median was 4 ms, the next's 18 us)
#   reject_size     a client asking for more than the server's -s: exit 1,
#                   both sides name the size
#   reject_op       an op the server does not serve: exit 1, named
#   client_killed   a client killed mid-run; the server serves the next
#   silent_clients  eight clients stopped (SIGSTOP) in their runs hold all 8
#                   buffers; the server's probes drop each (a line apiece)
#                   and a ninth client, tried again each second, is served
#                   within 60 s (the arithmetic, bench_wire.h: about 27 s);
#                   afterwards the server holds no QP (rdma resource)
#   server_killed   the server killed mid-run; the client exits 1 in 25 s
#   grant_cases     tests/06-mr-pool/grant-client against a server's windows:
#                   its own window (lands), its key after END and after its
#                   SEND WITH INVALIDATE, a WRITE through a read-only window
#                   (each refused, IBV_WC_REM_ACCESS_ERR), 8 bytes past its
#                   window's end (refused; on rxe it lands: rxe checks the
#                   region's bounds, not the window's); then an honest client
#                   is served, and the server holds no QP or CQ, its
#                   listener's CM id and the pool's one MR (rdma resource)
#   grant_other     a WRITE into a live session's window with its key, from
#                   another connection: refused; that session's data is
#                   verified; with -g pool the same WRITE lands
#   grant_lease     a server with -L 1000: the key, revoked when the lease
#                   runs out (ENDED 1), is refused; a client whose run
#                   outlasts the lease fails (exit 1) naming why, and the
#                   server, which keeps serving, holds no QP afterwards
#   hostile         hostile peers of the control protocol (grant-client):
#                   one that quits at each step (connected, START sent,
#                   READY read, WRITE posted, DONE sent, RESULT read, END
#                   sent), one that sends END twice, and two that go silent
#                   (before START, after READY) while an honest client is
#                   served; the silent ones are dropped by the server's
#                   probes, and afterwards the server holds no QP or CQ and
#                   serves another client
#
# Exit 0 pass, 1 fail, 77 skipped (no RDMA_LAB_ADDR), unless
# REX_REQUIRE_RDMA=1.
set -u
bin=$1 port=$2 scenario=$3
shift 3
if [ -z "${RDMA_LAB_ADDR:-}" ]; then
	[ "${REX_REQUIRE_RDMA:-0}" = 1 ] && { echo "FAIL: no RDMA_LAB_ADDR"; exit 1; }
	echo "SKIP: RDMA_LAB_ADDR is not set (run through scripts/lab run)"
	exit 77
fi
addr=$RDMA_LAB_ADDR
dir=$(mktemp -d "${TMPDIR:-/tmp}/06-bench.XXXXXX")
server_pid=
failed=0
finished=no
cleanup() {
	# A signal ends the script where it is (every other end sets
	# "finished"): say so, or the dump below reads like a failure of the
	# programs. bench_test() in 06-mr-pool/CMakeLists.txt runs each scenario
	# under "timeout -s TERM", ten seconds short of ctest's own timeout.
	if [ "$finished" = no ]; then
		echo "FAIL: $scenario was stopped by a signal before its end (SIGTERM: its time ran out)"
		failed=1
	fi
	# Only while it runs as our job: a pid that ended may be another
	# test's process by now (pid numbers are reused: 32,768 by default).
	[ -n "$server_pid" ] && jobs -pr | grep -qx "$server_pid" && kill -KILL "$server_pid" 2>/dev/null
	for f in "$dir"/*.out; do
		[ -e "$f" ] || continue
		echo "--- ${f##*/} ---"
		sed 's/^/  | /' "$f"
	done
	# REX_KEEP_FAILED=DIR: a failed run's files are moved there, for a
	# look at what the dump above cannot show (the JSON files).
	if [ "$failed" != 0 ] && [ -n "${REX_KEEP_FAILED:-}" ] && mkdir -p "$REX_KEEP_FAILED"; then
		mv "$dir" "$REX_KEEP_FAILED/" && echo "kept: $REX_KEEP_FAILED/${dir##*/}"
	fi
	rm -rf "$dir"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; failed=1; }

# start_server ARGS...: the server, and its listening line (30 s at most).
start_server() {
	"$bin/06-mr-pool-server" -B "$addr" -p "$port" "$@" >"$dir/server.out" 2>&1 &
	server_pid=$!
	for _ in $(seq 300); do
		grep -q '^server: listening on' "$dir/server.out" && return 0
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.1
	done
	fail "no listening line from the server"
	finished=yes
	exit 1
}

stop_server() {
	kill -TERM "$server_pid"
	wait "$server_pid"
	code=$?
	server_pid=
	[ $code -eq 0 ] || fail "server exit $code, expected 0"
	grep -q '^server: released everything' "$dir/server.out" || fail "server did not release everything"
}

# client NAME EXPECTED_EXIT ARGS...
client() {
	local name=$1 expect=$2 code
	shift 2
	timeout 120 "$bin/06-mr-pool-client" -p "$port" "$@" "$addr" >"$dir/$name.out" 2>&1
	code=$?
	[ $code -eq "$expect" ] || fail "$name: exit $code, expected $expect"
}

has() { grep -qE -- "$2" "$dir/$1.out" || fail "$1: no line matching: $2"; }

# grant CASE EXPECTED_EXIT ARGS...: the hostile grant client (grant-client.c).
grant() {
	local what=$1 expect=$2 code
	shift 2
	timeout 60 "$bin/../tests/06-mr-pool-grant-client" -a "$addr" -p "$port" --case "$what" "$@" \
		>"$dir/grant-$what.out" 2>&1
	code=$?
	[ $code -eq "$expect" ] || fail "grant-client $what: exit $code, expected $expect"
}

# hostile NAME EXPECTED_EXIT ARGS...: grant-client as a hostile peer, output in
# NAME.out.
hostile() {
	local name=$1 expect=$2 code
	shift 2
	timeout 90 "$bin/../tests/06-mr-pool-grant-client" -a "$addr" -p "$port" "$@" \
		>"$dir/$name.out" 2>&1
	code=$?
	[ $code -eq "$expect" ] || fail "grant-client $name: exit $code, expected $expect"
}

# held KIND N: the server holds N objects of this kind (rdma resource show),
# once the sessions that just ended are released (5 s at most).
held() {
	local n
	for _ in $(seq 50); do
		n=$(rdma resource show "$1" | grep -c " pid $server_pid ")
		[ "$n" -eq "$2" ] && return 0
		sleep 0.1
	done
	fail "server holds $n $1, expected $2"
	rdma resource show "$1"
}

# check NAME MODE ROWS: the table, the files.
check() {
	local name=$1 mode=$2 rows=$3
	if [ "$mode" = bw ]; then
		has "$name" '^ #bytes  #iterations  BW peak\[MiB/sec\]  BW average\[MiB/sec\]  MsgRate\[Mpps\]  CPU user\[s\]  CPU sys\[s\]  Server CPU\[s\]$'
	else
		has "$name" '^ #bytes  #iterations  t_min\[usec\]  t_max\[usec\]  t_typical\[usec\]  t_avg\[usec\]  t_stdev\[usec\]  99% percentile\[usec\]  99\.9% percentile\[usec\]  CPU user\[s\]  CPU sys\[s\]  Server CPU\[s\]$'
	fi
	n=$(grep -cE '^ [0-9]+ +[0-9]+( +[0-9]+\.[0-9]+)+$' "$dir/$name.out")
	[ "$n" -eq "$rows" ] || fail "$name: $n rows of numbers, expected $rows"
	has "$name" '^client: data verified: '
	has "$name" '^client: done$'
	python3 - "$dir/$name.json" "$dir/$name.csv" "$mode" "$rows" <<'PY' || fail "$name: JSON or CSV"
import csv, json, sys
doc = json.load(open(sys.argv[1]))
mode, rows = sys.argv[3], int(sys.argv[4])
top = ["program", "date", "device", "op", "mode", "qps", "depth", "signal_every", "inline",
       "polling", "results"]
common = ["bytes", "iterations", "cpu_user_s", "cpu_sys_s", "srv_cpu_user_s", "srv_cpu_sys_s",
          "seconds", "verified"]
own = (["bw_peak_mib_s", "bw_avg_mib_s", "msg_rate_mpps"] if mode == "bw" else
       ["t_min_us", "t_max_us", "t_typical_us", "t_avg_us", "t_stdev_us", "t_p99_us", "t_p999_us"])
assert all(k in doc for k in top), [k for k in top if k not in doc]
assert doc["mode"] == mode and len(doc["results"]) == rows, (doc["mode"], len(doc["results"]))
for r in doc["results"]:
    missing = [k for k in common + own if k not in r]
    assert not missing, missing
    assert r["verified"] is True and r["iterations"] > 0
    assert r["srv_cpu_user_s"] >= 0 and r["srv_cpu_sys_s"] >= 0, r
    if mode == "lat":
        # Every timed sample in the histogram; by duration, all the row has.
        h = r["histogram"]
        n = sum(b[2] for b in h["buckets"])
        assert n == h["n"] and n >= r["iterations"] > 0, (n, h["n"], r["iterations"])
        assert all(lo <= hi for lo, hi, _ in h["buckets"]) and h["scale"] in (1, 2)
        assert h["min"] <= r["t_min_us"] * 1e3 * h["scale"] + 1
    if doc["qps"] > 1:
        per = r["per_qp"]
        assert len(per) == doc["qps"], per
        assert all(q["iterations"] == r["iterations"] and q["bw_avg_mib_s"] > 0 for q in per), per
lines = list(csv.reader(open(sys.argv[2])))
assert ",".join(lines[0]) == ("op,mode,bytes,iterations,qps,depth,bw_peak_mib_s,bw_avg_mib_s,"
    "msg_rate_mpps,t_min_us,t_max_us,t_typical_us,t_avg_us,t_stdev_us,t_p99_us,t_p999_us,"
    "cpu_user_s,cpu_sys_s,seconds,verified,srv_cpu_user_s,srv_cpu_sys_s"), lines[0]
assert len(lines) == rows + 1 and all(len(l) == 22 for l in lines)
for l in lines[1:]:
    row = dict(zip(lines[0], l))
    assert row["mode"] == mode and row["verified"] == "true"
    assert all(row[k] != "" for k in own), row
PY
}

case $scenario in
sweep)
	op=$1
	start_server -s 8K
	client bw 0 -o "$op" -a --max-size 1K -n 200 -q 2 -Q 4 --json "$dir/bw.json" --csv "$dir/bw.csv"
	check bw bw 10
	has bw "^client: $op bw, 2 QPs, depth 128, signal every 4, inline 0, busy polling$"
	n=$(grep -cE '^   per QP \[MiB/sec\]: slowest [0-9.]+ \(QP [01], 200 messages\), fastest [0-9.]+ \(QP [01], 200 messages\), spread [0-9.]+%$' "$dir/bw.out")
	[ "$n" -eq 10 ] || fail "bw: $n per-QP lines, expected 10"
	events=-e
	[ "$op" = write ] && events=
	client lat 0 -o "$op" -m lat -a --max-size 64 -n 100 $events --json "$dir/lat.json" --csv "$dir/lat.csv"
	check lat lat 6
	if [ "$op" = write ]; then
		# -l 100: chains of 100 work requests, one post each.
		client list 0 -o write -s 4K -n 1000 -l 100 --json "$dir/list.json" --csv "$dir/list.csv"
		check list bw 1
	fi
	if [ "$op" = send ]; then
		client dur 0 -o send -s 8K -D 1 -I 64 --json "$dir/dur.json" --csv "$dir/dur.csv"
		check dur bw 1
		client durlat 0 -o send -m lat -s 64 -D 1 --json "$dir/durlat.json" --csv "$dir/durlat.csv"
		check durlat lat 1
	fi
	stop_server
	;;
atomic)
	op=$1
	start_server -o fadd,cas -s 8
	client bw 0 -o "$op" -n 300 -q 2 --json "$dir/bw.json" --csv "$dir/bw.csv"
	check bw bw 1
	has bw "^client: $op bw, 2 QPs, depth 128, signal every 100, inline 0, busy polling$"
	has bw '^client: data verified: the server.s counter fetched atomically, equal to the atomics done'
	client lat 0 -o "$op" -m lat -n 200 --as-perftest --json "$dir/lat.json" --csv "$dir/lat.csv"
	check lat lat 1
	client late 0 -o "$op" -m lat -n 100 -e --json "$dir/late.json" --csv "$dir/late.csv"
	check late lat 1
	stop_server
	;;
srq)
	# One shared receive queue of 300 receives for every session: a SEND
	# bandwidth run (its window, 32, takes 72 of them), SEND latency and
	# WRITE WITH IMM bandwidth, every run's data verified; a SEND larger
	# than the queue's buffers refused; afterwards the server holds no QP.
	start_server -s 64K -S 300
	has server '^server: one shared receive queue of 300 receives of 4096 bytes$'
	client bw 0 -o send -s 4K -t 32 -n 500 --json "$dir/bw.json" --csv "$dir/bw.csv"
	check bw bw 1
	client lat 0 -o send -m lat -s 64 -n 200 --json "$dir/lat.json" --csv "$dir/lat.csv"
	check lat lat 1
	client imm 0 -o write_imm -s 4K -t 32 -n 500 --json "$dir/imm.json" --csv "$dir/imm.csv"
	check imm bw 1
	client big 1 -o send -s 8K -n 10
	has big "rejected by the server: a SEND of 8192 bytes is above the 4096 of the server's shared receive queue \(its -S\)"
	held qp 0
	stop_server
	;;
load)
	start_server
	client lw 0 -o write -m load --rate 2000 -q 2 -s 64 -D 2 --json "$dir/lw.json"
	has lw '^client: write load, 2 QPs, depth 16, fixed schedule, 2000 requests/s offered, for 2 s, inline 0, busy polling$'
	has lw '^ #bytes  offered\[req/s\]  achieved\[req/s\]  #requests  late  t_p50\[usec\]  t_p90\[usec\]  t_p99\[usec\]  t_p99\.9\[usec\]  t_max\[usec\]  CPU user\[s\]  CPU sys\[s\]  Server CPU\[s\]$'
	has lw '^ 64 +2000 +[0-9]+\.[0-9] +[0-9]+ +[0-9]+( +[0-9]+\.[0-9]+){8}$'
	has lw '^client: data verified: our pattern checked at the server \(target\), after each timed run, for 1 size$'
	client lr 0 -o read -m load --rate 1000 --schedule poisson -n 500 --json "$dir/lr.json"
	has lr '^client: read load, 1 QP, depth 16, poisson schedule, 1000 requests/s offered, 500 requests, inline 0, busy polling$'
	has lr '^client: data verified: the server.s pattern read back'
	for run in lw:4000:time lr:500:count; do
		IFS=: read -r name want by <<<"$run"
		python3 - "$dir/$name.json" "$want" "$by" <<'PY' || fail "$name: JSON"
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"][0]
assert doc["mode"] == "load" and len(doc["results"]) == 1, doc["mode"]
# By count (-n) every request is sent; by time (-D) those due but unsent
# when the time is up are not: at most the schedule's.
want = int(sys.argv[2])
assert r["requests"] == r["iterations"] and (r["requests"] == want if sys.argv[3] == "count"
                                             else 0 < r["requests"] <= want), (r["requests"], want)
assert 0 <= r["late"] <= r["requests"] and r["achieved_rps"] > 0 and r["verified"] is True, r
p = [r[k] for k in ("t_min_us", "t_typical_us", "t_p90_us", "t_p99_us", "t_p999_us")]
assert all(a <= b for a, b in zip(p, p[1:])) and p[-1] <= r["t_max_us"] * 1.02, p
h = r["histogram"]
assert h["scale"] == 1 and h["n"] == r["requests"] == sum(b[2] for b in h["buckets"]), h["n"]
PY
	done
	client above 3 -o write -m load --rate 1000 -n 200 --max-p99 0.001
	has above '^client: p99 [0-9]+\.[0-9]+ us at 1000 requests/s is above --max-p99 0.001 us$'
	has above '^client: done$'
	client below 0 -o write -m load --rate 1000 -n 200 --max-p99 10000000
	grep -q 'above --max-p99' "$dir/below.out" && fail "below: a line says p99 is above 10 s"
	held qp 0
	stop_server
	;;
cycles)
	start_server
	for op in read send; do
		client "$op-cycles" 0 -o "$op" -m lat -s 8 -n 2000 --cycles --json "$dir/$op-cycles.json"
		has "$op-cycles" "^client: $op lat, 1 QP, depth 1, signal every 1, inline 0, busy polling, pings timed by the cycle counter$"
		has "$op-cycles" '^client: data verified: '
		python3 - "$dir/$op-cycles.json" <<'PY' || fail "$op: the cycle counter's samples do not add up to the run's time"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
h = r["histogram"]
total = sum((lo + hi) / 2 * n for lo, hi, n in h["buckets"]) / 1e9  # s, every sample
print(f"samples add up to {total:.4f} s; the run took {r['seconds']:.4f} s by the clock")
# Not above the run's time (10% for the buckets' widths); below it by the
# last ping's wait, which is no sample: once 1.3 s of a loaded 5 s run.
assert h["n"] >= 1999 and 0.2 < total / r["seconds"] < 1.1, (total, r["seconds"])
PY
	done
	# Bandwidth by the cycle counter too: the timed region's end and
	# --as-perftest's stamp at every post, against the program's wall time.
	t0=$(date +%s%N)
	client fadd-bw-cycles 0 -o fadd -m bw -n 2000 --cycles --as-perftest --json "$dir/fadd-bw-cycles.json"
	wall_ns=$(($(date +%s%N) - t0))
	has fadd-bw-cycles "^client: fadd bw, 1 QP, depth 128, signal every 100, inline 0, busy polling, timed by the cycle counter$"
	has fadd-bw-cycles '^client: data verified: '
	python3 - "$dir/fadd-bw-cycles.json" "$wall_ns" <<'PY' || fail "fadd bw: the cycle counter's region or BW peak does not add up"
import json, sys
r = json.load(open(sys.argv[1]))["results"][0]
wall = int(sys.argv[2]) / 1e9
print(f"{r['iterations']} atomics in {r['seconds']:.4f} s by the cycle counter; the program ran {wall:.2f} s; "
      f"BW average {r['bw_avg_mib_s']:.4f}, peak {r['bw_peak_mib_s']:.4f} MiB/s")
# Inside the program's own time, and perftest's peak (post to a later
# completion) is at least the average over the whole region.
assert r["iterations"] == 2000 and 0 < r["seconds"] < wall, (r["seconds"], wall)
assert r["bw_peak_mib_s"] >= 0.99 * r["bw_avg_mib_s"] > 0, r
PY
	stop_server
	;;
lend)
	# --lend: the pings posted and polled with the verbs alone on the QP the
	# helper lends; every op's data or counter checked after it, and the
	# control messages (DONE, the grant's end) through the helper again.
	# 200 pings a run: with 2,000, loaded rounds took the scenario to 111 s,
	# and once past its 110 (SEND averaged 5.7 ms a ping); they prove no
	# more.
	start_server
	for op in read fadd write send; do
		client "$op-lend" 0 -o "$op" -m lat -s 8 -n 200 --lend --cycles
		has "$op-lend" "^client: $op lat, 1 QP, depth 1, signal every 1, inline 0, busy polling of a lent QP, pings timed by the cycle counter$"
		has "$op-lend" '^ 8 +199 '
		has "$op-lend" '^client: data verified: '
	done
	stop_server
	# The server's default buffer holds a client's 8-byte pings and, a page
	# on, its answers (perftest's layout): WRITE's and SEND's answers came
	# from there, and the client found the run's pattern in them.
	for op in write send; do
		grep -q "^server: .*: $op lat, connection 1 of 1, up to 8 bytes, depth 1, answers from the buffer's second half: accepting\$" "$dir/server.out" ||
			fail "server: $op latency's answers not from the buffer's second half"
	done
	;;
lend_server)
	# The server's --lend: its latency pings taken, answers posted and polled, on the QP
	# the helper lends it. 200 pings a run: what the lend must prove is the
	# data and the run's result after it; in a loaded round 2,000 pings at
	# 4 KiB took 20 s a run (both sides spin on a shared CPU), and the
	# probes' drop below needs 15 to 30 s of its own.
	start_server --lend -s 4K
	grep -q '^server: latency pings taken and answered on a lent QP (--lend)$' "$dir/server.out" ||
		fail "server: no --lend line"
	for op in send write write_imm; do
		client "$op-served-lent" 0 -o "$op" -m lat -s 4096 -n 200 --lend --cycles
		has "$op-served-lent" '^ 4096 +199 '
		has "$op-served-lent" '^client: data verified: '
	done
	# A 4 KiB buffer has no room for a second 4 KiB: those answers echo the
	# pings' own bytes, and are verified all the same.
	grep -q "^server: .*: send lat, connection 1 of 1, up to 4096 bytes, depth 1, answers echo the pings: accepting\$" "$dir/server.out" ||
		fail "server: a 4 KiB ping in a 4 KiB buffer not echoed"
	client send-plain-lent 0 -o send -m lat -s 8 -n 200
	has send-plain-lent '^client: data verified: '
	client send-bw-lent 0 -o send -m bw -s 4096 -n 200
	has send-bw-lent '^client: data verified: '
	# A client stopped in the middle of a lent run: the server takes its
	# QP back at the first quiet probe, drops it by its probes as ever, and
	# serves the next.
	"$bin/06-mr-pool-client" -p "$port" -o send -m lat -s 8 -D 120 --lend "$addr" \
		>"$dir/stopped-lent.out" 2>&1 &
	stopped=$!
	for _ in $(seq 300); do grep -q '#bytes' "$dir/stopped-lent.out" && break; sleep 0.1; done
	kill -STOP $stopped
	for _ in $(seq 600); do grep -q 'silent for [0-9]* probes' "$dir/server.out" && break; sleep 0.1; done
	grep -q 'silent for [0-9]* probes' "$dir/server.out" || fail "server: the stopped client not dropped in 60 s"
	kill -KILL $stopped
	wait $stopped 2>/dev/null
	client after-stopped 0 -o write -m lat -s 8 -n 200 --lend
	has after-stopped '^client: data verified: '
	held qp 0
	stop_server
	grep -q '^server: done: 7 connections served, 1 failed, 0 rejected; 6 runs' "$dir/server.out" ||
		fail "server: not 7 connections, 1 failed, 6 runs"
	;;
reject_size)
	start_server -s 4K
	client big 1 -s 64K -n 10
	has big "rejected by the server: size 65536 is above the server's -s 4096"
	stop_server
	grep -q "rejecting .*: size 65536 is above the server's -s 4096" "$dir/server.out" || fail "server: no rejecting line"
	;;
reject_op)
	start_server -o write
	client op 1 -o read -s 64 -n 10
	has op "rejected by the server: op read is not served \(the server's -o write\)"
	stop_server
	;;
silent_clients)
	start_server -s 64K
	stopped=()
	for k in 1 2 3 4 5 6 7 8; do
		"$bin/06-mr-pool-client" -p "$port" -o write -s 4K -D 120 "$addr" >"$dir/silent-$k.out" 2>&1 &
		stopped+=($!)
		for _ in $(seq 300); do grep -q '#bytes' "$dir/silent-$k.out" && break; sleep 0.1; done
		kill -STOP $!
	done
	start=$(date +%s)
	served=
	while [ $(($(date +%s) - start)) -lt 60 ]; do
		if timeout 60 "$bin/06-mr-pool-client" -p "$port" -o write -s 4K -n 100 "$addr" >"$dir/ninth.out" 2>&1; then
			served=$(($(date +%s) - start))
			break
		fi
		sleep 1
	done
	echo "the ninth client was served ${served:-never} s after the eight stopped"
	[ -n "$served" ] || fail "the ninth client was not served within 60 s"
	has ninth '^client: done$'
	for _ in $(seq 300); do
		[ "$(grep -c 'silent for [0-9]* probes' "$dir/server.out")" -eq 8 ] && break
		sleep 0.1
	done
	n=$(grep -c 'silent for [0-9]* probes' "$dir/server.out")
	[ "$n" -eq 8 ] || fail "$n sessions dropped as silent, expected 8"
	kill -KILL "${stopped[@]}"
	wait "${stopped[@]}" 2>/dev/null
	held qp 0
	stop_server
	;;
client_killed)
	start_server -s 64K
	"$bin/06-mr-pool-client" -p "$port" -D 60 "$addr" >"$dir/killed.out" 2>&1 &
	pid=$!
	for _ in $(seq 300); do grep -q '#bytes' "$dir/killed.out" && break; sleep 0.1; done
	sleep 0.5 # inside its timed run, not waiting for the server (the header came)
	kill -KILL $pid
	wait $pid
	client next 0 -s 4K -n 100
	has next '^client: done$'
	stop_server
	grep -q "the client left in the middle of a run" "$dir/server.out" || fail "server did not see the client leave"
	;;
server_killed)
	start_server -s 64K
	start=$(date +%s)
	"$bin/06-mr-pool-client" -p "$port" -D 60 "$addr" >"$dir/orphan.out" 2>&1 &
	pid=$!
	for _ in $(seq 300); do grep -q '#bytes' "$dir/orphan.out" && break; sleep 0.1; done
	sleep 0.5
	kill -KILL "$server_pid"
	wait "$server_pid" 2>/dev/null
	server_pid=
	start=$(date +%s)
	wait $pid
	code=$?
	took=$(($(date +%s) - start))
	[ $code -eq 1 ] || fail "client exit $code, expected 1"
	# the transport's retries (3.8 s), the drain deadline (10 s: nobody
	# answers the disconnect), and the loaded VM's scheduling (5 s seen)
	[ $took -le 25 ] || fail "client took $took s to notice, more than 25"
	has orphan "server disconnected|is the server gone|work completion failed"
	;;
grant_cases)
	start_server -s 64K
	for c in good stale stale-inv write; do
		grant "$c" 0
		if [ "$c" = good ]; then
			has "grant-$c" "^grant-client: good: WRITE 8 B .*: success \(it landed\)$"
		else
			has "grant-$c" "^grant-client: $c: WRITE 8 B .*: remote access error \(refused\)$"
			has "grant-$c" "^grant-client: the server disconnected us$"
		fi
	done
	has grant-stale '^grant-client: stale: rkey 0x[0-9a-f]{8} revoked \(END: the server.s local invalidate\), ENDED 0$'
	has grant-stale-inv '^grant-client: stale-inv: rkey 0x[0-9a-f]{8} revoked \(our SEND WITH INVALIDATE\), ENDED 0$'
	# rxe checks an access through a window against the region's bounds,
	# not the window's (drivers/infiniband/sw/rxe/rxe_resp.c, check_rkey()).
	if rdma link show | grep -q '^link rxe'; then
		grant past-end 1
		has grant-past-end '^grant-client: past-end: WRITE 16 B .*: success \(it landed\)$'
	else
		grant past-end 0
		has grant-past-end '^grant-client: past-end: WRITE 16 B .*: remote access error \(refused\)$'
	fi
	client next 0 -o write -s 4K -n 100 --end server
	has next '^client: done$'
	held qp 0
	held cq 0
	held cm_id 1
	held mr 1
	stop_server
	;;
grant_other)
	for mode in window pool; do
		start_server -s 64K -v -g "$mode"
		"$bin/06-mr-pool-client" -p "$port" -o write -s 64K -D 8 "$addr" >"$dir/victim-$mode.out" 2>&1 &
		pid=$!
		for _ in $(seq 300); do grep -q '#bytes' "$dir/victim-$mode.out" && break; sleep 0.1; done
		line=$(grep -E 'server: connection 1 .*: (window rkey|pool rkey)' "$dir/server.out")
		rkey=$(printf '%s\n' "$line" | sed -E 's/.* rkey (0x[0-9a-f]+) over (0x[0-9a-f]+),.*/\1/')
		at=$(printf '%s\n' "$line" | sed -E 's/.* rkey (0x[0-9a-f]+) over (0x[0-9a-f]+),.*/\2/')
		if [ "$mode" = window ]; then
			grant other 0 --rkey "$rkey" --addr "$at"
			has grant-other "^grant-client: other: WRITE 8 B at $at .*, rkey $rkey: remote access error \(refused\)$"
			wait $pid || fail "the victim: exit $?, expected 0"
			grep -q '^client: data verified' "$dir/victim-$mode.out" || fail "the victim's data not verified"
		else
			grant other 1 --rkey "$rkey" --addr "$at"
			has grant-other "^grant-client: other: WRITE 8 B at $at .*, rkey $rkey: success \(it landed\)$"
			wait $pid
		fi
		mv "$dir/grant-other.out" "$dir/grant-other-$mode.out"
		stop_server
	done
	;;
grant_lease)
	start_server -s 64K -L 1000
	grant lease 0
	has grant-lease '^grant-client: lease: the server revoked our rkey 0x[0-9a-f]{8} after its lease of 1000 ms \(ENDED 1\)$'
	has grant-lease '^grant-client: lease: WRITE 8 B .*: remote access error \(refused\)$'
	client outlasts 1 -o write -s 4K -D 4
	has outlasts 'the server revoked our rkey: its lease ran out \(lease 1000 ms\)|remote access error'
	held qp 0
	stop_server
	grep -q 'lease of 1000 ms ran out: revoking rkey' "$dir/server.out" || fail "server: no lease line"
	;;
hostile)
	start_server -s 64K
	for step in hello start ready write done result end; do
		hostile "quit-$step" 0 --quit-at "$step"
		has "quit-$step" "^grant-client: quit at $step$"
	done
	hostile end-twice 0 --end-twice
	has end-twice '^grant-client: end-twice: the server ended the session$'
	has server '^server: connection [0-9]+ from .*: END twice$'
	hostile silent-hello 0 --silent-at hello &
	s1=$!
	hostile silent-ready 0 --silent-at ready &
	s2=$!
	sleep 1
	client honest 0 -o write -s 4K -n 100
	has honest '^client: data verified'
	wait $s1
	wait $s2
	for step in hello ready; do
		has "silent-$step" "^grant-client: silent at $step: the server disconnected us after [0-9]+ ms$"
	done
	n=$(grep -cE '^server: .*silent for [0-9]+ probes \([0-9]+ ms each\): dropped' "$dir/server.out")
	[ "$n" -eq 2 ] || fail "server: $n sessions dropped for silence, expected 2"
	held qp 0
	held cq 0
	client after 0 -o write -s 4K -n 100
	has after '^client: data verified'
	stop_server
	;;
*)
	echo "unknown scenario $scenario"
	finished=yes
	exit 2
	;;
esac
finished=yes
[ $failed -eq 0 ] && echo "PASS: $scenario $*"
exit $failed
