#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The boot part of 'make bench' (bench/run.sh --part boot, docs/bench.md):
# one Debian 12 root booted in QEMU, with Debian's 6.12 kernel and its own
# initramfs (initramfs-tools and the cfsctl package's hook), five ways:
#   cfs       composefs v1 from the repository /cfs of an ext4 with
#             fs-verity (composefs=DIGEST, docs/boot.md)
#   cfs1      composefs 1.0 (EROFS + overlayfs) from the same repository
#   squashfs  the root as squashfs (mksquashfs's defaults) with an
#             overlayfs over it whose upper directory is a tmpfs, as live
#             systems boot
#   erofs     the root as erofs (mkfs.erofs's defaults), read-only
#   ext4      the root as plain ext4
#   ext4v     that ext4 with fs-verity on every file of /usr: what a
#             composefs root checks at every read, without composefs
# The root, its images and the repository are those of the boot test
# (vm/boot-test.sh --prepare). squashfs is not a module Debian's
# initramfs carries, so the initramfs booted for all six is Debian's with
# one more archive appended: squashfs.ko, a local-premount script that
# loads it and a local-bottom script that puts the overlayfs over the root
# with a static busybox of its own (both do nothing unless the command
# line asks).
#
# Each system's disk is booted once to warm it (a first boot copies /var
# into the repository's state and writes what systemd writes once), then
# RUNS times, each from a copy of that warmed disk, the systems taking
# turns within each round. The guest reports (vm/boot/guest-check.sh,
# cfs.bench) the monotonic time at which multi-user.target was reached,
# which counts from the kernel's start, the time systemd started (the end
# of the kernel and initramfs), and the sectors read from the disk. The
# medians go to bench/results/DATE-KERNEL-boot.json.
#
# Usage: bench/boot.sh [--runs N] [--commit C]
#   CFS_VM_MEM (MiB, default 1024), CFS_VM_ACCEL (kvm or tcg),
#   CFS_BOOT_TIMEOUT (seconds per boot, default 600).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 commit=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?--runs needs a number}; shift 2 ;;
	--commit) commit=${2:?--commit needs a commit}; shift 2 ;;
	-h|--help) sed -n '3,35p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/boot.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
say() { echo "bench: boot: $*" >&2; }
die() { echo "bench: boot: $*" >&2; exit 1; }
SYSTEMS="cfs cfs1 squashfs erofs ext4 ext4v"

[ "$(id -u)" = 0 ] || die "needs root (the boot test's chroot, mkfs)"
for t in mksquashfs mkfs.erofs mke2fs unmkinitramfs cpio xz qemu-system-x86_64; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done
[ -n "$commit" ] || commit=$(git -C "$top" log -1 --format=%h 2> /dev/null || echo unknown)

