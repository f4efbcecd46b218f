# shellcheck shell=bash
# 01-connect, exercise 1: who answers the disconnect? (docs/01-connect.md)
# The break: the server sleeps 3 s where it called rdma_disconnect(). Its CM
# answers the client's DREQ only when the program calls rdma_disconnect()
# or destroys the id, so the client's wait for DISCONNECTED (2 s) runs out.

ex_run() {
	ex_pair pair '@BIN@/01-connect-server -a @ADDR@ -p @PORT@' '@BIN@/01-connect-client -a @ADDR@ -p @PORT@'
}

ex_judge() {
	ex_expect pair '^client: connected: ' "the client connected"
	if ex_has pair '^client: disconnected$'; then
		ex_not_yet "the client still got its DISCONNECTED at once: the server answers its DREQ" \
			"replace the rdma_disconnect() block of the server's wait_for_disconnect() with sleep(3) and rebuild"
		return
	fi
	ex_expect pair 'no RDMA_CM_EVENT_DISCONNECTED within 2000 ms' \
		"the client gave up waiting for DISCONNECTED: nobody answered its DREQ"
	ex_expect pair '^server: client disconnected$' "the server saw the client's DREQ (as DISCONNECTED)"
	ex_all_ok || return
	local waited
	waited=$(ex_since pair '^client: connected: ' 'no RDMA_CM_EVENT_DISCONNECTED')
	echo "  (in this run: ${waited} s from the client's \"connected\" line to the one that gave up)"
	ex_number "After about how many seconds did the client give up waiting for DISCONNECTED?" 1.5 3.5 \
		"About 2 s: 01's client waits 2000 ms for DISCONNECTED after its rdma_disconnect() (the CM's own DREQ retries would take far longer), prints that it did not come, and tears down anyway. Under the lab's emulated CPU the stamps add a few tenths."
	ex_choice "When does the server's CM send the DREP that answers the client's DREQ now?" b \
		"b: the CM hands the DREQ to the program as DISCONNECTED and waits for it: the DREP goes out when the program calls rdma_disconnect() or destroys the id, here after the 3 s sleep, when the client had already given up. That is why the real server calls rdma_disconnect() at once: it is the answer the client waits for. Put the call back: scripts/exercise reset 01-disconnect." \
		"at once, when the DREQ arrives: the kernel answers by itself" \
		"only when the server's program calls rdma_disconnect() or destroys its id: here after the sleep, too late for the client" \
		"never: a DREQ needs no answer, the client just waits out its timeout"
}
