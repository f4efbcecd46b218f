# shellcheck shell=bash
# 06-mr-pool, part 2, exercise 1: one doorbell or many
# (docs/06-mr-pool-bench.md). A measure exercise: the benchmark's WRITE
# bandwidth run at 64 bytes with -l 1 (one ibv_post_send() a work request)
# and -l 128 (up to 128 chained), each with -v, whose last line counts the
# work requests and the ibv_post_send() calls that posted them.

ex_run() {
	ex_bench l1 '-o write -s 64 -t 128 -Q 16 -l 1'
	ex_bench l128 '-o write -s 64 -t 128 -Q 16 -l 128'
}

ex_judge() {
	ex_bench_bw 64 l1 "-l 1  " l128 "-l 128" || return
	ex_fewer l1 l128 'work requests posted in ([0-9]+) ibv_post_send' 4 "ibv_post_send() calls" || return
	ex_choice "With -l 128 a call carried about 16 work requests, not 128. Why?" b \
		"b: only the first post can fill the whole window. After it, the client posts again as completions free room, and with -Q 16 a completion frees 16 work requests at a time: the chain is as long as the room. -l is the longest chain allowed, not the length of every chain." \
		"the device refuses chains longer than 16" \
		"after the first post, the window refills as completions free room, and with -Q 16 one completion frees 16" \
		"the client splits every chain into pieces of 16"
	ex_choice "On Soft-RoCE a doorbell is a system call. On a NIC, what does one doorbell for 16 work requests save?" c \
		"c: on a NIC ibv_post_send() writes the work requests into a queue in memory and rings the doorbell, an uncached write to the device's registers, after which the device fetches them by DMA. A chain is one doorbell for all of them, which matters at millions of messages a second. On Soft-RoCE each ibv_post_send() enters the kernel, whose rxe then does each packet's work: compare the two runs' system CPU and MsgRate above. In three runs on a loaded host, -l 128 had 1.3, 1.7 and 0.87 times the MsgRate of -l 1: the per-packet work in the kernel, not the doorbell, sets the rate here, and one pair of runs cannot tell them apart." \
		"nothing: a NIC posts work requests one by one anyway" \
		"the DMA of the data, which a chain sends once" \
		"the writes to the device's doorbell register, uncached and slow, one for the chain instead of one each"
}