say "preparing the root, the packages and the repository (vm/boot-test.sh --prepare)"
vb=$("$top/vm/boot-test.sh" --prepare | tail -n 1) || die "vm/boot-test.sh --prepare failed: $vb"
[ -f "$vb/prepared" ] && [ -d "$vb/root" ] || die "vm/boot-test.sh --prepare made no root: $vb"
out=$top/build/bench/boot
mkdir -p "$out"
krel=$(sed -n 2p <<<"$("$top/vm/kdir.sh")")
accel=${CFS_VM_ACCEL:-tcg}
if [ -z "${CFS_VM_ACCEL:-}" ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=kvm
fi
cpu=
[ "$accel" = tcg ] && cpu="-cpu max"

# ---- the disks and the initramfs, kept while the prepared root is the same ----
stamp="$(cat "$vb/prepared") $(md5sum < "$0" | cut -c1-32) $(dpkg-query -W -f='${Version} ' squashfs-tools erofs-utils)"
if [ "$(cat "$out/.stamp" 2> /dev/null)" != "$stamp" ]; then
	rm -f "$out/.stamp" "$out"/*.img
	say "making the squashfs, erofs and ext4 disks of the root"
	mksquashfs "$vb/root" "$out/squashfs.img" -noappend -quiet > /dev/null || die "mksquashfs failed"
	mkfs.erofs --quiet "$out/erofs.img" "$vb/root" > /dev/null || die "mkfs.erofs failed"
	mb=$(du -s -BM "$vb/root" | cut -f1 | tr -d M)
	mke2fs -q -F -t ext4 -b 4096 -L cfsroot -d "$vb/root" "$out/ext4.img" $((mb * 13 / 10 + 512))M ||
		die "mke2fs failed"
	# ext4v: fs-verity is enabled in a helper boot (the host's filesystem
	# may have none), the boot test's, told to enable it under /usr.
	mke2fs -q -F -t ext4 -b 4096 -O verity -L cfsroot -d "$vb/root" "$out/ext4v.img" \
		$((mb * 13 / 10 + 512))M || die "mke2fs failed"
	timeout "${CFS_BOOT_TIMEOUT:-600}" qemu-system-x86_64 -accel "$accel" -m "${CFS_VM_MEM:-1024}" -smp 2 \
		-nographic -no-reboot -serial mon:stdio -kernel "$vb/vmlinuz" -initrd "$vb/verity-initramfs.cpio.gz" \
		-append "console=ttyS0 panic=-1 rdinit=/init loglevel=4 cfs.verity=usr" $cpu \
		-drive "file=$out/ext4v.img,if=virtio,format=raw" < /dev/null 2>&1 | tr -d '\r' > "$out/ext4v-verity.log" || true
	grep -q 'CFS-VERITY ok' "$out/ext4v-verity.log" ||
		die "the helper boot did not enable fs-verity on ext4v's /usr (log: $out/ext4v-verity.log)"
	cp --sparse=always "$vb/disk.img" "$out/cfs.img"
	cp --sparse=always "$vb/disk.img" "$out/cfs1.img"

	# The initramfs: Debian's, and an archive appended that the kernel
	# unpacks over it (later files replace earlier ones): squashfs.ko and
	# the two scripts, named in their stages' ORDER files.
	ir=$out/initramfs-extra
	rm -rf "$ir" "$out/unpacked"
	unmkinitramfs "$vb/initrd.img" "$out/unpacked" || die "unmkinitramfs $vb/initrd.img failed"
	main=$out/unpacked
	[ -d "$main/main" ] && main=$main/main
	mkdir -p "$ir/scripts/local-premount" "$ir/scripts/local-bottom" "$ir/cfs-bench"
	# its own tools: static, as a live system's initramfs has them
	cp /bin/busybox "$ir/cfs-bench/busybox" || die "no /bin/busybox (busybox-static)"
	ko=$(find "$vb/root/usr/lib/modules/$krel" -name 'squashfs.ko*' -print -quit)
	[ -n "$ko" ] || die "the root has no squashfs module for $krel"
	case $ko in *.xz) xz -dc "$ko" > "$ir/cfs-bench/squashfs.ko" ;; *) cp "$ko" "$ir/cfs-bench/squashfs.ko" ;; esac
	cat > "$ir/scripts/local-premount/cfs-bench" <<-'EOF'
	#!/bin/sh
	# The boot benchmark (bench/boot.sh): squashfs for a squashfs root.
	case ${1:-} in prereqs) exit 0 ;; esac
	case " $(cat /proc/cmdline) " in *" cfs.bench.squashfs "*) insmod /cfs-bench/squashfs.ko ;; esac
	exit 0
	EOF
	cat > "$ir/scripts/local-bottom/cfs-bench" <<-'EOF'
	#!/bin/sh
	# The boot benchmark (bench/boot.sh): an overlayfs over the root, its
	# upper directory a tmpfs, as live systems boot.
	case ${1:-} in prereqs) exit 0 ;; esac
	case " $(cat /proc/cmdline) " in *" cfs.bench.overlay "*) ;; *) exit 0 ;; esac
	. /scripts/functions
	bb=/cfs-bench/busybox
	r=/run/cfs-bench
	$bb mkdir -p $r/lower $r/rw &&
	$bb mount -o move "${rootmnt:-/root}" $r/lower &&
	$bb mount -t tmpfs -o mode=0755 tmpfs $r/rw &&
	$bb mkdir -p $r/rw/upper $r/rw/work &&
	$bb mount -t overlay -o lowerdir=$r/lower,upperdir=$r/rw/upper,workdir=$r/rw/work overlay "${rootmnt:-/root}" ||
		panic "cfs-bench: cannot put an overlayfs over the root"
	exit 0
	EOF
	chmod 0755 "$ir/scripts/local-premount/cfs-bench" "$ir/scripts/local-bottom/cfs-bench"
	for stage in local-premount local-bottom; do
		order=$main/scripts/$stage/ORDER
		[ -f "$order" ] || die "Debian's initramfs has no scripts/$stage/ORDER"
		{ grep -v '^\[ -e /conf/param.conf \]' "$order"
		  echo "/scripts/$stage/cfs-bench \"\$@\""
		  echo '[ -e /conf/param.conf ] && . /conf/param.conf'; } > "$ir/scripts/$stage/ORDER"
	done
	cp "$vb/initrd.img" "$out/initrd.img"
	(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 >> "$out/initrd.img"
	rm -rf "$ir" "$out/unpacked"
	echo "$stamp" > "$out/.stamp"
fi
v1=$(cat "$vb/v1.digest") erofs=$(cat "$vb/erofs.digest")
for s in $SYSTEMS; do
	echo "$s $(stat -c %s "$out/$s.img") $(du -s -B1 "$out/$s.img" | cut -f1)"
done > "$out/sizes.txt"

cmdline() {
	local c="console=ttyS0 quiet panic=-1 cfs.bench"
	case $1 in
	cfs) echo "$c root=/dev/vda rw composefs=$v1" ;;
	cfs1) echo "$c root=/dev/vda rw composefs=$erofs" ;;
	squashfs) echo "$c root=/dev/vda rootfstype=squashfs ro cfs.bench.squashfs cfs.bench.overlay" ;;
	erofs) echo "$c root=/dev/vda rootfstype=erofs ro" ;;
	ext4 | ext4v) echo "$c root=/dev/vda rw" ;;
	esac
}
# boot SYSTEM DISK LOG: one boot; prints "SYSTEM multi_user_us
# userspace_us read_sectors root" from the guest's report
boot() {
	local q=(qemu-system-x86_64 -accel "$accel" -m "${CFS_VM_MEM:-1024}" -smp 2 -nographic
		-no-reboot -serial mon:stdio -kernel "$vb/vmlinuz" -initrd "$out/initrd.img"
		-append "$(cmdline "$1")" -drive "file=$2,if=virtio,format=raw,cache=none")
	local line try
	[ "$accel" = tcg ] && q+=(-cpu max)
	for try in 1 2; do
		timeout "${CFS_BOOT_TIMEOUT:-600}" "${q[@]}" < /dev/null 2>&1 | tr -d '\r' > "$3" || true
		line=$(grep -a -o 'CFS-BOOT bench .*' "$3" | tail -n 1) && break
		# TCG with two CPUs now and then faults patching the kernel's
		# own code early in boot (an oops in the idle task, before any
		# root is mounted): that boot is done again, once, and said.
		if [ "$try" = 1 ] && grep -q 'Comm: swapper' "$3"; then
			cp "$3" "$3.panic"
			echo "bench: boot: $1: the kernel panicked before the initramfs ran (log: $3.panic); booting again" >&2
			continue
		fi
		tail -n 15 "$3" >&2
		die "$1: no report from the booted system (log: $3)"
	done
	sed -E 's/.*userspace_us=([0-9]+) multi_user_us=([0-9]+) read_sectors=([0-9]+) root=([a-z0-9]+).*/\2 \1 \3 \4/' \
		<<<"$line" | sed "s/^/$1 /"
}

