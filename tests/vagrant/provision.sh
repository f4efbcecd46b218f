#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The test vagrant.provision: the Vagrantfile's provisioning, checked without
# booting anything, so that what every laptop user runs at "vagrant up" cannot
# break unseen (it did: gcc without libc6-dev, "cannot find Scrt1.o").
#
#   tests/vagrant/provision.sh [VAGRANTFILE]
#
# 1. vagrant validate --ignore-provider (Debian package vagrant) on the
#    Vagrantfile: without it, validate wants a usable provider, and
#    scripts/check installs none (vagrant-libvirt and libvirt are
#    scripts/vagrant-check's, which boots the VMs for real);
# 2. the provisioning script, taken out of the Vagrantfile (the <<~'SHELL'
#    heredoc), read by sh -n and by shellcheck;
# 3. every package list it installs (each "apt-get install" line) resolved with
#    "apt-get install -s --no-install-recommends" in a minimal Debian 12 root
#    (debootstrap --variant=minbase: the packages a box starts without);
# 4. the main list installed in a copy of that root, then the script's own
#    build commands (its cmake lines) run there on this tree's sources, so a
#    missing build dependency fails here, in seconds, not on a laptop.
#
# The root is made once and kept in ~/.cache/rdma-by-example/vagrant-root/
# (base.tar, about 200 MB; REX_VAGRANT_ROOT_CACHE), with a second tarball for
# the root with the package list installed (about 650 MB, made again when the
# list changes); a cached root older than a week is made again. The first run
# takes about a minute (debootstrap, the packages), later ones about 30 s.
# Needs root (chroot), debootstrap, shellcheck and vagrant (scripts/check
# installs them), and this machine's Debian mirror (the one its apt uses;
# REX_VAGRANT_MIRROR and REX_VAGRANT_SECURITY_MIRROR override it) the first time.
# Exit: 0 pass, 1 a check failed, 2 bad use.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
vagrantfile=${1:-$ROOT/Vagrantfile}
cache=${REX_VAGRANT_ROOT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rdma-by-example/vagrant-root}
# shellcheck source=../../scripts/lib.sh
. "$ROOT/scripts/lib.sh"
mirror=${REX_VAGRANT_MIRROR:-$(rex_apt_mirror bookworm)}
security=${REX_VAGRANT_SECURITY_MIRROR:-$(rex_apt_mirror bookworm-security)}
failed=0
fail() { echo "FAIL: $*"; failed=1; }
say() { echo "provision: $*"; }

[ -f "$vagrantfile" ] || { echo "no such Vagrantfile: $vagrantfile"; exit 2; }
if [ "$(id -u)" -ne 0 ]; then
	# chroot needs root: through sudo when it asks for no password.
	sudo -n true 2>/dev/null || { echo "FAIL: this test needs root (chroot into a Debian root): run it as root or with sudo"; exit 1; }
	exec sudo -n env REX_VAGRANT_ROOT_CACHE="$cache" "$0" "$vagrantfile"
