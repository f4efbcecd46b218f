# SPDX-License-Identifier: MIT
#
# Shell helpers shared by scripts/lab, scripts/check and scripts/tour.
# Source it; it defines functions and a few variables and runs nothing.

REX_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# depmod, modprobe and friends live in /sbin, which a normal user's PATH on
# Debian lacks.
PATH=$PATH:/usr/sbin:/sbin

# Debian packages, by what they are needed for.
# libclang-rt-14-dev: libFuzzer and the sanitizers' runtime for clang (the fuzz tests;
# clang only recommends it). libevent-dev: tests/copy-async runs the service
# helpers inside a libevent loop, as a service with a loop of its own would.
REX_PKGS_BUILD="gcc clang libclang-rt-14-dev make cmake pkg-config libibverbs-dev librdmacm-dev libevent-dev"
# python3: 06-mr-pool.regcost_run parses the JSON of regcost with it. strace and
# linux-perf (perf stat): exercise 06-reg-syscalls counts system calls and page faults.
REX_PKGS_RDMA="rdma-core ibverbs-providers ibverbs-utils rdmacm-utils iproute2 perftest python3 gnuplot-nox strace linux-perf"
# tcpdump and tshark: "scripts/lab capture" and scripts/wire-trace (the wire tests).
REX_PKGS_LAB="qemu-system-x86 busybox-static cpio kmod tcpdump tshark"
REX_PKGS_DOCS="doxygen graphviz mscgen chromium fonts-dejavu-core fonts-dejavu-extra"
# The Vagrantfile's fast check (tests/vagrant/provision.sh): vagrant validate,
# a shellcheck of its provisioning, a minimal Debian root to build in.
REX_PKGS_VAGRANT="vagrant debootstrap shellcheck"

rex_say() { printf '%s: %s\n' "${REX_SCRIPT:-rex}" "$*" >&2; }

# rex_usage: print the running script's header comment, which is its usage
# (line 4, after "#!", SPDX and "#", up to the first line that is not a comment).
rex_usage() {
	sed -n '4,/^[^#]/{/^[^#]/q;s/^# \{0,1\}//;p;}' "$0"
}
rex_die() {
	rex_say "error: $*"
	exit 1
}

# rex_as_root CMD...: run CMD as root, through sudo when we are not root.
rex_as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		rex_die "'$*' needs root: run as root or install sudo"
	fi
}

# rex_apt_mirror SUITE: the URI this machine's apt takes SUITE (bookworm,
# bookworm-security...) from, read from its deb822 *.sources files or its
# one-line sources.list; nothing when apt has no such source. The Debian roots
# and boxes the project builds use the host's own mirror, never one we name.
rex_apt_mirror() {
	local f
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] || continue
			# One stanza a paragraph: a deb stanza that lists SUITE.
			awk -v want="$1" '
				function flush() { if (deb && has && uri != "") print uri; deb = has = 0; uri = "" }
				/^[[:space:]]*$/ { flush(); next }
				tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
				tolower($1) == "uris:" { uri = $2 }
				tolower($1) == "suites:" { for (i = 2; i <= NF; i++) if ($i == want) has = 1 }
				END { flush() }' "$f"
		done
		# "deb [options] URI SUITE COMPONENT..."
		{ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
			awk -v want="$1" '$1 == "deb" {
				i = 2
				if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
				if ($(i + 1) == want) print $i }'
	} | awk 'NR == 1' # the first; reads all, so no writer dies of SIGPIPE
	return 0
}

# rex_apt_updated: run "apt-get update" once per invocation of a script.
rex_apt_updated() {
	[ -n "${REX_APT_UPDATED:-}" ] && return 0
	rex_say "updating the Debian package lists (apt-get update)"
	rex_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null ||
		rex_die "apt-get update failed"
	REX_APT_UPDATED=1
}

# rex_need_packages PKG...: install the Debian packages that are missing,
# saying which. Packages already installed cost nothing.
rex_need_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ "${#missing[@]}" -eq 0 ] && return 0
	command -v apt-get >/dev/null 2>&1 ||
		rex_die "missing packages (${missing[*]}) and no apt-get to install them"
	rex_apt_updated
	rex_say "installing Debian packages: ${missing[*]}"
	rex_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" >/dev/null ||
		rex_die "apt-get install ${missing[*]} failed"
}

# rex_run_bench NAME [ARGS...]: the body of 06-mr-pool/NAME (compare, scale,
# load), whose header comment is its usage: -h; --out DIR (default
# build/NAME/DATE-TIME); then 06-mr-pool/NAME.py with the other ARGS, here
# when an RDMA device is (the user names its address with --addr; the lab's
# VM sets RDMA_LAB_ADDR), or, built into build/, in the lab's VM.
rex_run_bench() {
	local name=$1 out="" has_addr=no
	local args=()
	shift
	cd "$REX_ROOT"
	while [ $# -gt 0 ]; do
		case "$1" in
		-h | --help) rex_usage; exit 0 ;;
		--out)
			[ $# -ge 2 ] || { rex_say "error: --out needs a folder"; exit 2; }
			out=$2
			shift 2
			;;
		--addr) has_addr=yes; args+=("$1"); shift ;;
		*) args+=("$1"); shift ;;
		esac
	done
	[ -n "$out" ] || out=build/$name/$(date +%Y%m%d-%H%M%S)
	if [ -n "$(ls -A /sys/class/infiniband 2>/dev/null)" ]; then
		[ "$has_addr" = yes ] || [ -n "${RDMA_LAB_ADDR:-}" ] ||
			{ rex_say "error: an RDMA device is here: give --addr, the address of its interface"; exit 2; }
		exec python3 "06-mr-pool/$name.py" --bin build/bin --out "$out" "${args[@]}"
	fi
	rex_need_packages $REX_PKGS_BUILD $REX_PKGS_RDMA
	cmake -S . -B build >/dev/null
	cmake --build build -j "$(nproc)" >/dev/null || { cmake --build build -j 1; exit 1; }
	mkdir -p "$out"
	rex_say "no RDMA device here: running in the lab's VM (scripts/lab)"
	export RDMA_LAB_TIMEOUT=${RDMA_LAB_TIMEOUT:-7200}
	exec scripts/lab run -- python3 "06-mr-pool/$name.py" --bin build/bin --out "$out" "${args[@]}"
}
