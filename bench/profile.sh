#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Where the module's time goes: boots the bench guest (the vm/ kernel and
# the disk the last 'make bench' or 'make bench-quick' packed) with the
# host's perf in the initramfs and bench/profile-guest.sh as the guest's
# job. For each composefs operation of the bench it prints perf's top
# kernel symbols (cpu-clock samples, all CPUs: TCG has no PMU) and the
# composefs slab counts before and after. Output: build/bench/profile.txt.
#
# Usage: bench/profile.sh   (after make bench-quick; needs perf: linux-perf)
# Environment: CFS_VM_MEM (MiB, default 8192), CFS_VM_TIMEOUT (default 3600).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/bench
die() { echo "profile: $*" >&2; exit 1; }
[ -f "$out/disk.img" ] || die "no $out/disk.img: run make bench-quick first"
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
cp --sparse=always "$out/disk.img" "$out/profile-disk.img"
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
sed -n '/^CFS-PROFILE-BEGIN/,/^CFS-PROFILE-END/p' "$out/profile-guest.log" | tr -d '\r' > "$out/profile.txt"
echo "profile: $out/profile.txt"