fi
for tool in vagrant debootstrap shellcheck; do
	command -v "$tool" >/dev/null 2>&1 || { echo "FAIL: $tool is not installed (Debian package $tool; scripts/check installs it)"; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/vagrant-provision.XXXXXX")
chroot_root=""
cleanup() {
	# /proc is mounted in the root only while a step runs in it.
	[ -z "$chroot_root" ] || umount "$chroot_root/proc" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# --- 1. vagrant validate --------------------------------------------------------
# In a copy of the Vagrantfile's folder: validate writes .vagrant/ there.
# --ignore-provider: the same answer with or without a provider installed
# (with none, a plain validate stops at "No usable default provider").
mkdir "$work/vf"
cp "$vagrantfile" "$work/vf/Vagrantfile"
if (cd "$work/vf" && VAGRANT_HOME="$work/vagrant-home" vagrant validate --ignore-provider) >"$work/validate.out" 2>&1; then
	say "vagrant validate: $(tail -n 1 "$work/validate.out")"
else
	sed 's/^/  | /' "$work/validate.out"
	fail "vagrant validate failed"
fi

# --- 2. the provisioning script ---------------------------------------------------
# Ruby's <<~ heredoc drops the smallest indentation of its lines.
script=$work/provision.sh
awk '/<<~'"'"'SHELL'"'"'/ { on = 1; next } on && /^[ \t]*SHELL[ \t]*$/ { exit } on' "$vagrantfile" |
	awk '{ line[NR] = $0; if ($0 ~ /[^ \t]/) { match($0, /^[ \t]*/); if (min == "" || RLENGTH < min) min = RLENGTH } }
	     END { for (i = 1; i <= NR; i++) print substr(line[i], min + 1) }' >"$script"
[ -s "$script" ] || { echo "FAIL: no provisioning script (a <<~'SHELL' heredoc) in $vagrantfile"; exit 1; }
say "provisioning script: $(wc -l <"$script") lines"
sh -n "$script" || fail "sh -n: the provisioning script does not parse"
shellcheck -s sh "$script" || fail "shellcheck found problems in the provisioning script"

# The package lists: each "apt-get install" command, its continuation lines
# joined, its words that are not options.
awk '{ if (sub(/\\[ \t]*$/, "")) { acc = acc $0 " "; next } print acc $0; acc = "" }' "$script" |
	awk '/apt-get[ \t].*install/ {
		out = ""; seen = 0
		for (i = 1; i <= NF; i++) {
			if ($i ~ /^[;&|#]/) break
			if (seen && $i !~ /^-/) out = out " " $i
			if ($i == "install") seen = 1
		}
		sub(/^ /, "", out); print out }' >"$work/lists"
[ -s "$work/lists" ] || fail "no apt-get install line in the provisioning script"
main=$(head -n 1 "$work/lists")

# --- 3. a minimal Debian 12 root, once ----------------------------------------------
mkdir -p "$cache"
base=$cache/base.tar
if [ ! -s "$base" ] || [ -n "$(find "$base" -mtime +7)" ]; then
	say "making a minimal Debian 12 root (debootstrap --variant=minbase bookworm; once, kept in $cache)"
	[ -n "$mirror" ] || { echo "FAIL: this machine's apt has no source for bookworm: set REX_VAGRANT_MIRROR to a Debian mirror"; exit 1; }
	mkdir "$work/base"
	debootstrap --variant=minbase bookworm "$work/base" "$mirror" >"$work/debootstrap.out" 2>&1 ||
		{ tail -n 20 "$work/debootstrap.out"; echo "FAIL: debootstrap failed"; exit 1; }
	# The lists of bookworm and its updates, as the VMs' apt-get update gets them.
	printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" >"$work/base/etc/apt/sources.list"
	[ -z "$security" ] || printf 'deb %s bookworm-security main\n' "$security" >>"$work/base/etc/apt/sources.list"
	cp /etc/resolv.conf "$work/base/etc/resolv.conf"
	chroot "$work/base" apt-get update -q >"$work/update.out" 2>&1 ||
		{ tail -n 20 "$work/update.out"; echo "FAIL: apt-get update in the root failed"; exit 1; }
	tar -C "$work/base" -cf "$base.new" . && mv "$base.new" "$base"
	rm -rf "$work/base" "$cache"/installed-*.tar
fi

# unpack TAR DIR: a fresh copy of a cached root.
unpack() { mkdir "$2" && tar -C "$2" -xf "$1"; }
unpack "$base" "$work/root"
cp /etc/resolv.conf "$work/root/etc/resolv.conf"
n=0
while read -r list; do
	n=$((n + 1))
	# shellcheck disable=SC2086 # a list of package names
	if chroot "$work/root" apt-get install -s -q --no-install-recommends $list >"$work/sim.out" 2>&1; then
		say "list $n resolves in a minimal bookworm root: $(grep -c '^Inst ' "$work/sim.out") packages to install ($list)"
	else
		grep -E '^E:|has no installation candidate|Unable to locate' "$work/sim.out" | sed 's/^/  | /'
		fail "list $n does not resolve: $list"
	fi
done <"$work/lists"
[ "$failed" -eq 0 ] || exit 1

# --- 4. the build, in a root holding just the main list ------------------------------
key=$(printf '%s' "$main" | sha256sum | cut -c1-16)
installed=$cache/installed-$key.tar
if [ ! -s "$installed" ]; then
	say "installing list 1 in the root (once for this list, kept in $cache)"
	rm -f "$cache"/installed-*.tar # an older list's root
	chroot_root=$work/root
	mount -t proc proc "$work/root/proc"
	# shellcheck disable=SC2086 # a list of package names
	chroot "$work/root" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $main \
		>"$work/install.out" 2>&1 || { tail -n 20 "$work/install.out"; echo "FAIL: installing list 1 failed"; exit 1; }
	chroot "$work/root" apt-get clean
	umount "$work/root/proc"
	chroot_root=""
	tar -C "$work/root" -cf "$installed.new" . && mv "$installed.new" "$installed"
else
	rm -rf "$work/root"
	unpack "$installed" "$work/root"
fi
# The tree's sources where the VMs have them (/vagrant), without build trees.
mkdir -p "$work/root/vagrant" "$work/root/home/vagrant"
tar -C "$ROOT" --exclude='./build*' --exclude=./.git --exclude=./.vagrant -cf - . | tar -C "$work/root/vagrant" -xf -
# The script's build commands: its cmake lines, as root ("sudo -u vagrant"
# left off: the root has no sudo and no such user, and it changes nothing here).
grep -E '^([a-z]+ -u [a-z]+ )?cmake ' "$script" | sed -E 's/^[a-z]+ -u [a-z]+ //' >"$work/root/build.sh"
[ -s "$work/root/build.sh" ] || fail "no cmake line in the provisioning script"
say "building as the script does: $(tr '\n' ';' <"$work/root/build.sh")"
start=$SECONDS
if chroot "$work/root" sh -eu /build.sh >"$work/build.out" 2>&1; then
	say "the build passed in a root with list 1 alone ($((SECONDS - start)) s): $(ls "$work/root/home/vagrant/build/bin" 2>/dev/null | wc -l) programs in build/bin"
	[ -x "$work/root/home/vagrant/build/bin/01-connect-server" ] || fail "no build/bin/01-connect-server after the build"
else
	grep -E 'error|cannot find|not able to compile|Could not find' "$work/build.out" | head -n 10 | sed 's/^/  | /'
	fail "the build fails with the provisioning's packages alone (a build dependency is missing from the Vagrantfile)"
fi
[ "$failed" -eq 0 ] && echo PASS
exit "$failed"
