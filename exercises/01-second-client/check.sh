# shellcheck shell=bash
# 01-connect, exercise 2: a second client (docs/01-connect.md), rewritten to
# be checked: watch two clients meet a server that serves one, then give the
# server -c N, one client after another, so that both are served.

two_clients='@BIN@/01-connect-client -a @ADDR@ -p @PORT@ & @BIN@/01-connect-client -a @ADDR@ -p @PORT@; wait'

ex_run() {
	ex_pair one '@BIN@/01-connect-server -a @ADDR@ -p @PORT@' "$two_clients"
	ex_pair two '@BIN@/01-connect-server -a @ADDR@ -p @PORT@ -c 2' "$two_clients"
}

ex_judge() {
	local n
	n=$(ex_count one '^client: connected: ')
	if [ "$n" = 1 ] && ex_has one 'got RDMA_CM_EVENT_REJECTED'; then
		ex_ok "with one client to serve, one client connected and the other was rejected"
	else
		ex_not_yet "with the server's default (one client), one client should connect and the other be rejected (saw $n connected)"
	fi
	n=$(ex_count two '^client: disconnected$')
	if [ "$n" = 2 ]; then
		ex_ok "with -c 2, both clients connected and disconnected"
	else
		ex_not_yet "with -c 2, both clients should be served one after the other ($n of 2 disconnected cleanly)" \
			"give the server -c CLIENTS (REX_OPT_CLIENTS) and serve that many, keeping the listener between them"
	fi
	if [ "$(ex_exit two)" = 0 ]; then
		ex_ok "the pair with -c 2 exits 0"
	else
		ex_not_yet "the pair with -c 2 exited $(ex_exit two), not 0 (see its last lines)"
	fi
	n=$(ex_count two '^server: connect request from ')
	if [ "$n" = 2 ]; then
		ex_ok "the server took both connect requests, one after the other"
	else
		ex_not_yet "the server should print two 'connect request from' lines with -c 2 (printed $n)"
	fi
	ex_all_ok || return
	ex_choice "With one client to serve, what ended the other client's attempt, and who sent it?" b \
		"b: the server's program never saw that request: it read one CONNECT_REQUEST and stopped reading its listener. A request still waiting when the listener is destroyed is rejected by the server's CM on the program's behalf (status 28, consumer defined); a request (or the CM's resend of it) that arrives when nothing listens any more gets status 8, invalid service ID. Which one you see depends on timing, so it does not end the same way every time. A server that wants to refuse clients politely has to read them and call rdma_reject() itself, with a reason in the private data, as 02's does." \
		"the server's program rejected it with rdma_reject()" \
		"a reject from the server's CM, not its program: status 28 when the listener was destroyed with the request waiting, or 8 when nothing listened any more" \
		"its own CM gave up waiting, after a timeout"
}
