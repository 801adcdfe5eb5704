#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Benchmark of cfsctl mount --fuse on this machine's own kernel (where FUSE
# runs for an ordinary user, as the tests do): the OS tree (bench/mkinputs.py
# os, the CentOS Stream 9 developer listing, every file materialised with
# content cut to --os-cap bytes) served by cfsctl mount --fuse from its v1
# and its EROFS image, by squashfuse_ll from squashfs images of the same
# tree, uncompressed and zstd, and the plain tree on the host's ext4. In
# one run, medians of --runs each: the cold stat walk (the page cache
# dropped and the FUSE mount made again), the warm stat walk, the warm
# readdir walk and the warm full read (tar cf - | wc -c: GNU tar skips
# reading when it writes to /dev/null), the time each mount takes after the
# page cache is dropped (not in the cold walk's time), and the cfsctl
# daemon's peak RSS.
# Prints a Markdown table with the ratios to the plain tree and to
# squashfuse_ll; writes it to bench/results/fuse-DATE.md too (fuse-DATE-2.md
# and so on when a run of the day wrote it already).
#
# Needs root (the tree's owners; drop_caches, which empties the whole
# machine's page cache before each cold walk).
#
# Usage: bench/fuse.sh [--runs N] [--os-cap BYTES]   (default 5, 8192)
# Environment: CFS_BENCH_DATA (directory holding
#   cs9-x86_64-developer.dump.gz; default ../shared/data from the top of
#   the repository), CFS_BENCH_DIR (where the trees go; default /var/tmp).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 os_cap=8192
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--os-cap) os_cap=$2; shift 2 ;;
	-h|--help) sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/fuse.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
say() { echo "bench/fuse: $*" >&2; }
die() { echo "bench/fuse: $*" >&2; exit 1; }
data=${CFS_BENCH_DATA:-$top/../shared/data}
dump=$data/cs9-x86_64-developer.dump.gz
[ -f "$dump" ] || die "no $dump (set CFS_BENCH_DATA)"
[ "$(id -u)" = 0 ] || die "needs root"
for t in squashfuse_ll mksquashfs fusermount3 python3 tar; do
	command -v $t >/dev/null || die "$t is not installed (make deps)"
done
cfsctl=${CFSCTL:-$top/build/cfsctl}
[ -x "$cfsctl" ] || die "no $cfsctl (make)"
w=$(mktemp -d "${CFS_BENCH_DIR:-/var/tmp}/cfs-bench-fuse.XXXXXX")
cleanup() {
	local m
	for m in "$w"/mnt-*; do
		grep -q " $m " /proc/mounts && umount "$m"
	done
	rm -rf "$w"
}
trap cleanup EXIT

say "materialising the OS tree (files cut to $os_cap bytes)"
python3 "$top/bench/mkinputs.py" os "$dump" "$w/tree" --cap "$os_cap"
nfiles=$(find "$w/tree" | wc -l)
say "building the images of $nfiles paths"
"$cfsctl" build --digest-store "$w/store" "$w/tree" "$w/v1.cfs" >/dev/null
"$cfsctl" build --format=erofs --digest-store "$w/store" "$w/tree" "$w/erofs.cfs" >/dev/null
mksquashfs "$w/tree" "$w/plain.sqfs" -noI -noD -noF -noX -no-progress -quiet >/dev/null
mksquashfs "$w/tree" "$w/zstd.sqfs" -comp zstd -no-progress -quiet >/dev/null

