#!/bin/busybox sh
# SPDX-License-Identifier: MIT
#
# PID 1 of the Soft-RoCE lab VM (see scripts/lab). It runs from the initramfs
# with busybox only, so it uses nothing that is not in busybox until it has
# mounted the host's root file system.
#
# What it does, in order:
#   1. mount /proc, /sys, /dev and load the modules Soft-RoCE needs
#   2. mount the host root (read-only), the repository and the run folder
#      (read-write), all over virtio-9p
#   3. give a dummy interface (one VM) or eth0 (two VMs) an address that
#      exists only inside this VM or on the wire between the two, and put an
#      rxe device on it (scripts/rxe-up, which the Vagrantfile uses too), or
#      with the provider siw a Soft-iWARP device (scripts/siw-up)
#   4. run the command from the run folder as root in a chroot of the host
#   5. write the command's exit status to the run folder and power off
#
# The run folder holds: repo (path of the repository), addr (IPv4 address for
# RDMA), provider (rxe or siw; rxe when missing), env (shell assignments to
# export), cmd (the command, shell-quoted),
# and for a VM of a two-VM run netdev ("eth0") and wire (its role; the shared
# folder "wire" is then mounted at /run/wire).
# Lines starting with "lab:" go to the console so the caller can follow along.

/bin/busybox mkdir -p /bin /sbin /usr/bin /usr/sbin /proc /sys /dev /host /lab
/bin/busybox --install -s
export PATH=/sbin:/bin:/usr/sbin:/usr/bin

say() { echo "lab: $*"; }
stop() {
	sync
	poweroff -f
}

mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

# crc32_generic first: rxe asks the crypto layer for "crc32" when a device is
# added, and without it "rdma link add" fails with "No such file or directory".
# The list is scripts/lab's LAB_MODULES, written into the initramfs as /modules.
for m in $(cat /modules); do
	modprobe "$m" || { say "modprobe $m failed"; stop; }
done

p9="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "$p9" run /lab || { say "mounting the run folder failed"; stop; }
: > /lab/booted # tells scripts/lab's boot watchdog that the kernel is up
fail() {
	say "$*"
	echo 125 > /lab/rc
	stop
}
# The host's root, read-only, with the guest's page cache (cache=loose: what
# the kernel's 9p documentation intends for exclusive, read-only mounts).
# Without a cache every program's start reads its libraries over 9p again:
# under emulation an RDMA program then took 0.3 s to list the devices
# (libibverbs opens each of its 22 providers), 0.13 s with it, and a
# server-and-client pair 2.5 s instead of 1.1 to 1.5 s. (The repository,
# written by both sides, stays uncached.)
mount -t 9p -o "$p9,ro,cache=loose" hostroot /host || fail "mounting the host root failed"
mount -t proc proc /host/proc || fail "mounting /proc failed"
mount -t sysfs sys /host/sys || fail "mounting /sys failed"
mount -t devtmpfs dev /host/dev || fail "mounting /dev failed"
mkdir -p /host/dev/pts /host/dev/shm 2>/dev/null
# devtmpfs makes device nodes only; udev would add these links, and bash's
# process substitution <(...) needs /dev/fd.
ln -sf /proc/self/fd /host/dev/fd
ln -sf /proc/self/fd/0 /host/dev/stdin
ln -sf /proc/self/fd/1 /host/dev/stdout
ln -sf /proc/self/fd/2 /host/dev/stderr
mount -t devpts devpts /host/dev/pts
mount -t tmpfs shm /host/dev/shm
for d in /tmp /run /var/tmp; do
	mount -t tmpfs tmpfs "/host$d" || fail "mounting tmpfs on $d failed"
done
repo=$(cat /lab/repo)
mkdir -p "/host$repo" 2>/dev/null # needed only when the repository is under /tmp
mount -t 9p -o "$p9" repo "/host$repo" || fail "mounting the repository at $repo failed"
mkdir -p /host/run/lab
mount -o bind /lab /host/run/lab || fail "binding the run folder failed"

# Soft-RoCE. One VM: on a dummy interface whose address exists only inside
# this VM; two processes on the same rxe device talk through rxe's internal
# loopback. (rdma_cm cannot use 127.0.0.1: rxe on "lo" has no route for the
# CM.) Two VMs ("scripts/lab pair --two-vms"): on eth0, the virtual wire
# between them, with an address that exists only on that wire. Either way
# scripts/rxe-up, the Vagrantfile's script too, adds rxe0.
addr=$(cat /lab/addr)
netdev=dummy0
[ -e /lab/netdev ] && netdev=$(cat /lab/netdev)
in_host() { chroot /host "$@"; }
in_host ip link set lo up || fail "ip link set lo up failed"
if [ "$netdev" = dummy0 ]; then
	# Loading the dummy module already made dummy0; make it only if it is missing.
	in_host ip link show dummy0 >/dev/null 2>&1 ||
		in_host ip link add dummy0 type dummy || fail "ip link add dummy0 failed"
fi
in_host ip addr add "$addr/24" dev "$netdev" || fail "ip addr add $addr failed"
in_host ip link set "$netdev" up || fail "ip link set $netdev up failed"
# Soft-iWARP instead (RDMA_LAB_PROVIDER=siw): siw0, and no rxe0 beside it,
# so that rdma_cm finds one device on the address.
provider=rxe
[ -e /lab/provider ] && provider=$(cat /lab/provider)
case "$provider" in
rxe) up=rxe-up device=rxe0 ;;
siw) up=siw-up device=siw0 ;;
*) fail "unknown provider '$provider' (rxe or siw)" ;;
esac
in_host sh "$repo/scripts/$up" "$addr" >/dev/null 2>/lab/rxe-up.err ||
	fail "$(cat /lab/rxe-up.err)"
# The folder both VMs of a two-VM run share (scripts/lab, --two-vms).
if [ -e /lab/wire ]; then
	mkdir -p /host/run/wire
	mount -t 9p -o "$p9" wire /host/run/wire || fail "mounting the shared wire folder failed"
fi
say "$device is up on $netdev with $addr; running the command"

chroot /host /bin/bash -c '
	. /run/lab/env
	cd "$(cat /run/lab/repo)" || exit 125
	eval "exec $(cat /run/lab/cmd)"
' </dev/null
echo $? > /lab/rc
stop
