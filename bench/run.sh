#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# 'make bench' and 'make bench-quick': composefs against composefs 1.0
# (EROFS + overlayfs over the same store), squashfs (default compression
# and uncompressed) and erofs, and the store's files read directly, the
# limit of reads. On the host it makes the inputs (bench/mkinputs.py),
# times the image builds with hyperfine and records the sizes; then it
# packs every image onto one ext4 disk and boots the
# vm/ harness's kernel and initramfs once with "cfs.bench", where
# bench/guest.sh measures. bench/report.py turns both into
# bench/results/DATE-KERNEL.json, bench/results/latest.md, the chart
# bench/results/latest.png and README's "## Benchmarks" section.
#
# Usage: bench/run.sh [--quick] [--runs N] [--os-cap BYTES] [--reuse-disk]
#   --quick        a reduced set: smaller synthetic trees, no OS tree, 3 runs
#   --reuse-disk   skip the host part, boot with the last run's bench disk
#   --runs N       runs per figure (default 5, quick 3)
#   --os-cap B     cut each file of the OS tree to B bytes (default 8192)
# Environment: CFS_BENCH_DATA (directory holding the CentOS Stream 9
#   listing cs9-x86_64-developer.dump.gz; default ../shared/data from the
#   top of the repository), CFS_VM_MEM (MiB, default 8192), CFS_VM_TIMEOUT
#   (seconds, default 7200), KDIR (vm/kdir.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick= runs= os_cap=8192 reuse=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--runs) runs=$2; shift 2 ;;
	--os-cap) os_cap=$2; shift 2 ;;
	--reuse-disk) reuse=1; shift ;;
	-h|--help) sed -n '3,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/run.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }

if [ -n "$quick" ]; then
	runs=${runs:-3} wide=10000 depth=32 big_mib=16 vfiles=400 rand=500 hruns=2
else
	runs=${runs:-5} wide=20000 depth=64 big_mib=64 vfiles=1500 rand=2000 hruns=5
fi
data=${CFS_BENCH_DATA:-$top/../shared/data}
dump=$data/cs9-x86_64-developer.dump.gz
with_os=
if [ -z "$quick" ]; then
	if [ -f "$dump" ]; then
		with_os=1
	else
		say "no $dump: the OS tree is left out, synthetic sets only"
	fi
fi
for t in mksquashfs mkfs.erofs hyperfine gnuplot mke2fs qemu-system-x86_64; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done

out=$top/build/bench
mkdir -p "$out"
host=$out/host.txt
kinfo=$("$top/vm/kdir.sh" 2>&1) || die "$kinfo"
kdir=$(sed -n 1p <<<"$kinfo") krel=$(sed -n 2p <<<"$kinfo")

say "building cfsctl, composefs.ko and the guest tools"
make -s -C "$top" build/cfsctl kmod KDIR="$kdir" > "$out/build.log" 2>&1 ||
	{ tail -n 20 "$out/build.log" >&2; die "build failed (log: $out/build.log)"; }
