#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What an open costs through cfsctl mount --fuse when the backing file has
# no fs-verity (a store on tmpfs, or on ext4 without it): the daemon reads the
# whole file once and computes its fs-verity digest, keeping its blocks'
# hashes. On this machine's kernel, for a file of SIZE MiB: the median of
# N first reads of one byte (each in a new mount, since the daemon keeps
# what it verified for the mount's life: each computed again), beside
# sha256sum of the same file and a plain read of it (cat), measured in the
# same run. Prints a Markdown table.
#
# Usage: bench/fuse-open.sh [--size MIB] [--runs N]   (default 256, 5)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
size=256 runs=5
while [ $# -gt 0 ]; do
	case $1 in
	--size) size=$2; shift 2 ;;
	--runs) runs=$2; shift 2 ;;
	-h|--help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/fuse-open.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
cfsctl=${CFSCTL:-$top/build/cfsctl}
[ -x "$cfsctl" ] || { echo "bench/fuse-open.sh: no $cfsctl (make)" >&2; exit 1; }
[ -c /dev/fuse ] || { echo "bench/fuse-open.sh: no /dev/fuse" >&2; exit 1; }
w=$(mktemp -d "${TMPDIR:-/tmp}/cfs-bench-fuse.XXXXXX")
trap 'fusermount3 -u "$w/m" 2>/dev/null; rm -rf "$w"' EXIT
mkdir -p "$w/src" "$w/m"
head -c $((size << 20)) /dev/urandom >"$w/src/big"
"$cfsctl" build --digest-store "$w/store" "$w/src" "$w/img.cfs" >/dev/null
obj=$w/store/$("$cfsctl" inspect stat "$w/img.cfs" /big | awk '/^backing/ { print $2 }')

# median SECONDS...: the middle one
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# timed CMD...: its wall-clock seconds
timed() {
	local a b
	a=$(date +%s.%N)
	"$@" >/dev/null
	b=$(date +%s.%N)
	awk -v a="$a" -v b="$b" 'BEGIN { print b - a }'
}
open_t=() sha_t=() cat_t=()
for i in $(seq "$runs"); do
	"$cfsctl" mount --fuse --basedir "$w/store" "$w/img.cfs" "$w/m"
	open_t+=("$(timed head -c 1 "$w/m/big")")
	fusermount3 -u "$w/m"
	sha_t+=("$(timed sha256sum "$obj")")
	cat_t+=("$(timed cat "$obj")")
done
o=$(median "${open_t[@]}") s=$(median "${sha_t[@]}") c=$(median "${cat_t[@]}")
printf '| %s MiB, median of %s | seconds | ratio to sha256sum |\n|---|---|---|\n' "$size" "$runs"
printf '| first byte through the FUSE mount (digest computed at open) | %.3f | %.2f |\n' "$o" "$(awk -v a="$o" -v b="$s" 'BEGIN { print a / b }')"
printf '| sha256sum of the object | %.3f | 1.00 |\n' "$s"
printf '| cat of the object | %.3f | %.2f |\n' "$c" "$(awk -v a="$c" -v b="$s" 'BEGIN { print a / b }')"
