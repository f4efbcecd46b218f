#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds the fuzz targets with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer: each decoder's target with the one wire.c it
# fuzzes, and fuzz_aconn with the connection helper over a fake verbs layer.
#
#   build.sh SRCDIR OUTDIR CLANG [EXTRA_CFLAGS...]
set -eu
[ $# -ge 3 ] || { echo "usage: $0 SRCDIR OUTDIR CLANG [EXTRA_CFLAGS...]" >&2; exit 2; }
src=$1 out=$2 cc=$3
shift 3
extra="$*"
mkdir -p "$out"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -Wall -Wextra -Werror"
build() { # NAME CHAPTER_DIR WIRE_C
	# shellcheck disable=SC2086
	"$cc" $flags $extra -I"$src/$2" -I"$src/tests/fuzz" -I"$src/common" "$src/tests/fuzz/$1.c" \
		"$src/$2/$3" -o "$out/$1"
}
build fuzz_01_connect 01-connect wire.c
build fuzz_02_send_recv 02-send-recv wire.c
build fuzz_03_read_write 03-read-write wire.c
build fuzz_04_imm 04-imm wire.c
build fuzz_06_bench 06-mr-pool bench_wire.c

# The connection helper's state machine (fuzz_aconn.c): rex_aconn and
# rex_loop over a fake libibverbs and librdmacm (fake_verbs.c, fake_cm.c
# and fake_core.c, which define their functions: the real libraries are
# not linked). The helper's files are built with the clock, the timerfd
# and stderr renamed to the fake's: virtual time, so that a deadline passes
# in an instant and the same input always takes the same path, and no line
# per event.
aconn_objs="$out/fuzz_aconn.d"
mkdir -p "$aconn_objs"
for f in rex_aconn rex_aconn_books rex_aconn_devs rex_loop rex_loop_cq rex_cm rex_error; do
	# shellcheck disable=SC2086
	"$cc" $flags $extra -I"$src/common" \
		-Dclock_gettime=fuzz_clock_gettime -Dtimerfd_create=fuzz_timerfd_create \
		-Dtimerfd_settime=fuzz_timerfd_settime -Dwrite=fuzz_write -Dfprintf=fuzz_fprintf \
		-c "$src/common/$f.c" -o "$aconn_objs/$f.o"
done
# shellcheck disable=SC2086
"$cc" $flags $extra -I"$src/tests/fuzz" -I"$src/common" "$src/tests/fuzz/fuzz_aconn.c" \
	"$src/tests/fuzz/fake_verbs.c" "$src/tests/fuzz/fake_cm.c" "$src/tests/fuzz/fake_core.c" \
	"$aconn_objs"/*.o -o "$out/fuzz_aconn"
