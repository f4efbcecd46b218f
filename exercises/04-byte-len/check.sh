# shellcheck shell=bash
# 04-imm, part 3, exercise 1: check byte_len too (docs/04-imm-speed.md).
# The server also refuses a WRITE WITH IMM whose byte_len differs from the
# length in its immediate. Seen from outside: the pair still runs to the
# end (on this kernel byte_len is the WRITE's length), and a client whose
# WRITE WITH IMM carries 8 bytes of a message it wrote whole before, by a
# plain WRITE (tamper-client --tamper byte-len: the slot holds the message
# intact and the immediate is right), is cut off.

ex_run() {
	ex_pair pair '@BIN@/04-imm-server -a @ADDR@ -p @PORT@' '@BIN@/04-imm-client -a @ADDR@ -p @PORT@ -n 500'
	ex_pair short '@BIN@/04-imm-server -a @ADDR@ -p @PORT@' \
		"$(ex_prog 04-imm-tamper-client) -a @ADDR@ -p @PORT@ -s 64K --tamper byte-len"
}

ex_judge() {
	ex_expect pair '^server: done: 1 client served, 0 failed$' \
		"the client's 500 messages still pass: on this kernel byte_len is each WRITE's length" \
		"your check refuses honest messages: print byte_len and the immediate's length side by side"
	if ex_has short '^server: done: 1 client served, 1 failed$'; then
		ex_ok "a WRITE WITH IMM of 8 bytes whose immediate names the whole message was refused"
	elif ex_has short '^server: done: 1 client served, 0 failed$'; then
		ex_not_yet "the server took a WRITE WITH IMM that carried 8 bytes for a message of 65536: the slot was intact, and nothing else looked" \
			"compare wc->byte_len with the immediate's length in consume_slot(), and refuse a difference as the other checks do"
	else
		ex_not_yet "the run with tamper-client --tamper byte-len did not end as either (its lines are above)"
	fi
	ex_all_ok || return
	ex_choice "rxe put 0 in byte_len for a WRITE WITH IMM before Linux commit bdce1290. What would your check do on such a kernel?" b \
		"b: every WRITE WITH IMM with data would have byte_len 0 and an immediate naming its length, so the server would refuse the first message of every client; only the empty doorbells would pass. A check that rests on a value the API does not define is right on the kernels whose source you read, and wrong elsewhere." \
		"nothing different: byte_len is defined by verbs for every receive" \
		"refuse the first message of every client (all but empty ones): the server would serve nobody" \
		"take every message, since 0 means 'unknown'"
	ex_choice "Why does the server check the immediate first, and byte_len only after?" c \
		"c: verbs defines imm_data whenever IBV_WC_WITH_IMM is set, and the immediate is what says where to read; byte_len for this opcode is whatever the device puts there (rxe's source since 2019; mlx5 copies the adapter's count), which ibv_poll_cq(3) does not promise. Rely first on what the API guarantees; treat byte_len as a second, device-specific check (or leave it alone, as the chapter does)." \
		"byte_len is slower to read" \
		"the immediate cannot be wrong" \
		"the immediate is defined by verbs whenever IBV_WC_WITH_IMM is set, and names the slot; byte_len for a WRITE WITH IMM is only what this device puts there"
}
