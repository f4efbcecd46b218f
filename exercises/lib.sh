# SPDX-License-Identifier: MIT
# shellcheck shell=bash
#
# exercises/lib.sh: what every exercise's check.sh uses. Sourced by
# exercises/run.sh, never run by itself.
#
# A check.sh defines two functions:
#   ex_run    runs the learner's programs where RDMA works (in the lab VM
#             when this machine has none), each run through ex_pair, whose
#             output it keeps in EX_OUT;
#   ex_judge  runs where the learner is: reads those outputs, says what
#             passed ("ok") and what did not ("not yet", with what to do),
#             and asks the page's questions (ex_number, ex_choice).
# The environment they find:
#   EX_ID   the exercise (01-disconnect)     EX_DIR  its folder
#   EX_BIN  the programs to check (build/bin, or a solution's bin)
#   EX_OUT  a folder for this check's outputs   EX_ROOT the repository
#   EX_PORT a port for this exercise's servers
#   RDMA_LAB_ADDR (ex_run only): the address of the RDMA device
#   EX_ANSWERS: the answers, ";"-separated, in the order the questions come
#     (scripts/exercise check --answer; the suite's proofs); without it a
#     question is read from the terminal, and fails where there is none.

# shellcheck disable=SC2034 # read by exercises/run.sh
ex_failed=0

# ex_prog NAME: the path of program or unit test NAME: in EX_BIN, or, for a
# build tree's unit tests, in EX_BIN/../tests.
ex_prog() {
	if [ -x "$EX_BIN/$1" ]; then echo "$EX_BIN/$1"; else echo "$EX_BIN/../tests/$1"; fi
}

# ex_keep NAME COMMAND...: run COMMAND, its output kept in EX_OUT/NAME.out
# and shown once it has ended, its exit status in EX_OUT/NAME.exit.
ex_keep() {
	local name=$1
	shift
	"$@" >"$EX_OUT/$name.out" 2>&1
	echo $? >"$EX_OUT/$name.exit"
	ex_read_name="" # (ex_read reads it again)
	sed 's/^/  | /' "$EX_OUT/$name.out"
}

# ex_command NAME COMMAND...: run COMMAND (a program: ex_prog finds it) as
# ex_keep does, after a line naming it.
ex_command() {
	echo "--- $1: ${*:2}"
	ex_keep "$@"
}

