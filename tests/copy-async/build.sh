#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Builds the copy test of common/'s asynchronous half as an engineer who
# copied it would: the files common/rex_svc.h says to copy, and the two
# programs, alone in an empty directory, compiled with a plain command line
# (no CMake, no -D flags, no include path into this project).
#
#   build.sh SRCDIR OUTDIR CC [EXTRA_CFLAGS...]
#
# SRCDIR is the repository; the programs land in OUTDIR as
# aconn-square-server and aconn-square-client.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 SRCDIR OUTDIR CC [EXTRA_CFLAGS...]" >&2; exit 2; }
src=$1 out=$2 cc=$3
shift 3
dir=$(mktemp -d "${TMPDIR:-/tmp}/copy-async.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
# Exactly the lists of rex_svc.h and rex_aconn.h's last paragraphs.
for f in rex_svc.c rex_svc_wr.c rex_svc_msg.c rex_svc_srq.c rex_svc_priv.h rex_svc.h rex_wire.h \
	rex_srq.c rex_srq.h rex_pool.c rex_pool.h \
	rex_aconn.c rex_aconn_devs.c rex_aconn_books.c rex_aconn_priv.h rex_aconn.h \
	rex_loop.c rex_loop_cq.c rex_loop.h rex_cm.c rex_cm.h rex_buffers.c rex_buffers.h rex_error.c rex_error.h; do
	cp "$src/common/$f" "$dir/"
done
# The programs, and the server's libevent glue (evloop.c, libevent-dev).
cp "$src/tests/copy-async/server.c" "$src/tests/copy-async/client.c" \
	"$src/tests/copy-async/evloop.c" "$dir/"
cd "$dir"
helpers="rex_svc.c rex_svc_wr.c rex_svc_msg.c rex_svc_srq.c rex_srq.c rex_pool.c rex_aconn.c rex_aconn_devs.c rex_aconn_books.c rex_loop.c rex_loop_cq.c"
helpers="$helpers rex_cm.c rex_buffers.c rex_error.c"
mkdir -p "$out"
# shellcheck disable=SC2086
"$cc" -std=gnu11 -Wall -Wextra -Werror "$@" -o "$out/aconn-square-server" server.c evloop.c \
	$helpers -libverbs -lrdmacm -levent
# shellcheck disable=SC2086
"$cc" -std=gnu11 -Wall -Wextra -Werror "$@" -o "$out/aconn-square-client" client.c $helpers \
	-libverbs -lrdmacm
echo "built aconn-square-server and aconn-square-client from $(ls | wc -l) copied files"
