# shellcheck shell=bash
# 03-read-write, part 3, exercise 1: many READs in flight
# (docs/03-read-write-wire.md). The change: 03's client takes -w, keeps up
# to -w READs in flight in its timed READ loop (initiator_depth -w, a send
# queue and CQ to hold them), and the server serves more than one at once
# (its responder_resources). The runs: 4 KiB, 2,000 of each operation, with
# -w 1, 8 and 16, each against a server of its own run with -v (its debug
# line says what the client asked for and what it serves).

ex_run() {
	local w
	for w in 1 8 16; do
		ex_pair "w$w" '@BIN@/03-read-write-server -a @ADDR@ -p @PORT@ -s 4K -v' \
			"@BIN@/03-read-write-client -a @ADDR@ -p @PORT@ -s 4K -n 2000 -w $w"
		# A client without -w: the other two runs would say the same.
		! ex_has "w$w" 'unknown option|invalid option' || break
	done
}

# mibs NAME: the read loop's MiB/s in run NAME.
mibs() { ex_value "$1" 'client: read: 2000 x 4096 bytes in [0-9.]+ s: ([0-9.]+) MiB/s'; }

ex_judge() {
	local w r1 r8 r16 asked served
	if ex_has w1 'unknown option|invalid option'; then
		ex_not_yet "the client does not take -w" \
			"add REX_OPT_WINDOW to the flags of its rex_options_spec (with a default of 1 and a .max_window), and use c->opts.window"
		return
	fi
	for w in 1 8 16; do
		if [ "$(ex_exit "w$w")" = 0 ] && ex_has "w$w" '^client: wrote 4096 bytes, read them back: intact$' &&
			[ -n "$(mibs "w$w")" ]; then
			ex_ok "-w $w: the data came back intact and the READ loop ran ($(mibs "w$w") MiB/s)"
		else
			ex_not_yet "-w $w: the pair did not run to the end (exit $(ex_exit "w$w")): its lines are above"
		fi
	done
	ex_all_ok || return
	asked=$(ex_value w8 'the client asks to have up to ([0-9]+) RDMA READs in flight')
	served=$(ex_value w8 'READs in flight; we serve ([0-9]+) at once')
	if [ "$asked" = 8 ]; then
		ex_ok "with -w 8 the client's connect request asked for 8 READs in flight (initiator_depth)"
	else
		ex_not_yet "with -w 8 the client asked for ${asked:-?} READs in flight, not 8" \
			"set c->attr.initiator_depth from -w in create_connection()"
	fi
	if [ -n "$served" ] && [ "$served" -gt 1 ]; then
		ex_ok "the server serves $served READs at once (responder_resources)"
	else
		ex_not_yet "the server serves ${served:-?} READ at a time: the client's window is cut to that" \
			"raise RESPONDER_RESOURCES in the server"
	fi
	ex_all_ok || return
	r1=$(mibs w1) r8=$(mibs w8) r16=$(mibs w16)
	echo "  (READ at 4 KiB: $r1 MiB/s with -w 1, $r8 with -w 8, $r16 with -w 16;" \
		"-w 16 asked for $(ex_value w16 'the client asks to have up to ([0-9]+) RDMA READs'), the server serves $(ex_value w16 'we serve ([0-9]+) at once'))"
	ex_choice "When the client asks for more READs in flight than the server serves, what happens?" b \
		"b: the CM agrees the number: the server's accept carries its responder_resources, and librdmacm sets the client's QP (its max_rd_atomic) to what was granted, not to what was asked. The client can still post its 16 READs: the device has no more than the grant outstanding at once, and the rest wait in the send queue, each going out as soon as one completes, without waiting for the program to notice. No error. Compare the three runs above (one lab run on a loaded host: 3.9, 4.7 and 5.7 MiB/s with -w 1, 8 and 16)." \
		"the connection is refused: the two numbers must match" \
		"the client's QP is set to what the server granted, so the extra READs wait in the client's send queue: no error" \
		"the server's device drops the extra READs and the client retries them until it gives up"
}