# ex_pair NAME [--stop] [--timeout S] 'SERVER' 'CLIENT': run the pair with
# scripts/pair --times (every line stamped with the seconds since the
# server's start), kept as ex_keep does. In the commands @BIN@ is EX_BIN,
# @ADDR@ the RDMA address and @PORT@ EX_PORT.
ex_pair() {
	local name=$1 args=() cmd
	shift
	while [ $# -gt 2 ]; do
		args+=("$1")
		shift
	done
	local sub=("$1" "$2") i
	for i in 0 1; do
		cmd=${sub[$i]//@BIN@/$EX_BIN}
		cmd=${cmd//@ADDR@/$RDMA_LAB_ADDR}
		sub[i]=${cmd//@PORT@/$EX_PORT}
	done
	echo "--- $name: ${sub[1]}"
	ex_keep "$name" "$EX_ROOT/scripts/pair" --times "${args[@]}" -- "${sub[0]}" "${sub[1]}"
}

# ex_exit NAME: the exit status of run NAME ("" when it did not run).
ex_exit() { cat "$EX_OUT/$1.exit" 2>/dev/null; }

# ex_read NAME: run NAME's lines into three arrays: ex_raw as written,
# ex_lines without their stamps, ex_stamps the stamps ("" for none). The
# questions below are answered by bash itself, from these, not by sed or
# grep: in the lab's emulated VM each program started costs a tenth of a
# second or more, and a check asks dozens of questions. Read once a run.
ex_read_name="" ex_raw=() ex_lines=() ex_stamps=()
ex_read() {
	[ "$ex_read_name" = "$1" ] && return 0
	local l
	ex_raw=() ex_lines=() ex_stamps=()
	mapfile -t ex_raw 2>/dev/null <"$EX_OUT/$1.out"
	for l in "${ex_raw[@]}"; do
		if [[ "$l" =~ ^\[\ *([0-9.]*)\]\ (.*)$ ]]; then
			ex_stamps+=("${BASH_REMATCH[1]}")
			ex_lines+=("${BASH_REMATCH[2]}")
		else
			ex_stamps+=("")
			ex_lines+=("$l")
		fi
	done
	ex_read_name=$1
}

# ex_has NAME REGEX: whether a line of run NAME (without its stamp) matches
# REGEX (extended, as grep -E's).
ex_has() {
	local l
	ex_read "$1"
	for l in "${ex_lines[@]}"; do
		[[ "$l" =~ $2 ]] && return 0
	done
	return 1
}

# ex_count NAME REGEX: how many lines of run NAME match.
ex_count() {
	local l n=0
	ex_read "$1"
	for l in "${ex_lines[@]}"; do
		[[ "$l" =~ $2 ]] && n=$((n + 1))
	done
	echo "$n"
}

# ex_at NAME REGEX: the stamp (seconds) of the first line of run NAME that
# matches REGEX; nothing when none does.
ex_at() {
	local i
	ex_read "$1"
	for i in "${!ex_lines[@]}"; do
		if [[ "${ex_lines[i]}" =~ $2 ]]; then
			echo "${ex_stamps[i]}"
			return 0
		fi
	done
}

# ex_since NAME FROM_REGEX TO_REGEX: seconds between two lines' stamps,
# with two decimals; nothing when either line is missing.
ex_since() {
	local a b
	a=$(ex_at "$1" "$2")
	b=$(ex_at "$1" "$3")
	[ -n "$a" ] && [ -n "$b" ] || return 0
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f\n", b - a }'
}

# ex_value NAME REGEX: the first group of REGEX (extended) in the first line
# of run NAME that matches it; nothing when none does, or when REGEX has no
# group.
ex_value() {
	local l
	ex_read "$1"
	for l in "${ex_raw[@]}"; do
		if [[ "$l" =~ .*$2.* ]]; then
			echo "${BASH_REMATCH[1]-}"
			return 0
		fi
	done
}

# ex_row NAME FIRST: the first line of run NAME (without its stamp) whose
# first field is FIRST, as it is: a row of a program's table (06's "64 5000
# ..."), for read -ra. The field is compared as text: 8 is not 08.
ex_row() {
	local l f
	ex_read "$1"
	for l in "${ex_lines[@]}"; do
		read -r f _ <<<"$l"
		if [ "$f" = "$2" ]; then
			echo "$l"
			return 0
		fi
	done
}

# ex_bench NAME OPTIONS: one run of 06's benchmark client, with OPTIONS and
# -v, against a 06 server of its own (scripts/pair --stop).
ex_bench() {
	ex_pair "$1" --stop '@BIN@/06-mr-pool-server -B @ADDR@ -p @PORT@' \
		"@BIN@/06-mr-pool-client -p @PORT@ -v $2 @ADDR@"
}

# ex_bench_bw SIZE NAME WHAT [NAME WHAT]...: a line on each bandwidth run
# NAME (ex_bench), WHAT naming it: its MsgRate, client CPU, and the -v
# line's work requests, ibv_post_send() calls and completions. Not yet
# (status 1) for a run that printed no row for SIZE or no -v line.
ex_bench_bw() {
	local size=$1 f wrs calls wcs
	shift
	while [ $# -ge 2 ]; do
		read -ra f < <(ex_row "$1" "$size")
		wrs=$(ex_value "$1" 'debug: .*: ([0-9]+) work requests posted in')
		calls=$(ex_value "$1" 'work requests posted in ([0-9]+) ibv_post_send')
		wcs=$(ex_value "$1" 'calls; ([0-9]+) completions taken')
		echo "  ($2: MsgRate ${f[4]:-?} Mpps, client CPU user ${f[5]:-?} s, sys ${f[6]:-?} s;" \
			"${wrs:-?} work requests in ${calls:-?} ibv_post_send() calls, ${wcs:-?} completions)"
		if [ -z "$wcs" ] || [ -z "${f[4]:-}" ]; then
			ex_not_yet "the $2 run did not finish (its lines are above)"
		fi
		shift 2
	done
	ex_all_ok
}

# ex_fewer A B REGEX N WHAT: ok when run B's count (REGEX's group) is below
# an Nth of run A's; else not yet (status 1), WHAT naming the count.
ex_fewer() {
	local a b
	a=$(ex_value "$1" "$3")
	b=$(ex_value "$2" "$3")
	if [ -n "$a" ] && [ -n "$b" ] && [ "$b" -lt $((a / $4)) ]; then
		ex_ok "$5: $b with $2, against $a with $1"
		return 0
	fi
	ex_not_yet "$5: ${b:-?} with $2, against ${a:-?} with $1: not below a ${4}th of it" \
		"the programs are not as shipped? (scripts/exercise reset $EX_ID)"
	return 1
}

# ex_need VAR NAME REGEX WHAT: sets VAR to ex_value NAME REGEX; when run
# NAME printed no such line, says "not yet" naming WHAT as missing and
# returns 1.
ex_need() {
	printf -v "$1" '%s' "$(ex_value "$2" "$3")"
	[ -n "${!1}" ] && return 0
	ex_not_yet "$4 is missing from the output (did the program run to the end?)"
	return 1
}

# ex_ok TEXT / ex_not_yet TEXT [HOW]: a verdict line; "not yet" marks the
# check failed, and HOW (optional) says what to do about it.
ex_ok() { echo "  ok: $1"; }
ex_not_yet() {
	echo "  not yet: $1"
	[ -z "${2:-}" ] || echo "           $2"
	ex_failed=1
}

# ex_all_ok: whether nothing was "not yet" so far (questions come after).
ex_all_ok() { [ "$ex_failed" = 0 ]; }

# ex_expect NAME REGEX WHAT [HOW]: ok when run NAME printed a line matching
# REGEX (WHAT says what that shows), else not yet.
ex_expect() {
	if ex_has "$1" "$2"; then ex_ok "$3"; else ex_not_yet "$3" "${4:-}"; fi
}

# Answers come from EX_ANSWERS, one per question, or from the terminal.
ex_answer_index=0
ex_read_answer() { # ex_read_answer PROMPT: sets "answer"
	if [ -n "${EX_ANSWERS:-}" ]; then
		local all
		IFS=';' read -ra all <<<"$EX_ANSWERS"
		answer=${all[$ex_answer_index]:-}
		ex_answer_index=$((ex_answer_index + 1))
		echo "$1 $answer"
	elif [ -t 0 ]; then
		read -r -p "$1 " answer || answer=""
	else
		answer=""
		echo "$1 (no answer: run the check in a terminal, or give --answer)"
	fi
}

# ex_number QUESTION LOW HIGH EXPLANATION: a number between LOW and HIGH
# is right. The explanation is printed either way.
ex_number() {
	echo
	echo "  question: $1"
	ex_read_answer "  your answer (a number):"
	if [[ "$answer" =~ ^[0-9]+([.][0-9]+)?$ ]] &&
		awk -v x="$answer" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; then
		ex_ok "$answer is right (between $2 and $3)"
	else
		ex_not_yet "'$answer' is not it: look at the stamps of the lines above"
	fi
	ex_wrap "  " "  " "$4"
}

# ex_choice QUESTION RIGHT EXPLANATION CHOICE...: one letter, a, b, c...,
# for the choices in order; RIGHT is the right letter.
ex_choice() {
	local q=$1 right=$2 why=$3 letters=abcdefghijklmnopqrstuvwxyz i=0 c
	shift 3
	echo
	echo "  question: $q"
	for c in "$@"; do
		ex_wrap "    ${letters:i:1}) " "       " "$c"
		i=$((i + 1))
	done
	ex_read_answer "  your answer (a letter):"
	if [ "${answer,,}" = "$right" ]; then
		ex_ok "$right is right"
	else
		ex_not_yet "'$answer' is not it"
	fi
	ex_wrap "  " "  " "$why"
}

# ex_wrap FIRST NEXT TEXT: TEXT in lines of 78 characters at most, broken
# at spaces (a longer word gets a line of its own), the first line after
# FIRST, the others after NEXT. Bash alone (see ex_read).
ex_wrap() {
	local line=$1 words w fresh=yes
	read -d '' -ra words <<<"$3" || true # every line of TEXT: -d '' reads to the end
	for w in "${words[@]}"; do
		if [ "$fresh" = no ] && [ $((${#line} + 1 + ${#w})) -gt 78 ]; then
			echo "$line"
			line=$2 fresh=yes
		fi
		if [ "$fresh" = yes ]; then line+=$w; else line+=" $w"; fi
		fresh=no
	done
	echo "$line"
}
