# shellcheck shell=bash
# 03-read-write, exercise 1: watch the CPU (docs/03-read-write.md). A
# measure exercise: each server under exercises/rusage.py (its CPU time
# when it exits, after its one client), 03's with a client that moves
# 160 MiB (16 MiB written and read back, then 4 WRITEs and 4 READs), 02's
# with one that has 64 MiB echoed in 1,024 messages of 64 KiB.

ex_run() {
	ex_pair rw "$EX_ROOT/exercises/rusage.py @BIN@/03-read-write-server -a @ADDR@ -p @PORT@ -s 16M" \
		'@BIN@/03-read-write-client -a @ADDR@ -p @PORT@ -s 16M -n 4'
	ex_pair sr "$EX_ROOT/exercises/rusage.py @BIN@/02-send-recv-server -a @ADDR@ -p @PORT@" \
		'@BIN@/02-send-recv-client -a @ADDR@ -p @PORT@ -s 64K -n 1024 -w 16'
}

# cpu NAME: the server's user + system seconds, from rusage.py's line.
cpu() {
	awk -v u="$(ex_value "$1" 'rusage: user ([0-9.]+) s')" -v s="$(ex_value "$1" 'rusage: user [0-9.]+ s, system ([0-9.]+) s')" \
		'BEGIN { if (u == "" || s == "") exit 1; printf "%.3f\n", u + s }'
}

ex_judge() {
	local rw sr
	ex_expect rw '^server: 16777216 bytes arrived intact$' "03: the client's 16 MiB arrived intact"
	ex_expect sr '^client: 1024 echoes of 65536 bytes intact in ' "02: 1024 echoes of 64 KiB came back intact"
	rw=$(cpu rw) || ex_not_yet "03's server did not print its CPU time (did it exit?)"
	sr=$(cpu sr) || ex_not_yet "02's server did not print its CPU time (did it exit?)"
	ex_all_ok || return
	echo "  (03's server: $rw s of CPU for 160 MiB through its memory, $(awk -v c="$rw" 'BEGIN { printf "%.2f", c * 1000 / 160 }') ms a MiB)"
	echo "  (02's server: $sr s of CPU for 64 MiB in and 64 MiB out, $(awk -v c="$sr" 'BEGIN { printf "%.2f", c * 1000 / 128 }') ms a MiB)"
	ex_ok "both servers ran and said what they cost"
	ex_choice "Which server's CPU paid more for each MiB, and why?" b \
		"b: 03's server takes part only at the start (the request; allocating and registering 16 MiB, which pins every page; the descriptor) and the end (the done message, and one pass over the data to check its pattern), however many WRITEs and READs come in between: those are carried out by the server's device, on Soft-RoCE the kernel's rxe. 02's server handles every message: a completion, a receive posted again, a copy into a send buffer and a SEND, each a system call on Soft-RoCE. That is the difference one-sided operations make: the target's program is not in the data path." \
		"03's: its memory took more data, and every byte a device writes costs the CPU that owns the memory" \
		"02's: it handles every message (a completion, a receive posted again, a copy, a SEND); 03's takes part only at the start and the end, and the device moves the data" \
		"neither: on Soft-RoCE both servers' CPU time is the kernel's, and the same"
}
