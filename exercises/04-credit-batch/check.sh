# shellcheck shell=bash
# 04-imm, exercise 1: the batch size (docs/04-imm.md). The change, last of
# the two the page asks for: CREDIT_BATCH_DIVISOR 1 in 04-imm/server.c, so
# that slots go back only when the whole ring (16 slots) waits for them. The
# run: the page's, 20,000 messages of 64 bytes. The check reads the batch
# the server says it used, the credits both sides counted and messages/s.

ex_run() {
	ex_pair batch '@BIN@/04-imm-server -a @ADDR@ -p @PORT@' '@BIN@/04-imm-client -a @ADDR@ -p @PORT@ -s 64 -n 20000'
}

ex_judge() {
	local batch sent came rate
	ex_expect batch '^client: 20000 messages of 64 bytes in ' "the client's 20,000 messages were written"
	ex_expect batch '^server: done: 1 client served, 0 failed$' "the server checked every message and served its client"
	ex_need batch batch 'returning [0-9]+ slots in batches of ([0-9]+) or more' "the server's line on the credits it sent" || return
	ex_need sent batch 'server: ([0-9]+) credits? sent' "the server's count of credits" || return
	ex_need came batch 'client: ([0-9]+) credits? came back' "the client's count of credits" || return
	rate=$(ex_value batch ': ([0-9]+) messages/s')
	ex_all_ok || return
	echo "  (batches of $batch or more: the server sent $sent credits, the client took $came; ${rate:-?} messages/s)"
	case $batch in
	16) ex_ok "slots went back only when all 16 of the ring were waiting" ;;
	1) ex_not_yet "the server returned slots one at a time (CREDIT_BATCH_DIVISOR 16): the first half of the exercise" \
		"note its credits and messages/s, then set CREDIT_BATCH_DIVISOR to 1, rebuild and check again"
		return ;;
	*) ex_not_yet "the server returned slots in batches of $batch: CREDIT_BATCH_DIVISOR is not 1" \
		"set it to 16, then to 1, in 04-imm/server.c, rebuilding each time"
		return ;;
	esac
	ex_number "How many credits did the server send for the 20,000 messages?" "$sent" "$sent" \
		"Read it off the server's last lines: $sent. With the whole ring as one batch that is 20,000 / 16 = 1,250, each credit giving back all 16 slots at once."
	ex_choice "With CREDIT_BATCH_DIVISOR 16 the server said 'in batches of 1 or more'. Did it send a credit for every message?" c \
		"c: no. return_credits() gives back every slot that waits when it runs, at least the batch: when the server is behind, several slots wait, and one credit returns them all. In three lab runs with 16 it sent 1,491, 2,300 and 2,988 credits for 20,000 messages (with 4: 1,313 to 1,649; with 1: 1,250 each time). The batch is a minimum, and the busier the server, the larger its real batches." \
		"yes: 20,000 credits, one a slot" \
		"yes, except the last few, which went back with the disconnect" \
		"no: each credit returns every slot waiting at that moment, at least one, so far fewer than 20,000"
	ex_choice "At 64 bytes on Soft-RoCE, which cost more: the extra SENDs (divisor 16) or the waits for a whole ring (divisor 1)?" b \
		"b: neither could be told apart here. Three lab runs of each, alternated, gave 4,206, 4,846 and 5,436 messages/s with 16; 3,859, 4,862 and 5,721 with 4; 4,200, 4,780 and 3,415 with 1: the spread from run to run is larger than any difference. Credits are one SEND for every 7 to 16 messages, and each 64-byte message costs the writer a WRITE WITH IMM and the server a completion, a check and a receive posted again: the per-message work sets the rate. At 64 KiB (-s 64K -n 3000, three runs each on a loaded host) it was no clearer: 220, 245 and 190 messages/s with 16; 217, 214 and 166 with 4; 215, 193 and 145 with 1. On this lab neither the extra SENDs nor the waits for a whole ring could be told apart from the spread." \
		"the extra SENDs: every credit is a system call on each side" \
		"neither shows above the spread between runs: the per-message work sets the rate at 64 bytes" \
		"the waits: with a whole ring as one batch the writer stops every 16 messages"
}
