#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# exercises/run.sh run|judge ID BIN OUT: one half of an exercise's check.
#
#   run    runs the programs in BIN the way exercises/ID/check.sh's ex_run
#          says (where RDMA works: scripts/exercise runs this half through
#          scripts/lab), keeping their output in OUT
#   judge  reads OUT and says what passed, asking the page's questions
#          (check.sh's ex_judge); answers from EX_ANSWERS or the terminal
#
# scripts/exercise is the learner's command; exercises/lib.sh says what a
# check.sh finds. Exit: 0 passed (judge) or ran (run); 1 not yet; 2 bad
# arguments.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -ne 4 ] || { [ "$1" != run ] && [ "$1" != judge ]; }; then
	echo "usage: exercises/run.sh run|judge ID BIN OUT" >&2
	exit 2
fi
half=$1
EX_ROOT=$(cd "$here/.." && pwd)
export EX_ID=$2 EX_DIR=$here/$2 EX_ROOT
[ -f "$EX_DIR/check.sh" ] || { echo "exercises/run.sh: no exercise '$EX_ID'" >&2; exit 2; }
mkdir -p "$4"
EX_BIN=$(cd "$3" && pwd) EX_OUT=$(cd "$4" && pwd) || exit 2
export EX_BIN EX_OUT
# A port of the exercise's own, from its name, unless given (the suite's
# proofs, run side by side, each get one from CMake as the tests do).
EX_PORT=${EX_PORT:-$((22000 + $(printf '%s' "$EX_ID" | cksum | cut -d' ' -f1) % 2000))}
export EX_PORT
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=/dev/null
. "$EX_DIR/check.sh"
if [ "$half" = run ]; then
	: "${RDMA_LAB_ADDR:?exercises/run.sh run: RDMA_LAB_ADDR is not set (run it through scripts/lab)}"
	ex_run
	exit 0
fi
ex_judge
exit "$ex_failed"
