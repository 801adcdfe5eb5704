#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# 'make bench' and 'make bench-quick': composefs against composefs 1.0
# (EROFS + overlayfs over the same store), squashfs (default compression
# and uncompressed) and erofs, and for reads two references on the bench
# disk's ext4: the store's files read directly (the limit of reads) and
# the image's tree as plain directories of hardlinks to those files (the
# same walk and opens as on a mount, with no stacking). The work is cut
# into parts, each measured on its own and kept in its own result, so that
# a run can stop and go on later:
#   INPUT-build  on the host: the builds of INPUT timed with hyperfine, each
#                run into a new ext4 (bench/buildfs.sh), and the sizes
#   INPUT-meta   in one boot: walk, ls -lR, random lstat, readdir
#   INPUT-read   in one boot: read every file (and 4k reads of a large file)
#   versions     in one boot: page-cache sharing of two versions of a tree
#   boot         a Debian 12 booted from composefs v1 and 1.0, squashfs,
#                erofs and ext4 roots, RUNS boots each (bench/boot.sh)
#   scale        on the host: trees of 100k and 1M files and dumpfiles of
#                1M and 10M entries, per entry (bench/scale.sh; full runs)
# for the inputs os (the CentOS Stream 9 tree; full runs only) and synth.
# A boot measures every system of each of its figures, cold and warm. Each
# part writes bench/results/DATE-KERNEL-PART[-quick].json; bench/report.py
# then builds bench/results/latest.md, the chart latest.png and docs/bench.md's
# "## The latest figures" from the newest result of every part.
#
# Usage: bench/run.sh [--quick] [--input NAME] [--part NAME] [--force]
#                     [--list] [--runs N] [--os-cap BYTES]
#   --quick        a reduced set: smaller synthetic trees, no OS tree, 3 runs
#   --input NAME   only the parts of this input (os, synth or versions)
#   --part NAME    only this part (os-meta, synth-read, ...)
#   --force        measure parts again that already have a result of this
#                  mode for this commit and kernel (without it they are
#                  skipped, so an interrupted run goes on where it stopped)
#   --list         print the parts, whether each is measured, and the time
#                  each is expected to take; measure nothing
#   --runs N       runs per figure (default 5, quick 3)
#   --os-cap B     cut each file of the OS tree to B bytes (default 8192)
# Environment: CFS_BENCH_DATA (directory holding the CentOS Stream 9
#   listing cs9-x86_64-developer.dump.gz; default ../shared/data from the
#   top of the repository), CFS_VM_MEM (MiB, default 8192), CFS_VM_TIMEOUT
#   (seconds per boot, default 3600), KDIR (vm/kdir.sh), KREL (a cached
#   kernel release to build the module for and boot, as make vm-test KREL=;
#   newest: the one make kernels resolved).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick= runs= os_cap=8192 only_input= only_part= force= list=
while [ $# -gt 0 ]; do
	case $1 in
	--quick) quick=1; shift ;;
	--input) only_input=${2:?--input needs a name}; shift 2 ;;
	--part) only_part=${2:?--part needs a name}; shift 2 ;;
	--force) force=1; shift ;;
	--list) list=1; shift ;;
	--runs) runs=${2:?--runs needs a number}; shift 2 ;;
	--os-cap) os_cap=${2:?--os-cap needs a size}; shift 2 ;;
	-h|--help) sed -n '3,39p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/run.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
say() { echo "bench: $*" >&2; }
die() { echo "bench: $*" >&2; exit 1; }
. "$top/bench/lib.sh"

if [ -n "$quick" ]; then
	mode=quick runs=${runs:-3} wide=10000 depth=32 big_mib=16 vfiles=400 rand=500
else
	mode=full runs=${runs:-5} wide=20000 depth=64 big_mib=64 vfiles=1500 rand=2000
fi
hruns=$runs
data=${CFS_BENCH_DATA:-$top/../shared/data}
dump=$data/cs9-x86_64-developer.dump.gz
params="wide=$wide depth=$depth big_mib=$big_mib versions_files=$vfiles rand=$rand"

