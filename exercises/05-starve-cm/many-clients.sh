#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# exercises/05-starve-cm/many-clients.sh BIN ADDR PORT: the client half of
# the check's run (scripts/pair runs it as the client command): the scenario
# of the test 05-async.many_clients, 32 of 05's clients at once, each of 2
# connections, 2 messages in flight and 25 echoes a connection. Prints each
# client's lines after "cN| ", then one line of its own: how many ended
# well, and the median and the highest of the clients' largest round trips.
# Exit status: 0 when every client did, else 1.
set -uo pipefail
bin=$1 addr=$2 port=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for i in {1..32}; do
	"$bin/05-async-client" -a "$addr" -p "$port" -q 2 -w 2 -n 25 >"$dir/c$i" 2>&1 &
done
failed=0
for job in $(jobs -p); do
	wait "$job" || failed=$((failed + 1))
done
# In bash itself: in the lab's emulated VM a program started costs a tenth
# of a second or more, and 32 of them (a sed a client) took 14 s.
for i in {1..32}; do
	while IFS= read -r line; do
		printf 'c%d| %s\n' "$i" "$line"
	done <"$dir/c$i"
done
# "client: rtt us: count 50 min 210.1 median 700.2 p99 9000.3 max 41000.4"
sed -n 's/^client: rtt us: .* max \([0-9.]*\)$/\1/p' "$dir"/c* | sort -n |
	awk -v failed="$failed" '{ v[NR] = $1 }
		END { printf "check: %d clients ended well, %d failed; their largest round trips: median %.0f us, highest %.0f us\n",
			32 - failed, failed, NR ? v[int((NR + 1) / 2)] : 0, NR ? v[NR] : 0 }'
[ "$failed" -eq 0 ]
