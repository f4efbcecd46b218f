# shellcheck shell=bash
# 05-async, exercise 2: one doorbell for the window (docs/05-async.md). The
# message layer posts the messages that wait for credits as one chain, one
# ibv_post_send() for many. The client's -v line counts its sends and the
# ibv_post_send() calls that posted them (rex_svc_conn_counts()): one call
# a message as shipped, far fewer chained. The window (64) is larger than
# the server's credits (16), so messages wait for credits; a batch of
# echoes brings several back, and, pumped once after the batch, the
# messages they let go leave as one chain.

ex_run() {
	ex_pair window --stop '@BIN@/05-async-server -a @ADDR@ -p @PORT@' \
		'@BIN@/05-async-client -a @ADDR@ -p @PORT@ -q 8 -w 64 -n 2000 -v'
}

ex_judge() {
	ex_expect window '^client: done: 8 connections, 0 failed$' "8 connections did their 2000 messages each and closed" \
		"the lines above say which connection failed, and why"
	local sends calls
	ex_need sends window 'client: debug: ([0-9]+) sends posted in [0-9]+ ibv_post_send' \
		"the client's -v line about its sends" || return
	calls=$(ex_value window 'sends posted in ([0-9]+) ibv_post_send')
	echo "  (the client posted $sends sends in $calls ibv_post_send() calls; $(ex_value window 'intact in [0-9.]+ s: ([0-9]+ messages/s)'))"
	if [ "$calls" -gt 0 ] && [ $((sends / calls)) -ge 2 ]; then
		ex_ok "$sends sends in $calls calls: about $((sends / calls)) a doorbell"
	else
		ex_not_yet "$sends sends in $calls calls: still one ibv_post_send() a message" \
			"chain the waiting messages in rex_svc_msgs_pump(), and pump once after a batch of completions, not at each rex_svc_send() (scripts/exercise hint 05-one-doorbell)"
	fi
	ex_all_ok || return
	ex_choice "rex_aconn_post_send() posts a chain and ibv_post_send() fails at its third work request (bad_wr). What does the helper do with the first two?" b \
		"b: the device took the work requests before bad_wr: they will complete (or be flushed), so the helper counts them as posted, and its drain waits for them; bad_wr and what follows never reached the queue. A caller that took the whole chain back would reuse buffers the device still reads. Here the message layer then closes the connection: a post that fails for another reason than a full queue is a broken QP." \
		"nothing: a failed ibv_post_send() posts nothing, so all three are the caller's again" \
		"counts them as posted and outstanding: the device has them, and they will complete or be flushed; only bad_wr and those after it were not posted" \
		"posts them again with the rest of the chain"
	echo "  Compare the messages/s above with the code as shipped (scripts/exercise reset 05-one-doorbell, then"
	echo "  the same client): on Soft-RoCE a doorbell is a system call, but the kernel's work for each packet"
	echo "  costs more; on a NIC it is a write to the device's memory, and a chain saves those writes."
}