configs=(plain cfs-v1 cfs-erofs squashfuse squashfuse-zstd)
# where CONFIG: the directory its walks read
where() { [ "$1" = plain ] && echo "$w/tree" || echo "$w/mnt-$1"; }
# up CONFIG: mount it (nothing for the plain tree)
up() {
	local m=$w/mnt-$1
	mkdir -p "$m"
	case $1 in
	plain) ;;
	cfs-v1) "$cfsctl" mount --fuse --basedir "$w/store" "$w/v1.cfs" "$m" ;;
	cfs-erofs) "$cfsctl" mount --fuse --basedir "$w/store" "$w/erofs.cfs" "$m" ;;
	squashfuse) squashfuse_ll "$w/plain.sqfs" "$m" ;;
	squashfuse-zstd) squashfuse_ll "$w/zstd.sqfs" "$m" ;;
	esac
}
down() {
	local m=$w/mnt-$1
	[ "$1" = plain ] && return 0
	umount "$m"
	for _ in $(seq 50); do grep -q " $m " /proc/mounts || return 0; sleep 0.1; done
	die "'$m' stays mounted"
}
# secs CMD: the wall-clock seconds of the shell command CMD
secs() {
	local a b
	a=$(date +%s.%N)
	bash -c "$1" >/dev/null
	b=$(date +%s.%N)
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", b - a }'
}
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
declare -A t
rss=0
for r in $(seq "$runs"); do
	for c in "${configs[@]}"; do
		d=$(where "$c")
		sync
		echo 3 >/proc/sys/vm/drop_caches
		# the mount itself, in the cold (cfsctl looks for every backing file)
		a=$(date +%s.%N)
		up "$c"
		b=$(date +%s.%N)
		t[$c.mount]+=" $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f\n", b - a }')"
		t[$c.cold]+=" $(secs "find '$d' -printf '%m %s\n'")"
		t[$c.walk]+=" $(secs "find '$d' -printf '%m %s\n'")"
		t[$c.readdir]+=" $(secs "find '$d'")"
		bash -c "tar cf - -C '$d' . | wc -c" >/dev/null # warms the pages
		t[$c.read]+=" $(secs "tar cf - -C '$d' . | wc -c")"
		if [ "${c#cfs}" != "$c" ]; then
			# the daemon's name is its binary's (CFSCTL may name another), as comm cuts it
			for p in $(pgrep -x "$(basename "$cfsctl" | cut -c1-15)"); do
				# (another cfsctl may end meanwhile)
				{ tr '\0' '\n' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qxF -- "$w/mnt-$c" || continue
				k=$(awk '/^VmHWM/ { print $2 }' "/proc/$p/status" 2>/dev/null)
				[ -n "$k" ] && [ "$k" -gt "$rss" ] && rss=$k
			done
		fi
		down "$c"
	done
	say "run $r of $runs done"
done

kernel=$(uname -r)
day=$(date -u +%Y-%m-%d)
out=$top/bench/results/fuse-$day.md
k=2
while [ -e "$out" ]; do # a run of the day wrote it already
	out=$top/bench/results/fuse-$day-$k.md
	k=$((k + 1))
done
mkdir -p "$top/bench/results"
{
	echo "cfsctl mount --fuse against squashfuse_ll and the plain tree: $nfiles paths, files cut to $os_cap bytes,"
	echo "kernel $kernel, $(pkg-config --modversion fuse3 2>/dev/null || echo '?') libfuse, medians of $runs (seconds; ratio to the plain tree / to squashfuse_ll)"
	echo
	echo "| | cold walk | warm walk | warm readdir | warm read |"
	echo "|---|---|---|---|---|"
	for c in "${configs[@]}"; do
		row="| $c |"
		for k in cold walk readdir read; do
			# shellcheck disable=SC2086
			m=$(median ${t[$c.$k]})
			# shellcheck disable=SC2086
			p=$(median ${t[plain.$k]})
			# shellcheck disable=SC2086
			s=$(median ${t[squashfuse.$k]})
			row+=" $m ($(awk -v a="$m" -v b="$p" 'BEGIN { printf "%.2f", a / b }') / $(awk -v a="$m" -v b="$s" 'BEGIN { printf "%.2f", a / b }')) |"
		done
		echo "$row"
	done
	echo
	row="The time to mount, after the page cache is dropped (median, seconds):"
	for c in "${configs[@]}"; do
		[ "$c" = plain ] && continue
		# shellcheck disable=SC2086
		row+=" $c $(median ${t[$c.mount]}),"
	done
	echo "${row%,}."
	echo "The cfsctl daemon's peak RSS (VmHWM): $((rss / 1024)) MiB."
} | tee "$out"
