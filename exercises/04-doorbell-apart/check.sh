# shellcheck shell=bash
# 04-imm, part 3, exercise 2: data and doorbell apart
# (docs/04-imm-speed.md). The client posts each message as a plain RDMA
# WRITE and, chained behind it, a zero-length WRITE WITH IMM for the same
# slot. Seen from the server (its -v completion lines): every WRITE WITH IMM
# reports byte_len 0, and every message is still intact where the
# immediate says.

ex_run() {
	ex_pair apart '@BIN@/04-imm-server -a @ADDR@ -p @PORT@ -v' '@BIN@/04-imm-client -a @ADDR@ -p @PORT@ -s 4K -n 300'
}

ex_judge() {
	ex_expect apart '^server: done: 1 client served, 0 failed$' "the server found all 300 messages intact, where each immediate said" \
		"the lines above say which message was not"
	local empty full
	empty=$(ex_count apart 'completion: IBV_WC_RECV_RDMA_WITH_IMM, .*byte_len 0,')
	full=$(ex_count apart 'completion: IBV_WC_RECV_RDMA_WITH_IMM, .*byte_len 4096,')
	echo "  (the server's WRITE WITH IMM completions: $empty with byte_len 0, $full with byte_len 4096)"
	if [ "$empty" -ge 300 ] && [ "$full" -eq 0 ]; then
		ex_ok "every WRITE WITH IMM carried no data: the data came by the plain WRITE before it"
	else
		ex_not_yet "$full of the server's WRITE WITH IMM completions carried the 4096 bytes themselves" \
			"post a plain IBV_WR_RDMA_WRITE of the data, then, chained (wr.next), a WRITE WITH IMM with no scatter/gather entry"
	fi
	ex_all_ok || return
	echo "  ($(ex_value apart 'client: ([0-9]+ messages of 4096 bytes in [0-9.]+ s: [0-9]+ messages/s)'); compare with the client as shipped)"
	ex_choice "What does the second work request cost, and why does the data arrive before the doorbell?" a \
		"a: each message is now two RDMA operations, so the device builds and sends one more packet (its headers and an acknowledgement's worth of work) for every message, and on a NIC fetches one more work request; the CPU pays nothing more, since one ibv_post_send() posts both and only the doorbell is signalled. RC executes a QP's operations in order at the responder, so the WRITE's data is in the slot before the WRITE WITH IMM's completion is. The gain: the data could come from several places (more WRITEs) under one doorbell." \
		"one more packet and one more work request for the device each message, no more CPU (one ibv_post_send(), one completion); RC executes them in order, so the data is there before the immediate" \
		"twice the CPU: every work request is a system call and a completion" \
		"nothing: the two are merged into one packet"
}