say "warming each system's disk with one boot ($accel)"
for s in $SYSTEMS; do
	w=$(boot "$s" "$out/$s.img" "$out/$s-warm.log")
	say "  $s: $w"
done
: > "$out/samples.txt"
for ((i = 1; i <= runs; i++)); do
	for s in $SYSTEMS; do
		[ -t 2 ] && printf '\rbench: boot: round %d of %d: %-9s' "$i" "$runs" "$s" >&2
		cp --sparse=always "$out/$s.img" "$out/run.img"
		r=$(boot "$s" "$out/run.img" "$out/$s-$i.log")
		echo "$i $r" >> "$out/samples.txt"
	done
	[ -t 2 ] && printf '\r\033[K' >&2
	say "round $i of $runs: $(awk -v r="$i" '$1 == r { printf "%s %.1f s  ", $2, $3 / 1e6 }' "$out/samples.txt")"
done
rm -f "$out/run.img"

python3 - "$out/samples.txt" "$out/sizes.txt" "$top/bench/results" "$krel" "$commit" "$accel" "$runs" <<'EOF'
import datetime, json, os, statistics, sys
samples, sizes, resdir, krel, commit, accel, runs = sys.argv[1:]
rows = [l.split() for l in open(samples) if l.strip()]
size = {l.split()[0]: (int(l.split()[1]), int(l.split()[2])) for l in open(sizes)}
systems = ["cfs", "cfs1", "squashfs", "erofs", "ext4", "ext4v"]
by = {s: [r for r in rows if r[1] == s] for s in systems}
med = lambda v: statistics.median(v)
res = {}
for s in systems:
    mu = [int(r[2]) / 1e6 for r in by[s]]
    us = [int(r[3]) / 1e6 for r in by[s]]
    rd = [int(r[4]) * 512 for r in by[s]]
    res[s] = {"runs": len(mu), "multi_user_s": med(mu), "min_s": min(mu), "max_s": max(mu),
              "kernel_initramfs_s": med(us), "read_bytes": med(rd), "root": by[s][0][5],
              "disk_bytes": size[s][0], "disk_allocated": size[s][1]}
