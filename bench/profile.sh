#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Where the module's time goes: boots the bench guest (the vm/ kernel and
# the disk of one input, as the last 'make bench' or 'make bench-quick'
# packed it) with the host's perf in the initramfs and
# bench/profile-guest.sh as the guest's job. For each composefs operation
# of the bench it prints perf's top kernel symbols (cpu-clock samples, all
# CPUs: TCG has no PMU) and the composefs slab counts before and after.
# Output: build/bench/profile-INPUT.txt.
#
# Usage: bench/profile.sh [INPUT [OPERATION...]]
#   INPUT       synth (default) or os: the input whose bench disk to use
#   OPERATION   walk, ls-lR, stat-sample, readdir-widest, read-all
#               (default all), each profiled cold and warm
# Needs a bench disk (make bench-quick, or make bench INPUT=os) and perf
# (Debian's linux-perf).
# Environment: CFS_PROFILE_SYSTEMS (cfs, the default, erofs, store, the
# objects read straight from the disk, tree, the image's tree of
# hardlinks to them, cfs-v, the image copied in the guest, sealed and
# mounted with digest=, and cfs-c, the same copy unsealed: the systems
# profiled, one after the other), CFS_PROFILE_LIMIT (the least
# share of samples a symbol must have to be listed, in %, default 1.5),
# CFS_PROFILE_TOP (the most symbols listed, default 25),
# CFS_PROFILE_CHILDREN (functions whose share of the samples, with all
# they call, is printed as well: recorded with call graphs), CFS_VM_MEM (MiB, default 8192),
# CFS_VM_TIMEOUT (default 3600).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench
die() { echo "profile: $*" >&2; exit 1; }
input=${1:-synth}
[ $# -gt 0 ] && shift
ops="$*"
for op in $ops; do
	case $op in
	walk | ls-lR | stat-sample | readdir-widest | read-all) ;;
	*) echo "usage: bench/profile.sh [INPUT [walk|ls-lR|stat-sample|readdir-widest|read-all...]]" >&2; exit 2 ;;
	esac
done
disk=$out/$input/disk.img
[ -f "$disk" ] || die "no $disk: run make bench-quick (or make bench INPUT=$input) first"
[ -x "$out/cfs-vmtool" ] || die "no $out/cfs-vmtool: run make bench-quick first"
perf=$(command -v perf) || die "perf is not installed (Debian package linux-perf)"
perf=$(readlink -f "$perf")
kinfo=$("$top/vm/kdir.sh" 2>&1) || die "$kinfo"
kdir=$(sed -n 1p <<<"$kinfo") krel=$(sed -n 2p <<<"$kinfo")
make -s -C "$top" kmod KDIR="$kdir" > "$out/profile-build.log" 2>&1 ||
	die "make kmod failed (log: $out/profile-build.log)"
kcache=$("$top/vm/fetch-kernel.sh" "$krel") || die "cannot fetch the kernel"
CFS_INITRAMFS_DKMS="SKIP not built for the profile" \
CFS_INITRAMFS_BIN="$out/cfs-benchtool=cfs-benchtool $top/bench/profile-guest.sh=cfs-bench $perf=perf" \
	"$top/vm/mkinitramfs.sh" "$out/profile-initramfs.cpio.gz" "$kcache" "$krel" \
	"$top/kmod/composefs.ko" "$out/cfs-vmtool" || die "cannot build the initramfs"
cp --sparse=always "$disk" "$out/profile-disk.img"
conf=$out/profile.conf
cp "$out/$input/disk/bench.conf" "$conf"
echo "OPS=\"${ops:-walk ls-lR stat-sample readdir-widest read-all}\" SYSTEMS=\"${CFS_PROFILE_SYSTEMS:-cfs}\" LIMIT=${CFS_PROFILE_LIMIT:-1.5} TOP=${CFS_PROFILE_TOP:-25} CHILDREN=\"${CFS_PROFILE_CHILDREN:-}\"" >> "$conf"
# A bench guest writes to its disk (the sealed copy of the image, cfs-v)
# and may leave the journal to replay: replay it before debugfs edits the
# disk, or the guest's replay at mount undoes the edit.
e2fsck -fy "$out/profile-disk.img" > /dev/null 2>&1 || [ $? -le 1 ] ||
	die "e2fsck of the profile's disk failed"
debugfs -w -R "rm bench.conf" "$out/profile-disk.img" > /dev/null 2>&1
debugfs -w -R "write $conf bench.conf" "$out/profile-disk.img" > /dev/null 2>&1 ||
	die "cannot write bench.conf into the profile's disk"
accel=tcg
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then accel=kvm; fi
qemu=(qemu-system-x86_64 -accel "$accel" -m "${CFS_VM_MEM:-8192}" -smp 2
	-nographic -no-reboot -serial mon:stdio
	-kernel "$kcache/boot/vmlinuz-$krel" -initrd "$out/profile-initramfs.cpio.gz"
	-drive "file=$out/profile-disk.img,if=virtio,format=raw,cache=none")
[ "$accel" = tcg ] && qemu+=(-cpu max)
timeout "${CFS_VM_TIMEOUT:-3600}" "${qemu[@]}" \
	-append "console=ttyS0 panic=-1 rdinit=/init loglevel=1 cfs.bench" \
	< /dev/null > "$out/profile-guest.log" 2>&1 || true
rm -f "$out/profile-disk.img"
grep -q '^CFS-PROFILE-END' "$out/profile-guest.log" ||
	{ tail -n 20 "$out/profile-guest.log" >&2; die "the guest did not finish (log: $out/profile-guest.log)"; }
sed -n '/^CFS-PROFILE-BEGIN/,/^CFS-PROFILE-END/p' "$out/profile-guest.log" | tr -d '\r' > "$out/profile-$input.txt"
echo "profile: $out/profile-$input.txt"
