# shellcheck shell=bash
# 01-connect, part 2, exercise 2: padding (docs/01-connect-greeting.md).
# The break: greeting_decode() insists on exactly 32 bytes. On RoCE the CM
# hands the server 56 bytes (a REQ's private data, padded): the unit test
# that feeds it padded greetings fails, and the server refuses every client.

ex_run() {
	ex_command unit "$(ex_prog test_01_connect_greeting)"
	ex_pair pair '@BIN@/01-connect-server -a @ADDR@ -p @PORT@ -v' '@BIN@/01-connect-client -a @ADDR@ -p @PORT@ -v'
}

ex_judge() {
	if [ "$(ex_exit unit)" = 0 ]; then
		ex_not_yet "the unit test 01-connect.greeting still passes: greeting_decode() still takes a padded greeting" \
			"make its length test refuse anything but exactly GREETING_WIRE_SIZE bytes, and rebuild"
		return
	fi
	ex_ok "the unit test 01-connect.greeting fails now (it feeds greeting_decode() padded greetings)"
	ex_expect pair 'server: rejecting .*: bad greeting' \
		"the server refused the client's greeting" \
		"the pair should fail too: did the server's greeting_decode() change? (rebuild both)"
	ex_expect pair 'CONNECT_REQUEST carried [0-9]+ bytes of private data' \
		"the server's -v line says how many bytes its connect request carried"
	ex_all_ok || return
	ex_number "How many bytes of private data did the server's connect request carry (the client sent 32)?" 56 56 \
		"56: on InfiniBand and RoCE a connect request (REQ) has a private data field of fixed size, 92 bytes, of which rdma_cm keeps 36 for its own header (the addresses and ports); the 56 left go on the wire whole, the unused ones as zeros. The server cannot tell the client's 32 from the padding by the length: only the greeting's own layout (its magic, version and text) can. An accept's reply is padded the same way, to 196."
	ex_choice "Why can a decoder not insist on the exact length it sent?" b \
		"b: the length the receiver sees is the CM's field's, not the sender's: decode what you expect from the start and ignore the rest (the real greeting_decode() refuses only what is too short). On iWARP the private data travels in the MPA frames with its real length, which is why the same check can pass there and fail on RoCE. Put it back: scripts/exercise reset 01-padding." \
		"the client's library pads every message to 8 bytes" \
		"the CM's messages carry a fixed-size private data field on RoCE (56 bytes in a connect request): the rest is padding" \
		"the kernel adds a checksum after the data"
}
