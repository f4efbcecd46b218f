# shellcheck shell=bash
# 06-mr-pool, part 2, exercise 3: sleep or spin (docs/06-mr-pool-bench.md).
# A measure exercise: SEND latency at 8 bytes, busy-polling (the default)
# and sleeping on the completion channel (-e).

ex_run() {
	ex_bench spin '-o send -m lat -s 8'
	ex_bench sleep '-o send -m lat -s 8 -e'
}

# show NAME WHAT: the run's typical latency, its 99th percentile and CPU.
show() {
	local f
	read -ra f < <(ex_row "$1" 8)
	echo "  ($2: typical ${f[4]:-?} us, p99 ${f[7]:-?} us; client CPU user ${f[9]:-?} s, sys ${f[10]:-?} s)"
	[ -n "${f[10]:-}" ]
}

ex_judge() {
	show spin "busy polling" || ex_not_yet "the busy-polling run did not finish (its lines are above)"
	show sleep "-e, sleeping" || ex_not_yet "the -e run did not finish (its lines are above)"
	ex_all_ok || return
	ex_ok "both runs finished"
	ex_choice "Which is faster, and which takes less CPU?" c \
		"c: the busy-polling client sees each answer as soon as it is in the CQ, so its typical round trip is the shortest, and it pays a CPU for the whole run (its user time is about the run's length). With -e each round trip adds a wake-up: the CQ's event, the kernel waking the thread, the thread running again, tens of microseconds in this VM, and the CPU is free meanwhile. In a VM a sleeping vCPU must also be woken by the host, which costs more than on bare metal." \
		"-e is faster: it does not compete with the kernel for the CPU" \
		"they are the same: the wire decides the latency" \
		"busy polling is faster, and -e takes less CPU" \
		"busy polling is faster, and takes less CPU too, since it makes no system calls"
	ex_choice "In bandwidth mode (-m bw), with more QPs (-q) and a deeper window (-t), does the difference between sleeping and spinning grow or shrink?" b \
		"b: with many work requests in flight, the CQ has news almost whenever the client looks: a wake-up finds a batch of completions, not one, and its cost is spread over them; and the client has little to wait for. Spinning then buys little. With one message at a time (latency mode), every answer costs a whole wake-up, and spinning buys the most." \
		"it grows: more completions mean more wake-ups" \
		"it shrinks: each wake-up finds a batch of completions, its cost shared by them, and the client seldom waits at all" \
		"it does not change"
}