# The parts: name, input, what is measured ("build" on the host, "pair"
# for the page-cache sharing, else the figures of one boot), and the
# minutes a full and a quick run of it take here (2 cores, TCG), for the
# time shown before a part has a result of its own to go by.
META="walk ls-lR stat-sample readdir-widest"
PARTS="os-build os build 4 -
os-meta os $META 30 -
os-read os read-all 45 -
synth-build synth build 3 2
synth-meta synth $META 12 6
synth-read synth read-all,seq-4k,rand-4k 15 7
versions versions pair 6 4
boot boot boot 35 25
scale scale scale 25 -"
PARTS=${PARTS//"$META"/${META// /,}}
case $only_input in ""|os|synth|versions|boot|scale) ;; *) die "no input '$only_input' (os, synth, versions, boot or scale)" ;; esac
if [ -n "$only_part" ] && ! awk -v p="$only_part" '$1 == p {f = 1} END {exit !f}' <<<"$PARTS"; then
	die "no part '$only_part' (bench/run.sh --list)"
fi

# What the results are measured against: the last commit that changed
# anything but results and documents, or "dirty" when the tree differs.
measured_paths=(. ':(exclude)bench/results' ':(exclude)README.md' ':(exclude)docs')
commit=$(git -C "$top" log -1 --format=%h -- "${measured_paths[@]}" 2> /dev/null || echo unknown)
if [ -n "$(git -C "$top" status --porcelain --untracked-files=no -- "${measured_paths[@]}" 2> /dev/null)" ]; then
	commit=$commit-dirty
fi
kinfo=$("$top/vm/kdir.sh" 2>&1) || die "$kinfo"
krel=$(sed -n 2p <<<"$kinfo")
report() { python3 "$top/bench/report.py" "$@"; }
# The boot and scale parts keep their own results (bench/boot.sh,
# bench/scale.sh): own_done PART says whether one is of this commit (and
# for boot, this kernel).
own_done() {
	python3 - "$top/bench/results" "$commit" "$krel" "$mode" "$1" <<-'EOF'
	import glob, json, sys
	d, commit, krel, mode, part = sys.argv[1:]
	want = 3 if part == "scale" or mode != "full" else 5
	for p in glob.glob(f"{d}/*-{krel if part == 'boot' else 'host'}-{part}.json"):
	    r = json.load(open(p))
	    if r.get("commit") == commit and r.get("runs", 0) >= want and not commit.endswith("-dirty"):
	        sys.exit(0)
	sys.exit(1)
	EOF
}

plan=() total=0
while read -r name input what full_min quick_min; do
	[ -z "$only_input" ] || [ "$input" = "$only_input" ] || continue
	[ -z "$only_part" ] || [ "$name" = "$only_part" ] || continue
	est=$full_min
	if [ -n "$quick" ]; then
		[ "$quick_min" = - ] && continue
		est=$quick_min
	fi
	if [ "$input" = os ] && [ ! -f "$dump" ]; then
		say "$name: left out: no $dump (set CFS_BENCH_DATA)"
		continue
	fi
	prev=$(report expected --top "$top" --part "$name" --mode "$mode")
	[ -n "$prev" ] && est=$(( (prev + 59) / 60 ))
	if { [ "$name" = boot ] || [ "$name" = scale ]; } && [ -z "$force" ] && own_done "$name"; then
		say "$name: measured already ($mode, commit $commit, $krel); --force measures it again"
		continue
	fi
	if [ "$name" != boot ] && [ "$name" != scale ] && [ -z "$force" ] && report done --top "$top" --part "$name" --mode "$mode" \
			--commit "$commit" --kernel "$krel"; then
		say "$name: measured already ($mode, commit $commit, $krel); --force measures it again"
		continue
	fi
	plan+=("$name $input $what $est")
	total=$((total + est))
	say "$name: to measure, about $est min"
