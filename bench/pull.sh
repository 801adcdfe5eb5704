#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# 'make bench-pull': cfsctl pull of a realistic container image against the
# pipeline a user has without it: skopeo copy from the registry into an OCI
# layout, umoci unpack of it, then cfsctl build --digest-store of the
# unpacked tree. The image is a Debian bookworm minbase root filesystem
# (debootstrap, its tarball kept in build/bench/pull/ so that a second run
# does not make it again) with apt's caches and lists removed, as Debian's
# own container image has them, in two shapes: one gzip layer, and three
# (usr/share; the rest of usr; the rest, with a whiteout removing
# usr/share/man). Both are pushed to a docker-registry this script starts
# on a free 127.0.0.1 port with its storage in build/, and stops on exit.
#
# Each run of each system writes into a new ext4 on a loop device
# (bench/buildfs.sh: deleting many files makes ext4 slow to create files for
# minutes after) and ends with 'sync -f', so that every system pays for what
# it writes. Per run: the wall time (pipeline: all three steps), the bytes
# ext4 wrote to its device (its lifetime_write_kbytes after less before:
# data, metadata and journal, what this filesystem alone put on the device),
# and the time and peak resident memory of each step (/usr/bin/time). The
# runs of the systems alternate, so a drift of the machine falls on both;
# the ratio of the times is given of the medians and as the median of each
# round's. The medians go into bench/results/DATE-host-pull.json and are
# printed.
#
# The second-version case (--part partial): version B of the 1-layer image
# is A with every 20th regular file changed (5% of them), both pushed by
# skopeo as zstd:chunked and B also as gzip. A partial pull of B into a
# repository that holds A (cfsctl pull --repo, A pulled before the clock
# starts) is timed against a full pull of the gzip B into an empty store
# and against skopeo copy + umoci unpack + cfsctl build of it; the bytes
# it fetched (--json) against the compressed frames of B's files that A
# lacks plus B's TOC. Its medians go into DATE-host-pull-partial.json.
#
# Usage: bench/pull.sh [--runs N] [--cfsctl PATH] [--part all|full|partial]
#   --runs N   runs per system and image (default 5)
#   --part     the full pulls of the two images, the second-version case,
#              or both (default)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 cfsctl=$top/build/cfsctl part=all
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?--runs needs a number}; shift 2 ;;
	--cfsctl) cfsctl=${2:?--cfsctl needs a path}; shift 2 ;;
	--part) part=${2:?--part needs all, full or partial}; shift 2 ;;
	-h|--help) sed -n '3,41p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/pull.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
case $part in all | full | partial) ;; *) echo "bench/pull.sh: --part all, full or partial" >&2; exit 2 ;; esac
want() { [ "$part" = all ] || [ "$part" = "$1" ]; }
say() { echo "bench-pull: $*" >&2; }
die() { echo "bench-pull: $*" >&2; exit 1; }
for t in debootstrap skopeo umoci docker-registry mkfs.ext4 losetup curl python3; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done
[ -x /usr/bin/time ] || die "/usr/bin/time is not installed (make deps)"
[ "$(id -u)" = 0 ] || die "needs root (a loop device and mount per run)"
[ -x "$cfsctl" ] || die "no cfsctl at '$cfsctl' (make)"

. "$top/bench/lib.sh"
commit=$(bench_commit "$cfsctl")
out=$top/build/bench/pull
mkdir -p "$out"
mnt=$out/mnt img=$out/fs.img
. "$top/bench/registry.sh"
. "$top/bench/debian.sh"
cleanup() {
	local rc=$?
	registry_stop
	"$top/bench/buildfs.sh" --umount "$mnt"
	rm -f "$img"
	exit $rc
}
trap cleanup EXIT

# ---- the root filesystem, made once (bench/debian.sh) ----
debian_rootfs "$out"

