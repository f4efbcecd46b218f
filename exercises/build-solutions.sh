#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# exercises/build-solutions.sh BUILD [ID...]: build every exercise's reference
# solution, for the tests that prove each checker (label exercise).
#
# Copies the repository's sources once into BUILD/exercise-solutions/src,
# then for each exercise (or each ID given): applies its solution.patch
# there, builds the targets its exercise.conf names (TARGETS) in
# BUILD/exercise-solutions/build with BUILD's compiler flags, copies those
# programs (and unit tests) into BUILD/exercise-solutions/ID/bin, and takes the patch back
# out. One tree for all: each exercise recompiles only the files its patch
# touches. The cmake target exercise-solutions runs this.
#
# Exit: 0 built; 1 a patch does not apply or a solution does not build
# (named); 2 bad arguments.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
[ $# -ge 1 ] || { echo "usage: exercises/build-solutions.sh BUILD [ID...]" >&2; exit 2; }
build=$(cd "$1" && pwd) || exit 2
shift
out=$build/exercise-solutions
src=$out/src
tree=$out/build
ids=("$@")
if [ ${#ids[@]} -eq 0 ]; then
	for conf in "$here"/*/exercise.conf; do
		ids+=("$(basename "$(dirname "$conf")")")
	done
fi

# The sources as they are now (a learner's edits or not: the copy is taken
# from the files, not from git), without build trees or the VCS. Every file
# copied gets the time of the copy (tar -m), newer than any object built
# before: an object left from an earlier run, when a patch had changed its
# source, must not pass for the unpatched one (a test saw 01-padding's
# wire.c in 01-disconnect's programs).
mkdir -p "$src"
(cd "$root" && tar --exclude='./build*' --exclude=./.git --exclude=./.cache \
	--exclude=./.vagrant -cf - .) | (cd "$src" && tar -xmf -)
flags=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
werror=$(sed -n 's/^REX_WERROR:BOOL=//p' "$build/CMakeCache.txt")
cmake -S "$src" -B "$tree" -DCMAKE_BUILD_TYPE="${flags:-}" -DREX_WERROR="${werror:-OFF}" >/dev/null

status=0
for id in "${ids[@]}"; do
	dir=$here/$id
	[ -f "$dir/exercise.conf" ] || { echo "build-solutions: no exercise '$id'" >&2; exit 2; }
	TARGETS="" KIND=""
	# shellcheck source=/dev/null
	. "$dir/exercise.conf"
	[ "$KIND" != measure ] || continue # it changes no code: nothing to build
	if ! patch -s -d "$src" -p1 --dry-run <"$dir/solution.patch" >/dev/null; then
		echo "build-solutions: $id: solution.patch does not apply to the sources" >&2
		status=1
		continue
	fi
	patch -s -d "$src" -p1 <"$dir/solution.patch"
	# shellcheck disable=SC2086
	if cmake --build "$tree" --target $TARGETS -j "$(nproc 2>/dev/null || echo 2)" >"$out/$id.log" 2>&1; then
		rm -rf "${out:?}/$id"
		mkdir -p "$out/$id/bin"
		for t in $TARGETS; do # a program (bin/) or a unit test (tests/)
			if [ -f "$tree/bin/$t" ]; then
				cp "$tree/bin/$t" "$out/$id/bin/"
			else
				cp "$tree/tests/$t" "$out/$id/bin/"
			fi
		done
		echo "build-solutions: $id: built ($TARGETS)"
	else
		echo "build-solutions: $id: the solution does not build (see $out/$id.log):" >&2
		tail -20 "$out/$id.log" >&2
		status=1
	fi
	patch -s -d "$src" -p1 -R <"$dir/solution.patch"
done
exit $status
