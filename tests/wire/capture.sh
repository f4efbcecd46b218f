# SPDX-License-Identifier: MIT
#
# Sourced by tests/wire/wire-test.sh and tests/wire/fault-test.sh: one pair
# across two VMs, captured and decoded.
#
#   wire_capture NAME TIMEOUT
#
# Runs scripts/lab capture with $server, $client and the array stop (maybe
# empty) for at most TIMEOUT seconds, shows its output ("  | " before each
# line), and decodes the capture with scripts/wire-trace. Sets: work (a
# temporary folder, removed at exit), out (the lab's output), t (the trace),
# rc (the lab's exit status), took (seconds); and defines fail MESSAGE, which
# says FAIL and sets failed=1. Exits 1 when there is no capture or no trace.

wire_capture() {
	local name=$1 timeout=$2 start=$SECONDS
	work=$(mktemp -d "${TMPDIR:-/tmp}/$name.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	failed=0
	out=$work/lab.out
	t=$work/trace.txt
	rc=0
	"$ROOT/scripts/lab" capture --out "$work/wire.pcap" --timeout "$timeout" ${stop[@]+"${stop[@]}"} \
		"$server" "$client" >"$out" 2>&1 || rc=$?
	took=$((SECONDS - start))
	sed 's/^/  | /' "$out"
	[ -s "$work/wire.pcap" ] || { echo "FAIL: no capture (scripts/lab capture exited with $rc after ${took}s)"; exit 1; }
	"$ROOT/scripts/wire-trace" "$work/wire.pcap" >"$t" || { echo "FAIL: scripts/wire-trace failed"; exit 1; }
}
fail() { echo "FAIL: $*"; failed=1; }
