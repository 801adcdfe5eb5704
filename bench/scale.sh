#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The 'scale' part of 'make bench': what cfsctl costs per entry as a tree
# grows to millions of entries, against mksquashfs and mkfs.erofs in the
# same run, on the host.
#
#   files   trees of 100k and 1M files (1,000 directories of 100 or 1,000
#           files of 36 to 84 bytes) in a tmpfs: the wall time and peak
#           resident memory of cfsctl build (v1 and --format=erofs, image
#           only), mksquashfs -no-duplicates and mkfs.erofs; then of
#           cfsctl inspect dump and cfsctl verify of both cfsctl images
#   dump    dumpfiles of 1M and 10M entries (10,000 files a directory, of
#           36 to 84 bytes, each with a backing path and digest): build in
#           both formats, inspect dump and verify; and the ratio of 10M's
#           time to 1M's (linear is x10). 10M needs 6 to 12 GB of memory:
#           it is left out, saying so, when less than 16 GiB is available
#   index   cfsctl build --repo of the 100k tree: the inodes and bytes of
#           the repository's index beside its objects
#
# The runs of the systems alternate, so that a drift of the machine falls
# on all of them; the figures are medians (and min-max) of RUNS runs, per
# entry too (microseconds and bytes of peak RSS per entry), and ratios to
# mksquashfs's. Results go to bench/results/DATE-host-scale.json and are
# printed as the tables of docs/bench.md.
#
# Usage: bench/scale.sh [--runs N] [--big-runs N] [--part all|files|dump|index]
#                       [--sizes LIST] [--no-10m] [--cfsctl PATH]
#                       [--baseline PATH] [--commit C]
#   --runs N       runs per system and size (default 3)
#   --big-runs N   runs per system of 1M entries and more (default: --runs)
#   --sizes L      the file trees, comma-separated (default 100k,1m)
#   --no-10m       leave out the 10M dumpfile even with the memory for it
#   --baseline P   also measure the cfsctl at P (another commit's build), as
#                  base-v1 and base-erofs, in the same runs: a change's
#                  before and after under the same load
#   --cfsctl PATH  the cfsctl measured (default build/cfsctl)
#   --commit C     the name results carry (default: this checkout's commit,
#                  or the version another --cfsctl says it is)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=3 big_runs= part=all sizes=100k,1m no10m= cfsctl=$top/build/cfsctl commit= baseline=
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?--runs needs a number}; shift 2 ;;
	--part) part=${2:?--part needs all, files, dump or index}; shift 2 ;;
	--big-runs) big_runs=${2:?--big-runs needs a number}; shift 2 ;;
	--sizes) sizes=${2:?--sizes needs a list}; shift 2 ;;
	--baseline) baseline=${2:?--baseline needs a path}; shift 2 ;;
	--no-10m) no10m=1; shift ;;
	--cfsctl) cfsctl=${2:?--cfsctl needs a path}; shift 2 ;;
	--commit) commit=${2:?--commit needs a name}; shift 2 ;;
	-h|--help) sed -n '3,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/scale.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $part in all | files | dump | index) ;; *) echo "bench/scale.sh: --part all, files, dump or index" >&2; exit 2 ;; esac
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }
say() { echo "bench-scale: $*" >&2; }
die() { echo "bench-scale: $*" >&2; exit 1; }
for t in mksquashfs mkfs.erofs python3; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (make deps)"
[ "$(id -u)" = 0 ] || die "needs root (a tmpfs mount)"
[ -x "$cfsctl" ] || die "no cfsctl at '$cfsctl' (make)"
[ -z "$baseline" ] || [ -x "$baseline" ] || die "no cfsctl at '$baseline' (--baseline)"
big_runs=${big_runs:-$runs}
# the cfsctl builds measured: LABEL PATH
cfs_list="cfs $cfsctl"
[ -z "$baseline" ] || cfs_list="$cfs_list
base $baseline"
. "$top/bench/lib.sh"
[ -n "$commit" ] || commit=$(bench_commit "$cfsctl")