done <<<"$PARTS"
[ -n "$list" ] && { say "${#plan[@]} parts to measure, about $total min in all"; exit 0; }
if [ ${#plan[@]} = 0 ]; then
	say "nothing to measure"
	report render --top "$top" > /dev/null
	exit 0
fi
say "measuring ${#plan[@]} parts ($mode, commit $commit), about $total min in all"

for t in mksquashfs mkfs.erofs hyperfine gnuplot mke2fs debugfs qemu-system-x86_64 losetup; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done
out=$top/build/bench
bench_setup "$out"

# ---- inputs: kept between runs while their recipe is unchanged ----
# make_tree NAME: the tree build/bench/inputs/NAME (verA and verB together)
make_tree() {
	local t=$1 w=$out/inputs recipe
	case $t in
	os) recipe="os $os_cap" ;;
	synth) recipe="synth $wide $depth $big_mib" ;;
	verA|verB) recipe="versions $vfiles"; t=verA ;;
	esac
	recipe="$(md5sum < "$top/bench/mkinputs.py" | cut -c1-32) $recipe"
	[ "$(cat "$w/.recipe-$t" 2> /dev/null)" = "$recipe" ] && return 0
	say "making the input tree $t"
	mkdir -p "$w"
	rm -f "$w/.recipe-$t"
	case $t in
	os) rm -rf "$w/os"; python3 "$top/bench/mkinputs.py" os "$dump" "$w/os" --cap "$os_cap" ;;
	synth) rm -rf "$w/synth"
	       python3 "$top/bench/mkinputs.py" synth "$w/synth" --wide $wide --depth $depth --big-mib $big_mib ;;
	verA) rm -rf "$w/verA" "$w/verB"
	      python3 "$top/bench/mkinputs.py" versions "$w/verA" "$w/verB" --files $vfiles ;;
	esac
	echo "$recipe" > "$w/.recipe-$t"
}