cfsctl=$top/build/cfsctl
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/cfs-vmtool" "$top/vm/cfs-vmtool.c"
${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/cfs-benchtool" "$top/bench/cfs-benchtool.c"
kcache=$("$top/vm/fetch-kernel.sh" "$krel") || die "cannot fetch linux-image-$krel-unsigned"

if [ -z "$reuse" ] || [ ! -f "$out/disk.img" ]; then
# ---- inputs: kept between runs while their recipe is unchanged ----
w=$out/inputs
recipe="$(md5sum < "$top/bench/mkinputs.py") $wide $depth $big_mib $vfiles ${with_os:+os $os_cap}"
if [ "$(cat "$w/.recipe" 2>/dev/null)" != "$recipe" ]; then
	say "making the input trees"
	rm -rf "$w"
	mkdir -p "$w"
	python3 "$top/bench/mkinputs.py" synth "$w/synth" --wide $wide --depth $depth --big-mib $big_mib
	python3 "$top/bench/mkinputs.py" versions "$w/verA" "$w/verB" --files $vfiles
	if [ -n "$with_os" ]; then
		python3 "$top/bench/mkinputs.py" os "$dump" "$w/os" --cap "$os_cap"
	fi
	echo "$recipe" > "$w/.recipe"
fi
inputs="synth"
[ -n "$with_os" ] && inputs="os synth"
all_trees="$inputs verA verB"

# ---- images, build times and sizes ----
d=$out/disk
rm -rf "$d" "$out/hyperfine"
mkdir -p "$d" "$out/hyperfine"
store_of() { case $1 in verA|verB) echo store-ver ;; *) echo "store-$1" ;; esac; }
: > "$host"
# The composefs 1.0 (cfs1) images go first, so that the store their build
# writes alone is measured before the v1 build adds to it (an EROFS image
# inlines files of up to 64 bytes, which need no object).
for t in $all_trees; do
	say "building the EROFS image of $t"
	"$cfsctl" build --format=erofs --digest-store "$d/$(store_of "$t")" "$w/$t" "$d/$t.cfs1" > /dev/null
	case $t in verA|verB) ;; *) echo "store1 $t $(du -s -B1 "$d/$(store_of "$t")" | cut -f1)" >> "$host" ;; esac
done
echo "store1 verA+verB $(du -s -B1 "$d/store-ver" | cut -f1)" >> "$host"
for t in $all_trees; do
	src=$w/$t
	st=$d/$(store_of "$t")
	say "building the images of $t"
	"$cfsctl" build --digest-store "$st" "$src" "$d/$t.cfs" > /dev/null
	mksquashfs "$src" "$d/$t.sqfs" -noappend -quiet > /dev/null
	mksquashfs "$src" "$d/$t.sqfsu" -noappend -quiet -noI -noD -noF -noX > /dev/null
	mkfs.erofs --quiet "$d/$t.erofs" "$src" > /dev/null
	files=$(find "$src" | wc -l)
	bytes=$(find "$src" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
	echo "tree $t $files $bytes" >> "$host"
	for f in cfs cfs1 sqfs sqfsu erofs; do
		echo "size $t $f $(stat -c %s "$d/$t.$f") $(du -s -B1 "$d/$t.$f" | cut -f1)" >> "$host"
	done
	case $t in verB) ;; *)
		# one store's allocated size (verA's store holds verB's objects too)
		[ "$t" = verA ] || echo "store $t $(du -s -B1 "$st" | cut -f1)" >> "$host" ;;
	esac
	if [ "$t" != verB ]; then
		say "timing the builds of $t (hyperfine, $hruns runs)"
		tmp=$out/hf-tmp
		hyperfine -N --runs "$hruns" --style none --export-json "$out/hyperfine/$t.json" \
			--prepare "rm -rf $tmp" \
			-n cfs "bash -c 'mkdir -p $tmp && $cfsctl build --digest-store $tmp/store $src $tmp/i.cfs'" \
			-n cfs1 "bash -c 'mkdir -p $tmp && $cfsctl build --format=erofs --digest-store $tmp/store $src $tmp/i.cfs1'" \
			-n squashfs "bash -c 'mkdir -p $tmp && mksquashfs $src $tmp/i.sqfs -noappend -quiet'" \
			-n squashfs-u "bash -c 'mkdir -p $tmp && mksquashfs $src $tmp/i.sqfs -noappend -quiet -noI -noD -noF -noX'" \
			-n erofs "bash -c 'mkdir -p $tmp && mkfs.erofs --quiet $tmp/i.erofs $src'" \
			> /dev/null 2> "$out/hyperfine/$t.err" ||
			{ cat "$out/hyperfine/$t.err" >&2; die "hyperfine failed"; }
		rm -rf "$tmp"
	fi
done
echo "store verA+verB $(du -s -B1 "$d/store-ver" | cut -f1)" >> "$host"

