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

# wire_end: the verdict and the exit. A failed run's capture is deleted
# with $work, so its evidence goes into the log first: the trace's CM
# messages (connect, disconnect) and its last 30 packets, timestamped.
wire_end() {
	echo "capture and checks: ${took}s"
	if [ "$failed" -ne 0 ] && [ -s "$t" ]; then
		echo "the trace's CM messages, then its last 30 packets (server VM's eth0):"
		{ grep -E '  CM ' "$t"; echo "  ..."; tail -n 30 "$t"; } | sed 's/^/  = /'
	fi
	[ "$failed" -eq 0 ] && echo PASS || echo FAIL
	exit "$failed"
}

# wire_fold: standard input to standard output, every line within 100
# columns, for the traces kept for the pages. A packet line (a trace's, from
# scripts/wire-trace without --width) has its extra on the next line,
# indented under "what", as "scripts/wire-trace --width 100" prints it; any
# other long line goes on in lines indented by four spaces.
wire_fold() {
	awk -v width=100 '
	function rest(text, indent, line, nw, w, i) {
		line = ""
		nw = split(text, w, " ")
		for (i = 1; i <= nw; i++) {
			if (line != "" && length(indent) + length(line) + 1 + length(w[i]) > width) {
				print indent line
				line = ""
			}
			line = line (line == "" ? "" : " ") w[i]
		}
		if (line != "") print indent line
	}
	length($0) <= width { print; next }
	/^ *[0-9]+\.[0-9]+  [cs]>[cs]  / {
		head = substr($0, 1, 69)
		sub(/ +$/, "", head)
		print head
		rest(substr($0, 70), "                 ")
		next
	}
	{
		first = ""
		n = split($0, w, " ")
		for (i = 1; i <= n && length(first) + 1 + length(w[i]) <= width; i++)
			first = first (first == "" ? "" : " ") w[i]
		print first
		text = ""
		for (; i <= n; i++) text = text (text == "" ? "" : " ") w[i]
		rest(text, "    ")
	}'
}