# The ratio of each round's two boots, median over the rounds, beside the
# ratio of the medians: both systems booted in the same round.
def per_round(a, b):
    x = {r[0]: int(r[2]) for r in by[a]}
    y = {r[0]: int(r[2]) for r in by[b]}
    return med([x[k] / y[k] for k in x if k in y])
for s in systems:
    res[s]["ratio_to_ext4"] = res[s]["multi_user_s"] / res["ext4"]["multi_user_s"]
    res[s]["ratio_to_ext4_per_round"] = per_round(s, "ext4")
    res[s]["ratio_to_squashfs"] = res[s]["multi_user_s"] / res["squashfs"]["multi_user_s"]
    res[s]["ratio_to_ext4v"] = res[s]["multi_user_s"] / res["ext4v"]["multi_user_s"]
    res[s]["ratio_to_ext4v_per_round"] = per_round(s, "ext4v")
now = datetime.datetime.now(datetime.timezone.utc)
doc = {"benchmark": "boot", "part": "boot", "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
       "kernel": krel, "commit": commit, "accel": accel, "runs": int(runs),
       "machine": f"{os.cpu_count()} CPUs, {accel}", "results": res}
os.makedirs(resdir, exist_ok=True)
path = os.path.join(resdir, f"{now:%Y-%m-%d}-{krel}-boot.json")
with open(path + ".tmp", "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
os.rename(path + ".tmp", path)
print(f"| system | kernel to multi-user (median, min-max) | of it kernel + initramfs | x ext4 (per round) | x squashfs | x ext4v (per round) | read from disk |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for s in systems:
    r = res[s]
    print(f"| {s} | {r['multi_user_s']:.2f} s ({r['min_s']:.2f}-{r['max_s']:.2f}) | {r['kernel_initramfs_s']:.2f} s "
          f"| {r['ratio_to_ext4']:.3f} ({r['ratio_to_ext4_per_round']:.3f}) | {r['ratio_to_squashfs']:.3f} "
          f"| {r['ratio_to_ext4v']:.3f} ({r['ratio_to_ext4v_per_round']:.3f}) "
          f"| {r['read_bytes'] / 1048576:.1f} MiB |")
print(f"bench: boot: wrote {path}", file=sys.stderr)
EOF
