# shellcheck shell=bash
# 06-mr-pool, exercise 4: too small a pool (docs/06-mr-pool.md). The change:
# time_pool() in 06-mr-pool/regcost.c makes a pool of one buffer, takes a
# second buffer before giving the first back, and prints rex_pool_stats()
# after its loop as "regcost: pool stats: count=N in_use=N high_water=N
# gets=N refused=N". The run: regcost at 4 KiB of normal pages, 10 timed
# batches of 1,000 gets after 10 untimed ones.

ex_run() {
	ex_command one "$EX_BIN/06-mr-pool-regcost" -s 4K -n 10 --pages normal
}

# stat NAME: the value of NAME= in the stats line ("" when missing).
stat() { ex_value one "regcost: pool stats:.*[ :]$1=([0-9]+)"; }

ex_judge() {
	local count high refused gets
	if ! ex_has one '^regcost: pool stats: '; then
		ex_not_yet "regcost printed no 'regcost: pool stats: ...' line" \
			"after the loop of time_pool(), call rex_pool_stats() and print count, in_use, high_water, gets and refused as NAME=VALUE"
		return
	fi
	count=$(stat count) high=$(stat high_water) refused=$(stat refused) gets=$(stat gets)
	echo "  (the pool: count ${count:-?}, high_water ${high:-?}, gets ${gets:-?}, refused ${refused:-?})"
	if [ "$count" = 1 ]; then
		ex_ok "a pool of one buffer"
	else
		ex_not_yet "the pool has ${count:-?} buffers, not 1" "set attr.count = 1 in time_pool(), in place of the lines that compute it"
	fi
	if [ -n "$refused" ] && [ "$refused" -gt 0 ]; then
		ex_ok "the pool refused $refused gets: the second buffer was asked for while the first was out"
	else
		ex_not_yet "the pool refused no get" "in the inner loop, call rex_pool_get() a second time before rex_pool_put() gives the first back"
	fi
	if [ "$(ex_exit one)" = 0 ] && ex_has one '^4 KiB +normal '; then
		ex_ok "regcost ran to the end and printed its row: an empty pool is not an error"
	else
		ex_not_yet "regcost did not finish (it exited $(ex_exit one)): a NULL from rex_pool_get() is back-pressure, handle it and go on"
	fi
	ex_all_ok || return
	ex_choice "What does rex_pool_get() return when every buffer is out?" c \
		"c: NULL, and nothing else: no message, errno untouched, the pool unchanged but for its refused count. An empty pool is back-pressure, not an error (rex_pool.h): the program posts nothing more until completions bring buffers back, then asks again. A helper that printed or failed here would turn a busy moment into an error." \
		"a buffer already in use, shared" \
		"NULL with errno ENOMEM, and a message on stderr" \
		"NULL, with no message: back-pressure, counted in the pool's refused" \
		"it waits until a buffer is put back"
	ex_number "How many gets did the pool refuse in the whole run?" "$refused" "$refused" \
		"Read it off the stats line: every second get was refused, one for each of the 1,000 gets of a batch, in 20 batches (10 untimed, 10 timed): 20000. The first get of each pair took the one buffer (gets counts those), and high_water stayed 1: never more than one buffer out at once."
	ex_choice "How could a program use high_water and refused to size its pool?" b \
		"b: run the real load and read the stats: high_water is the most buffers that were ever out at once, what the load really needed; refused counts the moments it wanted more than the pool had (each one a stall, a message that waited). Size the pool at least to high_water under the heaviest load you expect, with a margin, and treat a growing refused as a sign to enlarge it (or to post less at a time). A pool much larger than high_water pins memory for nothing." \
		"make the pool refused times larger than it is" \
		"size it to at least the high_water seen under the heaviest load, and watch refused: more than 0 means the load wanted more buffers than there were" \
		"they are only for debugging: size pools to the device's maximum"
}