# ---- the two images, in one OCI layout, remade when the recipe changes ----
recipe="$(md5sum < "$out/rootfs.tar" | cut -c1-32) $(md5sum < "$top/tests/lib/mkoci.py" | cut -c1-32) $(md5sum < "$0" | cut -c1-32)"
if [ "$(cat "$out/layout.recipe" 2> /dev/null)" != "$recipe" ]; then
	say "making the 1-layer and 3-layer images"
	rm -rf "$out/layout" "$out/layers" "$out/layout.recipe"
	mkdir -p "$out/layers"
	python3 - "$out/rootfs.tar" "$out/layers" <<'EOF' || die "splitting the root filesystem"
import sys, tarfile
src, d = sys.argv[1:3]
def layer(name):
    for p in ("usr/share", "usr"):
        if name == p or name.startswith(p + "/"):
            return {"usr/share": 0, "usr": 1}[p]
    return 2
with tarfile.open(src) as t:
    outs = [tarfile.open(f"{d}/{n}.tar", "w", format=tarfile.PAX_FORMAT) for n in (1, 2, 3)]
    where = {}
    for m in t:
        name = m.name[2:] if m.name.startswith("./") else m.name
        n = layer(name)
        if m.islnk():
            # a hard link goes with its target
            n = where[m.linkname[2:] if m.linkname.startswith("./") else m.linkname]
        where[name] = n
        if name == "usr":
            outs[0].addfile(m)  # usr/share's parent, in the lowest layer too
        outs[n].addfile(m, t.extractfile(m) if m.isreg() else None)
    wh = tarfile.TarInfo("usr/share/.wh.man")
    wh.mtime = 1700000000
    outs[2].addfile(wh)
    for o in outs:
        o.close()
EOF
	cat > "$out/spec.json" <<EOF
[{"tag": "1layer", "layers": [["$out/rootfs.tar", "gzip"]]},
 {"tag": "3layer", "layers": [["$out/layers/1.tar", "gzip"], ["$out/layers/2.tar", "gzip"],
                              ["$out/layers/3.tar", "gzip"]]}]
EOF
	python3 "$top/tests/lib/mkoci.py" "$out/layout" "$out/spec.json" || die "writing the OCI layout"
	echo "$recipe" > "$out/layout.recipe"
fi

# ---- the registry ----
registry_start "$out/registry"
say "registry at $reg; pushing the images"
for tag in 1layer 3layer; do
	python3 "$top/tests/lib/oci-push.py" "$out/layout" $tag "http://$reg" bench/debian $tag > /dev/null ||
		die "pushing $tag"
done

