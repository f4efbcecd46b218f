# shellcheck shell=bash
# 01-connect, part 2, exercise 1: versions (docs/01-connect-greeting.md).
# The server accepts greeting versions 1 and 2 and answers each client in
# its own version: 01-connect-client (version 1) and 01-connect-client-v2.

ex_run() {
	ex_pair v2 '@BIN@/01-connect-server -a @ADDR@ -p @PORT@' '@BIN@/01-connect-client-v2 -a @ADDR@ -p @PORT@'
	ex_pair v1 '@BIN@/01-connect-server -a @ADDR@ -p @PORT@' '@BIN@/01-connect-client -a @ADDR@ -p @PORT@'
}

ex_judge() {
	ex_expect v2 '^client: connecting from .* with greeting: version 2 ' \
		"01-connect-client-v2 speaks version 2" \
		"it should: it is client.c built with GREETING_VERSION 2; did wire.h stop honouring -DGREETING_VERSION?"
	ex_expect v2 '^server: greeting from client: version 2 ' \
		"the server accepts a version-2 greeting" \
		"greeting_decode() in wire.c still refuses it (see the server's 'rejecting' line)"
	ex_expect v2 '^client: connected: server says version 2 ' \
		"the server answers a version-2 client in version 2" \
		"accept_client() should answer in the version the client spoke"
	ex_expect v2 '^client: disconnected$' "the version-2 client's connection ends cleanly"
	ex_expect v1 '^client: connected: server says version 1 ' \
		"a version-1 client still connects, and is answered in version 1" \
		"01-connect-client should still speak version 1 (keep GREETING_VERSION 1 in wire.h), and be answered in it"
	ex_expect v1 '^client: disconnected$' "the version-1 client's connection ends cleanly"
	ex_all_ok || return
	ex_choice "Where would a version-2 greeting put a new field?" b \
		"b: version 1's fields fill bytes 0 to 31. A connect request carries at most 56 bytes of private data on RoCE (the accept 196), so a version-2 greeting can grow into bytes 32 to 55: a version-1 decoder reads 32 bytes and never looks further (the padding exercise shows why it must not). The version field tells the reader whether those bytes mean anything." \
		"anywhere after byte 32: private data can be as long as the program likes" \
		"in bytes 32 to 55: after version 1's fields, within the 56 bytes a connect request carries" \
		"in the text field, shortening the text"
}
