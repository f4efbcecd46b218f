#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# exercises/prove.sh ID BUILD: the test exercise.ID. Proves that the
# exercise's checker can fail and can pass:
#   1. on the programs as shipped (BUILD/bin) it says "not yet" (exit 1);
#   2. on the programs built with the reference solution applied to a copy
#      of the sources (BUILD/exercise-solutions/ID/bin, made by
#      exercises/build-solutions.sh: cmake --build BUILD --target
#      exercise-solutions) it passes, given the answers of exercise.conf.
# Runs where RDMA works (RDMA_LAB_ADDR), as the other rdma tests do.
# Exit: 0 proven; 1 not (says which half); 77 no RDMA here, unless
# REX_REQUIRE_RDMA=1.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
[ $# -eq 2 ] || { echo "usage: exercises/prove.sh ID BUILD" >&2; exit 2; }
id=$1 build=$2
if [ -z "${RDMA_LAB_ADDR:-}" ]; then
	[ "${REX_REQUIRE_RDMA:-0}" = 1 ] && { echo "FAIL: RDMA is required here (REX_REQUIRE_RDMA=1) but RDMA_LAB_ADDR is not set"; exit 1; }
	echo "skip: no RDMA here (run it through scripts/lab)"
	exit 77
fi
ANSWERS=""
# shellcheck source=/dev/null
. "$here/$id/exercise.conf"
solution=$build/exercise-solutions/$id/bin
[ -d "$solution" ] || { echo "FAIL: no solution built in $solution: cmake --build $build --target exercise-solutions"; exit 1; }
out=$build/exercise-proofs/$id
rm -rf "$out"
status=0

echo "===== 1. the code as shipped: the check must say 'not yet'"
"$here/run.sh" run "$id" "$build/bin" "$out/shipped"
EX_ANSWERS=$ANSWERS "$here/run.sh" judge "$id" "$build/bin" "$out/shipped" | tee "$out/shipped/verdict"
code=${PIPESTATUS[0]}
if [ "$code" -ne 1 ] || ! grep -q '^  not yet: ' "$out/shipped/verdict"; then
	echo "FAIL: on the shipped code the check exited $code, not 1 with a 'not yet' line"
	status=1
fi

echo "===== 2. the reference solution: the check must pass"
"$here/run.sh" run "$id" "$solution" "$out/solution"
EX_ANSWERS=$ANSWERS "$here/run.sh" judge "$id" "$solution" "$out/solution" | tee "$out/solution/verdict"
code=${PIPESTATUS[0]}
if [ "$code" -ne 0 ]; then
	echo "FAIL: with the solution the check exited $code, not 0"
	status=1
fi
[ "$status" -eq 0 ] && echo "proven: $id's check fails on the shipped code and passes with its solution"
exit $status
