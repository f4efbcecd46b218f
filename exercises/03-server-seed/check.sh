# shellcheck shell=bash
# 03-read-write, exercise 2: check without trusting "done"
# (docs/03-read-write.md). The server chooses the pattern's seed and sends
# it in the descriptor; the client writes that pattern. Seen from outside:
# the pair still works, and a client that writes a pattern of its own and
# names its seed in "done" (tamper-client --tamper own-seed: the data is
# intact for the seed it names) is refused. The descriptor's unit test
# passes with the new field.

ex_run() {
	ex_pair pair '@BIN@/03-read-write-server -a @ADDR@ -p @PORT@ -s 64K' \
		'@BIN@/03-read-write-client -a @ADDR@ -p @PORT@ -s 64K -n 1'
	ex_pair own '@BIN@/03-read-write-server -a @ADDR@ -p @PORT@ -s 64K' \
		'@BIN@/03-read-write-tamper-client -a @ADDR@ -p @PORT@ -s 64K --tamper own-seed'
	ex_command unit "$(ex_prog test_03_read_write_descriptor)"
}

ex_judge() {
	ex_expect pair '^server: 65536 bytes arrived intact$' "the client's data arrived intact: it wrote the pattern the server checks" \
		"the client must write the pattern of the seed in the server's descriptor"
	if [ "$(ex_exit unit)" = 0 ]; then
		ex_ok "the descriptor's unit test passes"
	else
		ex_not_yet "the descriptor's unit test fails (its lines are above)" \
			"tests/03-read-write/test_descriptor.c: expect the new field's bytes, and its round trip"
	fi
	if ex_has own '^server: data damaged: byte [0-9]+ '; then
		ex_ok "a client that wrote a pattern of its own choosing, and named its seed in 'done', was refused"
	elif ex_has own '^server: 65536 bytes arrived intact$'; then
		ex_not_yet "the server took a pattern the client chose: it checks the seed named in 'done'" \
			"choose the seed in the server, send it in the descriptor, and check the data against it"
	else
		ex_not_yet "the run with tamper-client --tamper own-seed did not end as either (its lines are above)"
	fi
	ex_all_ok || return
	ex_choice "Why should the server, not the client, choose the pattern it checks?" c \
		"c: a check whose expected answer comes from the party being checked proves only that the party is consistent with itself. With the seed in 'done', a client that wrote anything at all, for instance data of an earlier run or of another client, can name a seed that matches it. With the seed chosen by the server, new for each client, only a client that wrote what this server asked for passes. The same holds of any proof of work: the verifier picks the challenge." \
		"the client's clock is less random than the server's" \
		"so the seed does not travel in 'done', which saves four bytes" \
		"a check whose answer the checked party names proves nothing: a client could write any data and name a seed to match; the server's own seed, new for each client, cannot be matched without writing what it asked for"
}
