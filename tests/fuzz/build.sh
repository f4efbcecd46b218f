#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds the fuzz targets with clang's libFuzzer, AddressSanitizer and
# UndefinedBehaviorSanitizer: each target with the one wire.c it fuzzes.
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
