#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Checks that a helper of common/ builds on its own, as a reader who copies
# it into another project would build it: NAME.c and NAME.h alone in an empty
# directory, only system headers besides; a helper split in several files
# has them all beside (NAME_*.c and NAME_*.h: rex_aconn_devs.c,
# rex_aconn_priv.h, ...), each .c compiled. A helper that builds on others
# (rex_conn uses rex_cm, rex_error, rex_device) names them with --with, and
# their headers are copied too: exactly what its header says to copy.
#
# It compiles the copy as a copier might: with each compiler given by --cc,
# in strict ISO C (-std=c11, where glibc hides POSIX and GNU declarations
# unless the file asks for them) and in GNU C (-std=gnu11), with warnings as
# errors, and with no -D flags: whatever feature macro the helper needs, the
# helper must define itself.
#
#   compile-alone.sh SRCDIR NAME [--with DEP]... [--cc CC]... [EXTRA_CFLAGS...]
#
# EXTRA_CFLAGS are for where the system keeps headers (pkg-config --cflags).
# Prints each command and the compiler's output; exits nonzero on failure.
set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 SRCDIR NAME [--with DEP]... [--cc CC]... [EXTRA_CFLAGS...]" >&2
	exit 2
fi
srcdir=$1 name=$2
shift 2
deps="" compilers=""
while [ $# -ge 2 ]; do
	case "$1" in
	--with) deps="$deps $2" ;;
	--cc) compilers="$compilers $2" ;;
	*) break ;;
	esac
	shift 2
done
[ -n "$compilers" ] || compilers=cc

for f in "$srcdir/$name.c" "$srcdir/$name.h"; do
	[ -f "$f" ] || { echo "compile-alone: $f: no such file" >&2; exit 1; }
done

dir=$(mktemp -d "${TMPDIR:-/tmp}/compile-alone.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
cp "$srcdir/$name.c" "$srcdir/$name.h" "$dir/"
for f in "$srcdir/${name}"_*.c "$srcdir/${name}"_*.h; do
	[ -f "$f" ] && cp "$f" "$dir/"
done
for dep in $deps; do
	cp "$srcdir/$dep.h" "$dir/" || exit 1
done

cd "$dir"
echo "in $dir (holding only $(echo *)):"
sources="$name.c"
for f in "${name}"_*.c; do
	[ -f "$f" ] && sources="$sources $f"
done
# compile CC STD [EXTRA_CFLAGS...]
compile() {
	cc=$1 std=$2
	shift 2
	for src in $sources; do
		echo "  $cc -std=$std $WARNINGS $* -c $src"
		# shellcheck disable=SC2086
		"$cc" -std="$std" $WARNINGS "$@" -c "$src" -o "${src%.c}.o" || return 1
	done
}
WARNINGS="-Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Werror"
failed=0
for cc in $compilers; do
	for std in c11 gnu11; do
		if ! compile "$cc" "$std" "$@"; then
			echo "FAIL: $sources do not all compile with $cc -std=$std and only $(echo *.[ch]) beside it" >&2
			failed=1
		fi
	done
done
[ "$failed" -eq 0 ] && echo "ok: $sources compile alone with:$compilers, -std=c11 and -std=gnu11"
exit "$failed"