out=$top/build/bench/scale
mnt=$out/tmpfs
mkdir -p "$out" "$mnt"
cleanup() {
	mountpoint -q "$mnt" && umount "$mnt"
	rm -f "$out"/*.dump
}
trap cleanup EXIT
mountpoint -q "$mnt" || mount -t tmpfs -o size=16g,nr_inodes=0,mode=0755 scale "$mnt"
tsv=$out/runs.tsv
: > "$tsv"

# measure SET ENTRIES SYSTEM OP RUN CMD...: CMD's wall time and peak RSS
# into runs.tsv; its output to /dev/null, its errors fail the benchmark
measure() {
	local set=$1 entries=$2 sys=$3 op=$4 run=$5 t
	shift 5
	/usr/bin/time -f '%e %M' -o "$out/time" "$@" > /dev/null 2> "$out/err" ||
		{ cat "$out/err" >&2; die "$set: $sys $op failed: $*"; }
	read -r t kib < "$out/time"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$set" "$entries" "$sys" "$op" "$run" "$t" "$kib" >> "$tsv"
	say "$set run $run: $sys $op: $t s, $((kib / 1024)) MiB"
}

# size_of 100k|1m|10m: the number
size_of() {
	case $1 in
	*k) echo $(( ${1%k} * 1000 )) ;;
	*m) echo $(( ${1%m} * 1000000 )) ;;
	*) echo "$1" ;;
	esac
}

# the tree of N files: 1,000 directories, files of 36 to 84 bytes
mktree() {
	python3 - "$1" "$2" <<-'EOF'
	import os, sys
	root, n = sys.argv[1], int(sys.argv[2])
	per = n // 1000
	os.makedirs(root)
	for d in range(1000):
	    dp = "%s/d%04d" % (root, d)
	    os.mkdir(dp)
	    for f in range(per):
	        k = d * per + f
	        data = (b"file %d of directory %d " % (f, d)).ljust(36 + k % 49, b"x")
	        fd = os.open("%s/f%05d" % (dp, f), os.O_WRONLY | os.O_CREAT, 0o644)
	        os.write(fd, data)
	        os.close(fd)
	EOF
}

# the dumpfile of N regular files (10,000 a directory) with backing paths
mkdump() {
	python3 - "$1" "$2" <<-'EOF'
	import hashlib, sys
	path, n = sys.argv[1], int(sys.argv[2])
	per = 10000
	with open(path, "w", buffering=1 << 20) as f:
	    f.write("/ 0 40755 %d 0 0 0 0.0 - - -\n" % (2 + (n + per - 1) // per))
	    for d in range((n + per - 1) // per):
	        f.write("/d%04d 0 40755 2 0 0 0 0.0 - - -\n" % d)
	        lines = []
	        for k in range(d * per, min(n, (d + 1) * per)):
	            h = hashlib.sha256(b"%d" % k).hexdigest()
	            lines.append("/d%04d/f%05d %d 100644 1 0 0 0 0.0 %s/%s - %s\n"
	                         % (d, k - d * per, 36 + k % 49, h[:2], h[2:], h))
	        f.write("".join(lines))
	EOF
}

if want files; then
	for s in ${sizes//,/ }; do
		n=$(size_of "$s")
		src=$mnt/tree-$s
		say "$s: making the tree of $n files in a tmpfs"
		rm -rf "$src"
		mktree "$src" "$n"
		entries=$((n + 1000 + 1))
		nr=$runs
		[ "$n" -lt 1000000 ] || nr=$big_runs
		for r in $(seq "$nr"); do
			while read -r label bin; do
				for f in v1 erofs; do
					measure "files-$s" $entries $label-$f build "$r" \
						"$bin" build --format=$f "$src" "$mnt/$label-$f.img"
				done
			done <<<"$cfs_list"
			measure "files-$s" $entries mksquashfs build "$r" \
				mksquashfs "$src" "$mnt/i.sqfs" -noappend -quiet -no-duplicates -no-progress
			measure "files-$s" $entries mkfs.erofs build "$r" mkfs.erofs --quiet "$mnt/i.erofs" "$src"
			while read -r label bin; do
				for f in v1 erofs; do
					measure "files-$s" $entries $label-$f "inspect dump" "$r" \
						"$bin" inspect dump "$mnt/$label-$f.img"
					measure "files-$s" $entries $label-$f verify "$r" "$bin" verify "$mnt/$label-$f.img"
				done
			done <<<"$cfs_list"
			[ -z "$baseline" ] || for f in v1 erofs; do
				cmp -s "$mnt/cfs-$f.img" "$mnt/base-$f.img" ||
					die "files-$s: the $f images of $cfsctl and $baseline differ"
			done
			rm -f "$mnt/i.sqfs" "$mnt/i.erofs"
		done
		rm -f "$mnt"/*.img
		[ "$s" = 100k ] && want index && continue # the index part builds from it
		rm -rf "$src"
	done
fi

if want dump; then
	list="1m 10m"
	avail=$(awk '/^MemAvailable:/ {print int($2 / 1048576)}' /proc/meminfo)
	if [ -n "$no10m" ]; then
		list=1m
		say "10m: left out (--no-10m)"
	elif [ "$avail" -lt 16 ]; then
		list=1m
		say "10m: left out: $avail GiB of memory available, 16 wanted"
	fi
	for s in $list; do
		n=$(size_of "$s")
		say "$s: writing the dumpfile of $n files"
		mkdump "$out/$s.dump" "$n"
		entries=$((n + (n + 9999) / 10000 + 1))
		for r in $(seq "$big_runs"); do
			while read -r label bin; do
				for f in v1 erofs; do
					img=$mnt/$label-$f.img
					measure "dump-$s" $entries $label-$f build "$r" \
						"$bin" build --from-dump --format=$f "$out/$s.dump" "$img"
					measure "dump-$s" $entries $label-$f "inspect dump" "$r" "$bin" inspect dump "$img"
					measure "dump-$s" $entries $label-$f verify "$r" "$bin" verify "$img"
				done
			done <<<"$cfs_list"
			[ -z "$baseline" ] || for f in v1 erofs; do
				cmp -s "$mnt/cfs-$f.img" "$mnt/base-$f.img" ||
					die "dump-$s: the $f images of $cfsctl and $baseline differ"
			done
			rm -f "$mnt"/*.img
		done
		rm -f "$out/$s.dump"
	done
fi

index=
if want index; then
	src=$mnt/tree-100k
	[ -d "$src" ] || { say "index: making the tree of 100000 files"; mktree "$src" 100000; }
	rm -rf "$mnt/repo"
	say "index: cfsctl build --repo of the tree of 100k files"
	"$cfsctl" build --repo "$mnt/repo" "$src" scale > /dev/null || die "build --repo failed"
	index=$out/index.txt
	{
		echo "objects $(find "$mnt/repo/objects" -type f | wc -l)"
		echo "objects_inodes $(find "$mnt/repo/objects" | wc -l)"
		echo "index_inodes $(find "$mnt/repo/index" | wc -l)"
		echo "index_bytes $(find "$mnt/repo/index" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')"
		echo "index_allocated $(du -s --block-size=1 "$mnt/repo/index" | cut -f1)"
	} > "$index"
	rm -rf "$mnt/repo" "$src"
fi

python3 - "$tsv" "$top/bench/results/$(date +%Y-%m-%d)-host-scale.json" "$commit" "$runs/$big_runs" \
	"$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1), $(nproc) CPUs" \
	"squashfs-tools $(dpkg-query -W -f '${Version}' squashfs-tools 2> /dev/null)" \
	"erofs-utils $(dpkg-query -W -f '${Version}' erofs-utils 2> /dev/null)" \
	"${index:-}" <<-'EOF'
import json, statistics, sys
tsv, dest, commit, runs, machine, sq, ef, index = sys.argv[1:]
rows = {}
for line in open(tsv):
    s, entries, sys_, op, run, t, kib = line.rstrip("\n").split("\t")
    rows.setdefault((s, int(entries), sys_, op), []).append((float(t), int(kib)))
res = []
for (s, entries, sys_, op), v in rows.items():
    ts = [t for t, _ in v]
    ks = [k for _, k in v]
    res.append({"set": s, "entries": entries, "system": sys_, "op": op,
                "time_s": statistics.median(ts), "time_min": min(ts), "time_max": max(ts),
                "rss_kib": statistics.median(ks), "rss_min": min(ks), "rss_max": max(ks),
                "runs": len(v)})
idx = {}
if index:
    for line in open(index):
        k, v = line.split()
        idx[k] = int(v)
doc = {"commit": commit, "runs": int(runs.split("/")[0]), "big_runs": int(runs.split("/")[1]), "machine": machine, "mksquashfs": sq,
       "mkfs.erofs": ef, "results": res, "index": idx}
json.dump(doc, open(dest, "w"), indent=1)
by = {(r["set"], r["system"], r["op"]): r for r in res}
print("commit %s, %s runs, %s; %s; %s\n" % (commit, runs, machine, sq, ef))
print("| set | system | op | time s, median (min-max) | us/entry | ×mksquashfs | peak RSS MiB | bytes/entry | ×mksquashfs |")
print("|---|---|---|---|---|---|---|---|---|")
for r in res:
    ref = by.get((r["set"], "mksquashfs", "build")) if r["op"] == "build" else None
    tr = " ×%.2f" % (r["time_s"] / ref["time_s"]) if ref and ref["time_s"] else ""
    mr = " ×%.2f" % (r["rss_kib"] / ref["rss_kib"]) if ref and ref["rss_kib"] else ""
    print("| %s | %s | %s | %.2f (%.2f-%.2f) | %.1f |%s | %.0f | %.0f |%s |" % (
        r["set"], r["system"], r["op"], r["time_s"], r["time_min"], r["time_max"],
        r["time_s"] * 1e6 / r["entries"], tr, r["rss_kib"] / 1024,
        r["rss_kib"] * 1024 / r["entries"], mr))
for sys_ in ("cfs-v1", "cfs-erofs", "base-v1", "base-erofs"):
    for op in ("build", "inspect dump", "verify"):
        a, b = by.get(("dump-1m", sys_, op)), by.get(("dump-10m", sys_, op))
        if a and b:
            print("\n10M/1M, %s %s: time ×%.1f, peak RSS ×%.1f (%.2f GiB)" % (
                sys_, op, b["time_s"] / a["time_s"], b["rss_kib"] / a["rss_kib"],
                b["rss_kib"] / 1048576), end="")
if idx:
    print("\n\nrepository of the 100k tree: %d objects (%d inodes under objects/); "
          "index: %d inodes, %d bytes (%d allocated)" % (
              idx["objects"], idx["objects_inodes"], idx["index_inodes"], idx["index_bytes"],
              idx["index_allocated"]))
print("\nresults: %s" % dest)
EOF
