# shellcheck shell=bash
# 06-mr-pool, exercise 3: size classes (docs/06-mr-pool.md). The learner
# writes exercises/06-size-classes/my_pools.c (the interface is my_pools.h);
# the program exercise-06-size-classes (test.c) tries it on the lab's device:
# three pools of two buffers each, gets that fit each class exactly and by a
# byte, gets that fall back when a class runs dry, a get too large, every
# buffer put back into its own pool, and nothing left registered.

ex_run() {
	ex_command classes "$(ex_prog exercise-06-size-classes)"
}

ex_judge() {
	local l
	ex_read classes
	# shellcheck disable=SC2154 # ex_lines: set by ex_read (lib.sh)
	for l in "${ex_lines[@]}"; do
		case $l in
		"size-classes: ok: "*) ex_ok "${l#size-classes: ok: }" ;;
		"size-classes: not yet: "*) ex_not_yet "${l#size-classes: not yet: }" ;;
		esac
	done
	if ! ex_has classes '^size-classes: [0-9]+ of [0-9]+ passed$'; then
		ex_not_yet "the program did not finish (it exited $(ex_exit classes)): its lines are above"
	elif [ "$(ex_exit classes)" != 0 ]; then
		ex_not_yet "$(ex_value classes 'size-classes: ([0-9]+ of [0-9]+) passed') cases passed" \
			"my_pools.h says what each function must do; scripts/exercise hint 06-size-classes"
	fi
	ex_all_ok || return
	ex_choice "What must my_put() know to give a buffer back to the right pool, and where does it find it without a search?" b \
		"b: its class, and every struct rex_pool_buf carries it: b->size is the buffer size of the pool it came from, which names the class (here 4 KiB << 4*i, so even the index follows from it). Nothing needs to be looked up by address. A pool whose buffers were all the same size would need another way: a wr_id that carries the class beside b->index, say, which is what a completion gives back." \
		"the buffer's address: compare it with each pool's region until one contains it" \
		"its class, which b->size says: every buffer records the buffer size of its pool" \
		"nothing: rex_pool_put() accepts any pool's buffer"
}
