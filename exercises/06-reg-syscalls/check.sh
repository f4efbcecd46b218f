# shellcheck shell=bash
# 06-mr-pool, exercise 2: where does the time go? (docs/06-mr-pool.md). A
# measure exercise: regcost at 64 MiB of normal pages, 20 registrations,
# under perf stat -e page-faults; the same with 40, to tell the faults of a
# registration from the program's own; and under strace -c, which counts
# every system call and the time spent in it.

ex_run() {
	local regcost="$EX_BIN/06-mr-pool-regcost -s 64M --pages normal --large-count"
	# shellcheck disable=SC2086 # $regcost is a command and its options
	ex_command faults20 perf stat -x, -e page-faults -- $regcost 20
	# shellcheck disable=SC2086
	ex_command faults40 perf stat -x, -e page-faults -- $regcost 40
	# shellcheck disable=SC2086
	ex_command syscalls strace -c -f -- $regcost 20
}

ex_judge() {
	local f20 f40 top ioctl
	ex_need f20 faults20 '^([0-9]+),[^,]*,page-faults' "perf stat's page-faults line of the run with 20" || return
	ex_need f40 faults40 '^([0-9]+),[^,]*,page-faults' "perf stat's page-faults line of the run with 40" || return
	ex_expect faults20 '^64 MiB +normal +normal +20 ' "regcost timed 20 registrations of 64 MiB of normal pages"
	ex_expect syscalls '^% time +seconds +usecs/call +calls +errors +syscall' "strace -c counted the system calls"
	ex_all_ok || return
	# The first row after strace's dashes: the call that took the most time.
	ex_read syscalls
	local i seen=no
	# shellcheck disable=SC2154 # ex_lines: set by ex_read (lib.sh)
	for i in "${!ex_lines[@]}"; do
		if [[ "${ex_lines[i]}" =~ ^------ ]]; then
			[ "$seen" = yes ] && break
			seen=yes
			top=${ex_lines[i + 1]}
		fi
		[[ "${ex_lines[i]}" =~ \ ioctl$ ]] && ioctl=${ex_lines[i]}
	done
	echo "  (page faults: $f20 with 20 registrations, $f40 with 40;"
	echo "   strace's first row, the most time: ${top:-?}"
	echo "   and its ioctl row: ${ioctl:-none})"
	ex_ok "both runs were counted: 20 more registrations changed the page faults by $((f40 - f20)) in all"
	ex_choice "Which system call took the time, and what is it?" b \
		"b: ioctl() on /dev/infiniband/uverbs0 (RDMA_VERBS_IOCTL): rdma-core sends each ibv_reg_mr() and ibv_dereg_mr() to the kernel as one. With 30 pairs (10 untimed, 20 timed) that is 60 of strace's ioctl calls, plus a few for the pool and the window; in the lab one took 5 to 9 ms on average (usecs/call); the kernel pins every page, builds the device's table of them, and on deregistration unpins them. clock_gettime() is many calls of a few hundred microseconds under strace (the lab VM's clock is a system call) and munmap() few but long (giving 64 MiB back): look at usecs/call, not only at % time." \
		"clock_gettime(): it has the most calls" \
		"ioctl() on the uverbs device: each ibv_reg_mr() and ibv_dereg_mr() is one, and the kernel pins and unpins every page inside it" \
		"mmap(): the registration maps the memory again for the device" \
		"write(): every verb is a write() to the device's file"
	ex_number "How many page faults does one registration of touched memory take?" 0 2 \
		"None (0, give or take the program's start, which differs by a few dozen faults from run to run): the page faults come from touching the buffer before the first registration, one per 4 KiB page of it, and from the program's own start; 20 more registrations of the same memory add none. Pinning touched memory finds every page present: it takes a reference on each, and the device's table points at them. Memory that was never touched is another matter: the pinning itself must fault every page in (exercise 1)."
	ex_choice "regcost touched 64 MiB of 4 KiB pages. Where do the rest of the page faults come from?" c \
		"c: 64 MiB of 4 KiB pages is 16,384 faults for the buffer that is registered and deregistered; the pool's column touches its own 64 MiB (16,384 more), then the program's start (its libraries, its stack, the device's mappings) adds a few hundred: about 33,000 in the lab." \
		"from each registration, which faults a few pages in again" \
		"from the device, which faults on every DMA" \
		"a second 64 MiB buffer, the pool's, touched once, and the program's start"
}
