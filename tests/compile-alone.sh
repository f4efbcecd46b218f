#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Checks that a helper of common/ builds on its own, as a reader who copies
# it into another project would build it: NAME.c and NAME.h alone in an empty
# directory, only system headers besides. A helper that builds on others
# (rex_conn uses rex_cm, rex_error, rex_device) names them with --with, and
# their headers are copied too: exactly what its header says to copy.
#
#   compile-alone.sh CC SRCDIR NAME [--with DEP]... [EXTRA_CFLAGS...]
#
# EXTRA_CFLAGS are for where the system keeps headers (pkg-config --cflags).
# Prints the command and the compiler's output; exits nonzero on failure.
set -eu

if [ $# -lt 3 ]; then
	echo "usage: $0 CC SRCDIR NAME [EXTRA_CFLAGS...]" >&2
	exit 2
fi
cc=$1 srcdir=$2 name=$3
shift 3
deps=""
while [ $# -ge 2 ] && [ "$1" = --with ]; do
	deps="$deps $2"
	shift 2
done

for f in "$srcdir/$name.c" "$srcdir/$name.h"; do
	[ -f "$f" ] || { echo "compile-alone: $f: no such file" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/compile-alone.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
cp "$srcdir/$name.c" "$srcdir/$name.h" "$dir/"
for dep in $deps; do
	cp "$srcdir/$dep.h" "$dir/" || exit 1
done

cd "$dir"
set -- "$cc" -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Werror "$@" -c "$name.c" -o "$name.o"
echo "in $dir (holding only $(cd "$dir" && echo *)):"
echo "  $*"
if "$@"; then
	echo "ok: $name.c compiles alone"
else
	echo "FAIL: $name.c does not compile with only $(echo *.[ch]) beside it" >&2
	exit 1
fi
