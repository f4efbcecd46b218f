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
# A measure exercise changes no code (KIND=measure: run the programs as
# they are, with the page's options, and answer): its check runs once, and
# must say "not yet" to the wrong answers of exercise.conf (WRONG) and pass
# with the right ones (ANSWERS).
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
ANSWERS="" WRONG="" KIND=""
# shellcheck source=/dev/null
. "$here/$id/exercise.conf"
out=$build/exercise-proofs/$id
rm -rf "$out"

# judge_must WHAT DIR BIN CODE ANSWERS: the check's verdict on DIR must be
# CODE (1 with a "not yet" line, or 0).
judge_must() {
	EX_ANSWERS=$5 "$here/run.sh" judge "$id" "$3" "$2" | tee "$2/verdict-$4"
	local code=${PIPESTATUS[0]}
	if [ "$4" = 1 ] && { [ "$code" -ne 1 ] || ! grep -q '^  not yet: ' "$2/verdict-$4"; }; then
		echo "FAIL: $1: the check exited $code, not 1 with a 'not yet' line"
		return 1
	fi
	if [ "$4" = 0 ] && [ "$code" -ne 0 ]; then
		echo "FAIL: $1: the check exited $code, not 0"
		return 1
	fi
}

if [ "$KIND" = measure ]; then
	[ -n "$WRONG" ] || { echo "FAIL: $id is a measure exercise without WRONG answers in exercise.conf"; exit 1; }
	echo "===== the programs as shipped, run once"
	"$here/run.sh" run "$id" "$build/bin" "$out/shipped"
	status=0
	echo "===== 1. the wrong answers ($WRONG): the check must say 'not yet'"
	judge_must "with the wrong answers" "$out/shipped" "$build/bin" 1 "$WRONG" || status=1
	echo "===== 2. the right answers ($ANSWERS): the check must pass"
	judge_must "with the right answers" "$out/shipped" "$build/bin" 0 "$ANSWERS" || status=1
	[ "$status" -eq 0 ] && echo "proven: $id's check refuses the wrong answers and takes the right ones"
	exit $status
fi
solution=$build/exercise-solutions/$id/bin
[ -d "$solution" ] || { echo "FAIL: no solution built in $solution: cmake --build $build --target exercise-solutions"; exit 1; }
status=0

echo "===== 1. the code as shipped: the check must say 'not yet'"
"$here/run.sh" run "$id" "$build/bin" "$out/shipped"
judge_must "on the shipped code" "$out/shipped" "$build/bin" 1 "$ANSWERS" || status=1

echo "===== 2. the reference solution: the check must pass"
"$here/run.sh" run "$id" "$solution" "$out/solution"
judge_must "with the solution" "$out/solution" "$solution" 0 "$ANSWERS" || status=1
[ "$status" -eq 0 ] && echo "proven: $id's check fails on the shipped code and passes with its solution"
exit $status
