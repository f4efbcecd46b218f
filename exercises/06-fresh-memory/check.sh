# shellcheck shell=bash
# 06-mr-pool, exercise 1: fresh memory (docs/06-mr-pool.md). The change:
# time_registration() in 06-mr-pool/regcost.c maps a new buffer for every
# pair, does not touch it, and times only ibv_reg_mr(). The run: regcost at
# 1 MiB of normal pages (50 timed pairs after 10 untimed), under perf stat
# (page faults the program took itself) inside exercises/rusage.py (minor
# faults in all, the kernel's on the program's behalf among them).

ex_run() {
	ex_command fresh "$EX_ROOT/exercises/rusage.py" perf stat -x, -e page-faults -- \
		"$EX_BIN/06-mr-pool-regcost" -s 1M -n 50 --pages normal
}

ex_judge() {
	local own all kernel pages=256 pairs=60 row f
	ex_need own fresh '^([0-9]+),[^,]*,page-faults' "perf stat's page-faults line" || return
	ex_need all fresh 'minor faults ([0-9]+)$' "rusage.py's line" || return
	row=$(ex_row fresh 1)
	if [ "$(ex_exit fresh)" = 0 ] && [ -n "$row" ]; then
		ex_ok "regcost ran to the end: $row"
	else
		ex_not_yet "regcost did not finish (it exited $(ex_exit fresh)): its lines are above"
		return
	fi
	kernel=$((all - own))
	echo "  (page faults the program took itself: $own; minor faults in all: $all;"
	echo "   so the kernel faulted $kernel pages in on its behalf; $pairs pairs of $pages pages each would be $((pairs * pages)))"
	if [ "$own" -ge $((pairs * pages * 8 / 10)) ]; then
		ex_ok "a fresh buffer for every pair: the program faulted about $((own / pairs)) pages a pair in itself"
		ex_not_yet "the program touches each fresh buffer (the first half of the exercise)" \
			"now stop touching it: map it and register it as it is"
		return
	fi
	if [ "$kernel" -lt $((pairs * pages * 8 / 10)) ]; then
		ex_not_yet "the registrations found their pages already there: the same memory, or memory touched before" \
			"in time_registration(), mmap() a new buffer for each pair (MADV_NOHUGEPAGE for 4 KiB pages), register it untouched, deregister and munmap() it"
		return
	fi
	ex_ok "every pair registered memory never touched: the kernel faulted about $((kernel / pairs)) pages a pair in for the registration"
	ex_number "How many pages did one registration of the fresh 1 MiB fault in?" 240 320 \
		"256: every 4 KiB page of the 1 MiB buffer, $kernel minor faults over $pairs registrations (10 untimed, 50 timed), which the program did not take itself (perf counted $own of its own). ibv_reg_mr() pins the pages it registers; a page never touched does not exist yet, so pinning it faults it in first."
	read -ra f <<<"$row"
	echo "  (the registration of 1 MiB never touched: median ${f[5]:-?} us in this run)"
	ex_choice "Why does registering untouched memory cost more than touched memory?" b \
		"b: in the lab, the shipped regcost took a median of 101 us at 1 MiB for a registration of touched memory and its undoing; with fresh memory the registration alone took 8,300 us, 80 times as long. Pinning untouched memory is a page fault for every page: the kernel allocates a page, zeroes it and maps it, then takes its reference, all inside ibv_reg_mr(); touched memory has its pages already, so pinning only takes the references and the device's table is built. A program that registers fresh memory pays the faults in the registration; one that registers memory it has used pays them before (in its first writes), which is why regcost touches its buffer first, and why a pool registered once pays them once." \
		"the device must copy untouched memory into its own before it can use it" \
		"the kernel must fault every page in (allocate, zero, map) before it can pin it; touched pages are only referenced" \
		"untouched memory is not pinnable, so the kernel retries until it is"
}