# The store system reads each regular file's object straight from the
# store, in the order a walk of the composefs mount reads the files.
for t in $inputs; do
	"$cfsctl" inspect dump "$d/$t.cfs" > "$out/$t.dump"
	python3 "$top/bench/mkinputs.py" objects "$out/$t.dump" > "$d/$t.objects"
done
bigobj=$(awk '$1 == "/big.bin" { print $9 }' "$out/synth.dump")
[ -n "$bigobj" ] || die "no object for /big.bin in $d/synth.cfs"

# What the guest measures, where.
{
	echo "RUNS=$runs"
	echo "RAND=$rand"
	echo "INPUTS=\"$inputs\""
	echo "PAIR=\"verA verB\""
	echo "PAIR_store=store-ver"
	echo "synth_store=store-synth synth_widest=wide1 synth_big=big.bin synth_bigobj=$bigobj"
	[ -z "$with_os" ] || echo "os_store=store-os os_widest=usr/bin os_big="
} > "$d/bench.conf"
for t in $inputs; do
	python3 "$top/bench/mkinputs.py" sample "$w/$t" 1000 > "$d/$t.sample"
	case $t in os) wd=usr/bin ;; *) wd=wide1 ;; esac
	echo "widest $t $wd $(ls -A "$w/$t/$wd" | wc -l)" >> "$host"
done
mb=$(du -s -BM "$d" | cut -f1 | tr -d M)
say "packing the bench disk ($mb MiB of data)"
rm -f "$out/disk.img"
mke2fs -q -F -t ext4 -b 4096 -O verity -N 400000 -L cfsbench -d "$d" "$out/disk.img" $((mb * 13 / 10 + 256))M
fi

say "building the initramfs"
CFS_INITRAMFS_DKMS="SKIP not built for the benchmark" \
CFS_INITRAMFS_BIN="$out/cfs-benchtool=cfs-benchtool $top/bench/guest.sh=cfs-bench" \
	"$top/vm/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$kcache" "$krel" \
	"$top/kmod/composefs.ko" "$out/cfs-vmtool" "$cfsctl" || die "cannot build the initramfs"

accel=${CFS_VM_ACCEL:-tcg}
if [ -z "${CFS_VM_ACCEL:-}" ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=kvm
fi
qemu=(qemu-system-x86_64 -accel "$accel" -m "${CFS_VM_MEM:-8192}" -smp 2
	-nographic -no-reboot -serial mon:stdio
	-kernel "$kcache/boot/vmlinuz-$krel" -initrd "$out/initramfs.cpio.gz"
	-drive "file=$out/disk.img,if=virtio,format=raw,cache=none")
[ "$accel" = tcg ] && qemu+=(-cpu max)
log=$out/guest.log
say "booting the guest ($accel); progress in $log"
start=$(date +%s)
timeout "${CFS_VM_TIMEOUT:-7200}" "${qemu[@]}" \
	-append "console=ttyS0 panic=-1 rdinit=/init loglevel=1 cfs.bench" < /dev/null > "$log" 2>&1 || true
grep -q $'^CFS-BENCH-END' "$log" || { tail -n 20 "$log" >&2; die "the guest did not finish (log: $log)"; }
if grep -q '^ERROR\|^R .* ERROR' "$log"; then
	grep '^ERROR\|^R .* ERROR' "$log" | head -n 5 >&2
	die "the guest reported errors (log: $log)"
fi
say "guest done in $(( $(date +%s) - start )) s"

cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
python3 "$top/bench/report.py" --top "$top" --host "$host" --hyperfine "$out/hyperfine" \
	--guest "$log" --kernel "$krel" --accel "$accel" --machine "$cpu, $(nproc) CPUs, $accel" \
	--mode "$([ -n "$quick" ] && echo quick || echo full)" --runs "$runs" \
	--os-cap "$([ -n "$with_os" ] && echo "$os_cap" || echo 0)" \
	--params "wide=$wide depth=$depth big_mib=$big_mib versions_files=$vfiles rand=$rand"
