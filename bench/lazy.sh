#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Benchmark of cfsctl lazy: the OS tree (bench/mkinputs.py os, from the
# CentOS Stream 9 listing bench/run.sh uses) as a composefs image over an
# empty local store, with busybox httpd serving its full store on the
# guest's loopback. In the VM harness's kernel (bench/lazy-guest.sh, booted
# with "cfs.bench") it measures the time from nothing to the first
# successful read of one file and the time and bytes to read a 5% sample
# of the files, with cfsctl lazy fetching on demand; then the same after a
# full cfsctl fetch. Writes bench/results/lazy-DATE.md and prints it.
#
# Usage: bench/lazy.sh [--runs N] [--os-cap BYTES] [--sample PERCENT]
#   --runs N       runs of each figure (default 3)
#   --os-cap B     cut each file of the OS tree to B bytes (default 8192)
#   --sample P     percent of the regular files read (default 5)
# Environment: CFS_BENCH_DATA (directory holding
#   cs9-x86_64-developer.dump.gz; default ../shared/data from the top of
#   the repository), CFS_VM_MEM (MiB, default 4096), CFS_VM_TIMEOUT
#   (seconds, default 7200), KDIR (vm/kdir.sh).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=3 os_cap=8192 pct=5
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=$2; shift 2 ;;
	--os-cap) os_cap=$2; shift 2 ;;
	--sample) pct=$2; shift 2 ;;
	-h|--help) sed -n '3,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/lazy.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
say() { echo "bench/lazy: $*" >&2; }
die() { echo "bench/lazy: $*" >&2; exit 1; }
data=${CFS_BENCH_DATA:-$top/../shared/data}
dump=$data/cs9-x86_64-developer.dump.gz
[ -f "$dump" ] || die "no $dump (set CFS_BENCH_DATA)"
for t in mke2fs qemu-system-x86_64 python3; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done

out=$top/build/bench-lazy
. "$top/bench/lib.sh"
bench_setup "$out"

w=$out/inputs
recipe="$(md5sum < "$top/bench/mkinputs.py") os $os_cap"
if [ "$(cat "$w/.recipe" 2>/dev/null)" != "$recipe" ]; then
	say "making the OS tree"
	rm -rf "$w"
	mkdir -p "$w"
	python3 "$top/bench/mkinputs.py" os "$dump" "$w/os" --cap "$os_cap"
	echo "$recipe" > "$w/.recipe"
fi
d=$out/disk
rm -rf "$d"
mkdir -p "$d"
say "building the image and its store"
"$cfsctl" build --digest-store "$d/store-os" "$w/os" "$d/os.cfs" > /dev/null
# pct% of the non-empty regular files (empty ones have no object), fixed seed
python3 - "$w/os" "$pct" > "$d/os.sample" <<'EOF'
import os, random, sys
top, pct = sys.argv[1], float(sys.argv[2])
files = []
for dp, dns, fns in os.walk(top):
    dns.sort()
    for name in sorted(fns):
        p = os.path.join(dp, name)
        if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) > 0:
            files.append(os.path.relpath(p, top))
for p in random.Random("lazy").sample(files, max(1, int(len(files) * pct / 100))):
    print(p)
EOF
files=$(find "$w/os" -type f | wc -l)
objects=$(find "$d/store-os" -type f | wc -l)
store_bytes=$(find "$d/store-os" -type f -printf '%s\n' | awk '{s += $1} END {print s + 0}')
echo "RUNS=$runs" > "$d/lazy.conf"
mb=$(du -s -BM "$d" | cut -f1 | tr -d M)
say "packing the disk ($mb MiB; $objects objects)"
mke2fs -q -F -t ext4 -b 4096 -O verity -N $((objects * 3 + 100000)) -L cfslazy -d "$d" \
	"$out/disk.img" $((mb * 3 + 512))M

CFS_INITRAMFS_DKMS="SKIP not built by bench/lazy.sh" CFS_INITRAMFS_BIN="$top/bench/lazy-guest.sh=cfs-bench" \
	"$top/vm/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$kcache" "$krel" \
	"$modko" "$out/cfs-vmtool" "$cfsctl" || die "cannot build the initramfs"
log=$out/guest.log
bench_boot "$out/initramfs.cpio.gz" "$out/disk.img" "$log" "${CFS_VM_MEM:-4096}" "${CFS_VM_TIMEOUT:-7200}"

mkdir -p "$top/bench/results"
res=$top/bench/results/lazy-$(date -u +%Y-%m-%d).md
cpu=$(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n 1)
python3 - "$log" "$files" "$objects" "$store_bytes" "$pct" "$os_cap" "$krel" \
	"$cpu, $(nproc) CPUs, $accel" > "$res" <<'EOF'
import statistics, sys
log, files, objects, store_bytes, pct, cap, krel, machine = sys.argv[1:9]
v = {}
for line in open(log, errors="replace"):
    p = line.split()
    if len(p) >= 4 and p[0] == "L":
        if p[3].startswith("files="):
            kv = dict(x.split("=") for x in p[3:])
            v.setdefault(p[2] + "_bytes_read", []).append(float(kv["bytes"]))
        else:
            v.setdefault(p[2], []).append(float(p[3]))
med = lambda k: statistics.median(v[k])
rng = lambda k: "%g–%g" % (min(v[k]), max(v[k]))
n = int(med("sample_files"))
print("# cfsctl lazy: first read and a %s%% sample, on demand against a full fetch\n" % pct)
print("OS tree (CentOS Stream 9 listing, files cut to %s bytes): %s files, %s objects, "
      "%.1f MiB in the store. Mirror: busybox httpd on the guest's loopback. "
      "Kernel %s; %s; runs: %d, median (min–max).\n"
      % (cap, files, objects, int(store_bytes) / 2**20, krel, machine, len(v["lazy_first_ms"])))
print("| | lazy (cfsctl lazy, empty store) | full cfsctl fetch, then local | ratio |")
print("| --- | --- | --- | --- |")
fl, ff = med("lazy_first_ms"), med("fetch_ms") + med("local_first_ms")
print("| nothing to the first read of one file | %.0f ms (%s) | %.0f ms (fetch %.0f + read %.0f) | %.3f |"
      % (fl, rng("lazy_first_ms"), ff, med("fetch_ms"), med("local_first_ms"), fl / ff))
sl, sf = med("lazy_sample_ms"), med("fetch_ms") + med("local_sample_ms")
print("| nothing to having read %d files (%s%%) | %.0f ms (%s) | %.0f ms (fetch %.0f + read %.0f) | %.3f |"
      % (n, pct, sl, rng("lazy_sample_ms"), sf, med("fetch_ms"), med("local_sample_ms"), sl / sf))
bl, bf = med("lazy_bytes"), med("fetch_bytes")
print("| bytes downloaded | %.1f MiB (%d objects) | %.1f MiB (%d objects) | %.3f |"
      % (bl / 2**20, med("lazy_objects"), bf / 2**20, med("fetch_objects"), bl / bf))
print("| reading the sample alone | %.0f ms (incl. fetching) | %.0f ms (all local) | %.2f |"
      % (sl - fl, med("local_sample_ms") - med("local_first_ms"),
         (sl - fl) / max(1.0, med("local_sample_ms") - med("local_first_ms"))))
print("\nMean first-open latency of a fetched object (first lookup to answer, cfsctl lazy --stats): "
      "%.1f ms. Bytes read from the sample: %.1f MiB." % (med("lazy_first_open_mean_ms"),
                                                           med("lazy_sample_read_bytes_read") / 2**20))
EOF
cat "$res"
say "wrote $res"
