#!/bin/sh
# SPDX-License-Identifier: MIT
#
# Runs one fuzz target for a bounded time, from its checked-in seed corpus
# (copied: the fuzzer writes what it finds into its corpus directory), and
# fails on the first crash, sanitizer report or broken invariant.
#
#   run.sh TARGET SEED_DIR SECONDS
#
# libFuzzer prints its own summary (executions, coverage); on a failure it
# leaves the input that failed as crash-* in the working directory, to be
# replayed with: TARGET crash-...
set -eu
[ $# -eq 3 ] || { echo "usage: $0 TARGET SEED_DIR SECONDS" >&2; exit 2; }
# Absolute: the fuzzer runs in a directory of its own.
target=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
seeds=$2 seconds=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM
mkdir "$dir/corpus"
cp "$seeds"/* "$dir/corpus/"
cd "$dir"
"$target" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 -print_final_stats=1 corpus
