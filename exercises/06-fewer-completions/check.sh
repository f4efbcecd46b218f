# shellcheck shell=bash
# 06-mr-pool, part 2, exercise 2: fewer completions
# (docs/06-mr-pool-bench.md). A measure exercise: WRITE bandwidth at 4 KiB
# with -Q 1 (every work request signalled) and -Q 100, each with -v, whose
# last line counts the completions the client took.

ex_run() {
	ex_bench Q1 '-o write -s 4K -Q 1'
	ex_bench Q100 '-o write -s 4K -Q 100'
}

ex_judge() {
	ex_bench_bw 4096 Q1 "-Q 1  " Q100 "-Q 100" || return
	ex_fewer Q1 Q100 'calls; ([0-9]+) completions taken' 10 "completions taken" || return
	ex_choice "Why must the last work request of a run always be signalled?" a \
		"a: a send queue completes in order, so a signalled completion says that every work request before it is done as well. The run's last one is the last chance to hear that: unsignalled, the client would never learn that the tail of its run was done, could not stop the clock, and could not reuse (or free) the buffers those work requests read." \
		"its completion is the only news that the work requests before it, unsignalled, are done too: without it the run's tail is never known to be done" \
		"the device drops unsignalled work requests at the end of a queue" \
		"the server counts the signalled ones to check the data"
	ex_choice "stop_qp() in common/rex_aconn.c posts a drain marker, a signalled work request, when a connection closes. What would a closing connection lose without it?" c \
		"c: a connection that closes moves its QP to the error state, and whatever is still in the send queue completes as flushed; but unsignalled work requests say nothing when they complete, flushed or not. The marker is signalled and goes last: its completion (or its flush) says every send before it is finished, so the helper can release the memory they read. Without it, the helper would have to guess, and memory freed under a device that still reads it is corrupted memory." \
		"the server's last answer" \
		"nothing: the QP in the error state completes everything at once" \
		"the proof that its unsignalled sends are finished, so that their memory can be released safely"
}