# ---- the runs ----
size=$(( $(stat -c %s "$out/rootfs.tar") * 5 + (512 << 20) ))
# run SYSTEM TAG: one run into a new ext4; appends a line to $out/runs.txt:
# SYSTEM TAG SECONDS KBYTES_WRITTEN then, for each step, SECONDS MAXRSS_KIB
run() {
	local sys=$1 tag=$2 loop w0 w1 t0 t1 mems= m s
	"$top/bench/buildfs.sh" "$img" "$mnt" "$size" || die "cannot make the ext4 for a run"
	loop=$(basename "$(findmnt -n -o SOURCE "$mnt")")
	if [ "$sys" = partial ]; then
		# version A, in the repository before the clock starts
		"$cfsctl" pull --plain-http --repo "$mnt/repo" "$reg/bench/chunked:A" a ||
			die "pull of A failed"
	fi
	sync -f "$mnt"
	w0=$(cat "/sys/fs/ext4/$loop/lifetime_write_kbytes")
	rm -f "$out"/mem.*
	t0=$(date +%s.%N)
	case $sys in
	pull)
		/usr/bin/time -f '%e %M' -o "$out/mem.1" "$cfsctl" pull --plain-http \
			--digest-store "$mnt/store" "$reg/bench/debian:$tag" "$mnt/i.cfs"
		;;
	partial)
		/usr/bin/time -f '%e %M' -o "$out/mem.1" "$cfsctl" pull --plain-http --json \
			--repo "$mnt/repo" "$reg/bench/chunked:$tag" b > "$out/partial.json" &&
		cp "$mnt/repo/images/$(readlink "$mnt/repo/images/refs/b" | sed 's|.*/||')" "$mnt/i.cfs"
		;;
	fullB)
		/usr/bin/time -f '%e %M' -o "$out/mem.1" "$cfsctl" pull --plain-http \
			--digest-store "$mnt/store" "$reg/bench/gzip:$tag" "$mnt/i.cfs"
		;;
	pipeline | pipelineB)
		local src=bench/debian
		[ "$sys" = pipelineB ] && src=bench/gzip
		/usr/bin/time -f '%e %M' -o "$out/mem.1" skopeo copy -q --src-tls-verify=false \
			"docker://$reg/$src:$tag" "oci:$mnt/oci:$tag" &&
		/usr/bin/time -f '%e %M' -o "$out/mem.2" umoci unpack --image "$mnt/oci:$tag" "$mnt/bundle" \
			> /dev/null &&
		/usr/bin/time -f '%e %M' -o "$out/mem.3" "$cfsctl" build --digest-store "$mnt/store" \
			"$mnt/bundle/rootfs" "$mnt/i.cfs"
		;;
	esac || die "$sys of $tag failed"
	sync -f "$mnt"
	t1=$(date +%s.%N)
	w1=$(cat "/sys/fs/ext4/$loop/lifetime_write_kbytes")
	for m in "$out"/mem.*; do mems="$mems $(tail -n 1 "$m")"; done
	s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
	echo "$sys $tag $s $((w1 - w0))$mems" >> "$out/runs.txt"
	[ "$sys" != partial ] || echo "$s $(cat "$out/partial.json")" >> "$out/partial.txt"
	# the first run's images, to check that both systems made the same one
	[ -f "$out/$sys-$tag.cfs" ] || cp "$mnt/i.cfs" "$out/$sys-$tag.cfs"
	say "$sys $tag: $s s, $(( (w1 - w0) / 1024 )) MiB written, each step's seconds and peak RSS (KiB):$mems"
}
: > "$out/runs.txt"
: > "$out/partial.txt"
rm -f "$out"/*.cfs
start=$(date +%s)

# ---- the second version, pulled in part ----
if want partial; then
	if debian_version_b "$out"; then
		rm -rf "$out/layout2"
	fi
	if [ ! -d "$out/layout2" ]; then
		cat > "$out/spec2.json" <<EOF
[{"tag": "A", "layers": [["$out/rootfs.tar", "gzip"]]},
 {"tag": "B", "layers": [["$out/rootfsB.tar", "gzip"]]}]
EOF
		python3 "$top/tests/lib/mkoci.py" "$out/layout2" "$out/spec2.json" || die "writing the layout of A and B"
	fi
	echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$out/policy.json"
	for v in A B; do
		skopeo --policy "$out/policy.json" copy -q --dest-tls-verify=false \
			--dest-compress-format zstd:chunked "oci:$out/layout2:$v" \
			"docker://$reg/bench/chunked:$v" || die "pushing $v as zstd:chunked"
	done
	python3 "$top/tests/lib/oci-push.py" "$out/layout2" B "http://$reg" bench/gzip B > /dev/null ||
		die "pushing B as gzip"
	# What a partial pull of B after A cannot avoid: B's TOC and the frames
	# of B's files whose content A lacks.
	python3 - "$reg" > "$out/partial-budget.json" <<'EOF' || die "reading the TOCs"
import json, subprocess, sys, urllib.request
reg = sys.argv[1]
def layer(tag):
    req = urllib.request.Request(f"http://{reg}/v2/bench/chunked/manifests/{tag}",
                                 headers={"Accept": "application/vnd.oci.image.manifest.v1+json"})
    return json.load(urllib.request.urlopen(req))["layers"][0]
def toc(l):
    pos = l["annotations"]["io.containers.zstd-chunked.manifest-position"].split(":")
    off, n = int(pos[0]), int(pos[1])
    req = urllib.request.Request(f"http://{reg}/v2/bench/chunked/blobs/{l['digest']}",
                                 headers={"Range": f"bytes={off}-{off + n - 1}"})
    raw = urllib.request.urlopen(req).read()
    return n, json.loads(subprocess.run(["zstd", "-dcq"], input=raw, capture_output=True,
                                        check=True).stdout)
la, lb = layer("A"), layer("B")
_, ta = toc(la)
nb, tb = toc(lb)
have = {e.get("digest") for e in ta["entries"]}
miss = [e for e in tb["entries"] if e["type"] == "reg" and e.get("size") and e["digest"] not in have]
frames = sum(e["endOffset"] - e["offset"] for e in miss)
print(json.dumps({"layer_bytes": lb["size"], "toc_bytes": nb, "missing_files": len(miss),
                  "missing_frames_bytes": frames,
                  "target_bytes": int(1.25 * (frames + nb)) + 65536}))
EOF
	say "partial: $(cat "$out/partial-budget.json")"
	for n in $(seq "$runs"); do
		say "second version: round $n of $runs"
		for sys in partial fullB pipelineB; do run $sys B; done
	done
	"$top/bench/buildfs.sh" --umount "$mnt"
	cmp -s "$out/partial-B.cfs" "$out/fullB-B.cfs" ||
		say "note: the partial pull's image of B differs from the full pull's"
	mkdir -p "$top/bench/results"
	python3 - "$out" "$top/bench/results/$(date -u +%Y-%m-%d)-host-pull-partial.json" "$commit" <<'EOF'
import json, os, statistics, sys, time
out, res, commit = sys.argv[1:4]
rows = [l.split() for l in open(f"{out}/runs.txt")]
med = {}
for sysname in ("partial", "fullB", "pipelineB"):
    rs = [r for r in rows if r[0] == sysname]
    med[sysname] = {"seconds": [float(r[2]) for r in rs],
                    "median_seconds": statistics.median(float(r[2]) for r in rs),
                    "median_written_bytes": statistics.median(int(r[3]) * 1024 for r in rs)}
js = [json.loads(l.split(" ", 1)[1]) for l in open(f"{out}/partial.txt")]
budget = json.load(open(f"{out}/partial-budget.json"))
fetched = statistics.median(j["bytes_fetched"] for j in js)
doc = {"benchmark": "pull-partial", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "commit": commit, "machine": f"{os.cpu_count()} CPUs", "budget": budget,
       "partial_json": js[0], "median_bytes_fetched": fetched,
       "bytes_ratio_to_target": fetched / budget["target_bytes"],
       "time_ratio_to_full": med["partial"]["median_seconds"] / med["fullB"]["median_seconds"],
       "time_ratio_to_pipeline": med["partial"]["median_seconds"] / med["pipelineB"]["median_seconds"],
       "systems": med}
with open(res + ".tmp", "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
os.rename(res + ".tmp", res)
print(f"B after A: fetched {fetched:.0f} bytes of a {budget['layer_bytes']}-byte layer; "
      f"target {budget['target_bytes']} (frames of {budget['missing_files']} files "
      f"{budget['missing_frames_bytes']} + TOC {budget['toc_bytes']}): {doc['bytes_ratio_to_target']:.2f}x")
for s, m in med.items():
    print(f"{s:10} median {m['median_seconds']:6.2f} s, {m['median_written_bytes'] / 2**20:7.1f} MiB written")
print(f"partial/full: {doc['time_ratio_to_full']:.2f}x; partial/pipeline: {doc['time_ratio_to_pipeline']:.2f}x")
print(f"result: {res}")
EOF
fi
want full || exit 0

for n in $(seq "$runs"); do
	say "round $n of $runs"
	for tag in 1layer 3layer; do
		for sys in pull pipeline; do run $sys $tag; done
	done
done
"$top/bench/buildfs.sh" --umount "$mnt"
for tag in 1layer 3layer; do
	cmp -s "$out/pull-$tag.cfs" "$out/pipeline-$tag.cfs" ||
		say "note: the images of $tag differ between the systems (inspect dump shows how)"
done

# ---- the result ----
mkdir -p "$top/bench/results"
res=$top/bench/results/$(date -u +%Y-%m-%d)-host-pull.json
python3 - "$out" "$res" "$commit" "$runs" "$(( $(date +%s) - start ))" <<'EOF'
import json, os, platform, statistics, subprocess, sys, tarfile, time
out, res, commit, runs, elapsed = sys.argv[1:6]
def ver(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"
files = sum(1 for _ in tarfile.open(f"{out}/rootfs.tar"))
index = json.load(open(f"{out}/layout/index.json"))
images = {}
for d in index["manifests"]:
    m = json.load(open(f"{out}/layout/blobs/sha256/{d['digest'][7:]}"))
    images[d["annotations"]["org.opencontainers.image.ref.name"]] = {
        "layers": len(m["layers"]), "compressed_bytes": sum(l["size"] for l in m["layers"])}
rows = [l.split() for l in open(f"{out}/runs.txt")]
steps = {"pull": ["cfsctl pull"], "pipeline": ["skopeo copy", "umoci unpack", "cfsctl build"]}
results = []
for tag in images:
    med = {}
    for sysname in ("pull", "pipeline"):
        rs = [r for r in rows if r[0] == sysname and r[1] == tag]
        secs = [float(r[2]) for r in rs]
        kb = [int(r[3]) for r in rs]
        mem = [[int(x) for x in r[5::2]] for r in rs]
        st = [[float(x) for x in r[4::2]] for r in rs]
        each = {s: statistics.median(m[i] for m in mem) for i, s in enumerate(steps[sysname])}
        each_s = {s: statistics.median(m[i] for m in st) for i, s in enumerate(steps[sysname])}
        med[sysname] = dict(seconds=statistics.median(secs), written=statistics.median(kb) * 1024)
        results.append({"image": tag, "system": sysname, "steps": steps[sysname],
                        "seconds": secs, "median_seconds": med[sysname]["seconds"],
                        "written_bytes": [k * 1024 for k in kb],
                        "median_written_bytes": med[sysname]["written"],
                        "median_seconds_by_step": each_s,
                        "peak_rss_kib_median_by_step": each,
                        "peak_rss_kib_max": max(each.values()),
                        "peak_rss_kib_sum": sum(each.values())})
    images[tag]["ratio_seconds"] = med["pull"]["seconds"] / med["pipeline"]["seconds"]
    # Each round runs both systems back to back: the ratio within a round is
    # what a load that comes and goes disturbs least.
    pairs = zip([float(r[2]) for r in rows if r[0] == "pull" and r[1] == tag],
                [float(r[2]) for r in rows if r[0] == "pipeline" and r[1] == tag])
    images[tag]["ratio_seconds_by_round"] = [a / b for a, b in pairs]
    images[tag]["ratio_seconds_median_of_rounds"] = statistics.median(images[tag]["ratio_seconds_by_round"])
    images[tag]["ratio_written"] = med["pull"]["written"] / med["pipeline"]["written"]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
doc = {"benchmark": "pull", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "commit": commit, "kernel": platform.release(), "machine": f"{cpu}, {os.cpu_count()} CPUs",
       "runs": int(runs), "elapsed_seconds": int(elapsed),
       "rootfs": {"what": "debootstrap --variant=minbase bookworm, apt caches and lists removed",
                  "entries": files, "tar_bytes": os.path.getsize(f"{out}/rootfs.tar")},
       "images": images,
       "tools": {"skopeo": ver(["skopeo", "--version"]), "umoci": ver(["umoci", "--version"]),
                 "registry": ver(["docker-registry", "--version"])},
       "written": "ext4's lifetime_write_kbytes after the run's sync -f, less before it",
       "results": results}
with open(res + ".tmp", "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
os.rename(res + ".tmp", res)
for tag, im in images.items():
    for r in results:
        if r["image"] == tag:
            print(f"{tag:7} {r['system']:9} median {r['median_seconds']:6.2f} s, "
                  f"{r['median_written_bytes'] / 2**20:7.1f} MiB written, "
                  f"peak RSS {r['peak_rss_kib_max'] / 1024:6.1f} MiB (max of steps); steps: "
                  + ", ".join(f"{k} {v:.2f} s" for k, v in r["median_seconds_by_step"].items()))
    print(f"{tag:7} pull/pipeline: time {im['ratio_seconds']:.2f}x (median of the rounds' "
          f"ratios {im['ratio_seconds_median_of_rounds']:.2f}x), written {im['ratio_written']:.2f}x")
print(f"result: {res}")
EOF