# ---- images and the bench disk of one input, kept while nothing changed ----
# prepare INPUT: build/bench/INPUT/ holds the images, their store, the
# host's figures (host.txt) and the guest's disk (disk.img)
prepare() {
	local in=$1 d trees st stamp t src files bytes wd bigobj mb f o i1 i2
	case $in in versions) trees="verA verB" st=store-ver ;; *) trees=$in st=store-$in ;; esac
	for t in $trees; do make_tree "$t"; done
	d=$out/$in
	stamp="$(cat "$out/inputs/.recipe-${trees%% *}" | md5sum | cut -c1-32) $(md5sum < "$cfsctl" | cut -c1-32) $(mksquashfs -version 2>&1 | head -n 1) $(md5sum < "$top/bench/run.sh" | cut -c1-32)"
	[ "$(cat "$d/.stamp" 2> /dev/null)" = "$stamp" ] && return 0
	say "building the images of $in"
	rm -rf "$d"
	mkdir -p "$d/disk"
	: > "$d/host.txt"
	# The composefs 1.0 (cfs1) images go first, so that the store their
	# build writes alone is measured before the v1 build adds to it (an
	# EROFS image inlines files of up to 64 bytes, which need no object).
	for t in $trees; do
		"$cfsctl" build --format=erofs --digest-store "$d/disk/$st" "$out/inputs/$t" "$d/disk/$t.cfs1" > /dev/null
	done
	echo "store1 ${trees// /+} $(du -s -B1 "$d/disk/$st" | cut -f1)" >> "$d/host.txt"
	for t in $trees; do
		src=$out/inputs/$t
		"$cfsctl" build --digest-store "$d/disk/$st" "$src" "$d/disk/$t.cfs" > /dev/null
		mksquashfs "$src" "$d/disk/$t.sqfs" -noappend -quiet > /dev/null
		mksquashfs "$src" "$d/disk/$t.sqfsu" -noappend -quiet -noI -noD -noF -noX > /dev/null
		mkfs.erofs --quiet "$d/disk/$t.erofs" "$src" > /dev/null
		files=$(find "$src" | wc -l)
		bytes=$(find "$src" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
		echo "tree $t $files $bytes" >> "$d/host.txt"
		for f in cfs cfs1 sqfs sqfsu erofs; do
			echo "size $t $f $(stat -c %s "$d/disk/$t.$f") $(du -s -B1 "$d/disk/$t.$f" | cut -f1)" >> "$d/host.txt"
		done
	done
	echo "store ${trees// /+} $(du -s -B1 "$d/disk/$st" | cut -f1)" >> "$d/host.txt"
	{
		echo "RUNS=$runs RAND=$rand STORE=$st"
		if [ "$in" = versions ]; then
			echo "INPUT= PAIR=\"verA verB\""
		else
			# The store system reads each regular file's object straight
			# from the store, in the order a walk of the composefs mount
			# reads the files.
			"$cfsctl" inspect dump "$d/disk/$in.cfs" > "$d/$in.dump"
			python3 "$top/bench/mkinputs.py" objects "$d/$in.dump" > "$d/disk/$in.objects"
			# The tree system: the image's tree as plain directories on
			# the same ext4, its files hardlinks to the store's objects
			# (mke2fs -d keeps hardlinks), read the way a mount is read.
			python3 "$top/bench/mkinputs.py" linktree "$d/$in.dump" "$d/disk/$st" "$d/disk/tree-$in"
			python3 "$top/bench/mkinputs.py" sample "$out/inputs/$in" 1000 > "$d/disk/$in.sample"
			case $in in os) wd=usr/bin big= bigobj= ;; *) wd=wide1 big=big.bin ;; esac
			if [ -n "$big" ]; then
				bigobj=$(awk -v p="/$big" '$1 == p { print $9 }' "$d/$in.dump")
				[ -n "$bigobj" ] || die "no object for /$big in $d/disk/$in.cfs"
			fi
			echo "INPUT=$in PAIR= WIDEST=$wd BIG=$big BIGOBJ=$bigobj TREE=tree-$in"
			echo "widest $in $wd $(ls -A "$out/inputs/$in/$wd" | wc -l)" >> "$d/host.txt"
		fi
	} > "$d/disk/bench.conf"
	mb=$(du -s -BM "$d/disk" | cut -f1 | tr -d M)
	say "packing the bench disk of $in ($mb MiB of data)"
	mke2fs -q -F -t ext4 -b 4096 -O verity -N 400000 -L cfsbench -d "$d/disk" "$d/disk.img" $((mb * 13 / 10 + 256))M
	if [ "$in" != versions ]; then
		# The tree's files must stay the store's inodes on the disk.
		read -r f o < <(awk '$3 ~ /^10/ && $9 != "-" && index($1, "\\") == 0 { print $1, $9; exit }' "$d/$in.dump")
		i1=$(debugfs -R "stat tree-$in$f" "$d/disk.img" 2> /dev/null | grep -o 'Inode: [0-9]*') || i1=
		i2=$(debugfs -R "stat $st/$o" "$d/disk.img" 2> /dev/null | grep -o 'Inode: [0-9]*') || i2=
		[ -n "$i1" ] && [ "$i1" = "$i2" ] ||
			die "$d/disk.img: tree-$in$f is not the inode of its object $st/$o"
	fi
	echo "$stamp" > "$d/.stamp"
}

# ---- one part on the host: the builds, timed ----
# Each run builds into a new ext4 on a loop device (bench/buildfs.sh) and
# ends with its data synced, so every tool pays for what it writes.
time_builds() {
	local in=$1 t mnt img size bytes
	case $in in versions) t=verA ;; *) t=$in ;; esac
	src=$out/inputs/$t
	mnt=$out/buildfs img=$out/buildfs.img
	bytes=$(du -s -B1 "$src" | cut -f1)
	size=$(( bytes * 4 + (512 << 20) ))
	say "timing the builds of $t (hyperfine, $hruns runs, each into a new ext4)"
	mkdir -p "$out/hyperfine"
	hyperfine -N --runs "$hruns" --style none --export-json "$out/hyperfine/$t.json" \
		--prepare "$top/bench/buildfs.sh $img $mnt $size" \
		-n cfs "sh -c '$cfsctl build --digest-store $mnt/store $src $mnt/i.cfs && sync -f $mnt'" \
		-n cfs1 "sh -c '$cfsctl build --format=erofs --digest-store $mnt/store $src $mnt/i.cfs1 && sync -f $mnt'" \
		-n cfs-image "sh -c '$cfsctl build $src $mnt/i.cfs && sync -f $mnt'" \
		-n squashfs "sh -c 'mksquashfs $src $mnt/i.sqfs -noappend -quiet && sync -f $mnt'" \
		-n squashfs-u "sh -c 'mksquashfs $src $mnt/i.sqfs -noappend -quiet -noI -noD -noF -noX && sync -f $mnt'" \
		-n erofs "sh -c 'mkfs.erofs --quiet $mnt/i.erofs $src && sync -f $mnt'" \
		-n cp-a "sh -c 'cp -a $src $mnt/tree && sync -f $mnt'" \
		> /dev/null 2> "$out/hyperfine/$t.err" ||
		{ "$top/bench/buildfs.sh" --umount "$mnt"; cat "$out/hyperfine/$t.err" >&2; die "hyperfine failed"; }
	"$top/bench/buildfs.sh" --umount "$mnt"
	rm -f "$img"
	hf=$out/hyperfine/$t.json
}

cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
CFS_INITRAMFS_DKMS="SKIP not built for the benchmark" \
CFS_INITRAMFS_BIN="$out/cfs-benchtool=cfs-benchtool $top/bench/guest.sh=cfs-bench" \
	"$top/vm/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$kcache" "$krel" \
	"$modko" "$out/cfs-vmtool" "$cfsctl" || die "cannot build the initramfs"
n=0
for p in "${plan[@]}"; do
	read -r name input what est <<<"$p"
	n=$((n + 1))
	say "part $n of ${#plan[@]}: $name (about $est min)"
	start=$(date +%s)
	if [ "$what" = boot ]; then
		"$top/bench/boot.sh" --runs "$runs" --commit "$commit" || die "the boot part failed"
		elapsed=$(( $(date +%s) - start ))
		say "$name done in $((elapsed / 60)) min $((elapsed % 60)) s (expected about $est min)"
		continue
	fi
	if [ "$what" = scale ]; then
		"$top/bench/scale.sh" --commit "$commit" || die "the scale part failed"
		elapsed=$(( $(date +%s) - start ))
		say "$name done in $((elapsed / 60)) min $((elapsed % 60)) s (expected about $est min)"
		continue
	fi
	prepare "$input"
	hf= log=
	case $what in
	build) time_builds "$input" ;;
	*)
		conf=$out/$input/part.conf
		cp "$out/$input/disk/bench.conf" "$conf"
		if [ "$what" = pair ]; then
			echo "METRICS= FIGURES=1" >> "$conf"
		else
			echo "METRICS=\"${what//,/ }\" FIGURES=$(( $(wc -w <<<"${what//,/ }") * 2 ))" >> "$conf"
		fi
		debugfs -w -R "rm bench.conf" "$out/$input/disk.img" > /dev/null 2>&1
		debugfs -w -R "write $conf bench.conf" "$out/$input/disk.img" > /dev/null 2>&1 ||
			die "cannot write bench.conf into $out/$input/disk.img"
		log=$out/guest-$name.log
		bench_boot "$out/initramfs.cpio.gz" "$out/$input/disk.img" "$log" "${CFS_VM_MEM:-8192}" \
			"${CFS_VM_TIMEOUT:-3600}" "$name" $((est * 60))
		;;
	esac
	elapsed=$(( $(date +%s) - start ))
	report record --top "$top" --part "$name" --input "$input" --mode "$mode" --commit "$commit" \
		--kernel "$krel" --accel "$accel" --machine "$cpu, $(nproc) CPUs, $accel" --runs "$runs" \
		--os-cap "$([ "$input" = os ] && echo "$os_cap" || echo 0)" --params "$params" \
		--host "$out/$input/host.txt" ${hf:+--hyperfine "$hf"} ${log:+--guest "$log"} \
		--elapsed "$elapsed" --expected $((est * 60))
	say "$name done in $((elapsed / 60)) min $((elapsed % 60)) s (expected about $est min)"
	report render --top "$top" > /dev/null
done
report render --top "$top"
