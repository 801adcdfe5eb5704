#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# 'make bench-push': cfsctl push of a Debian image as zstd:chunked, against
# skopeo copy --dest-compress-format zstd:chunked of the same image, to a
# docker-registry this script starts on a free 127.0.0.1 port (its storage
# in build/, emptied before each system's turn, and stopped on exit).
#
# The image is the Debian bookworm minbase root filesystem bench/pull.sh
# makes (debootstrap from the machine's apt mirror, vm/debian-mirror.sh;
# kept in build/bench/pull/rootfs.tar, made by bench/debian.sh when it is
# not there). Version B is an update of A as images are updated: A's layer
# and one layer on top holding the files B changes (every 20th regular
# file, as bench/pull.sh changes them, with their directories). Both are
# in one OCI layout, the layers uncompressed (so that skopeo pays no
# gunzip the other does not), B's first layer the same blob as A's; the
# trees GNU tar unpacks from A's layer and from A's and B's layers
# applied (B's whole tree) are beside it. skopeo copies oci:LAYOUT:A and
# then :B to the registry as zstd:chunked (skopeo-l3: the same with
# --dest-compress-level 3, the zstd level cfsctl uses; skopeo's default
# is higher). cfsctl pushes the tree of A and then that of B, each one
# zstd:chunked layer (cfs); and oci:LAYOUT:A and then :B with
# --compression=zstd:chunked (cfs-oci), each layer recompressed with its
# tar stream kept (so B's first layer is A's blob again, and only B's new
# layer is sent). Per push: the wall time, and the bytes uploaded: the
# sizes of the blobs the registry did not have before it (both tools ask with a HEAD first; a blob sent again would not count,
# and cfsctl's --json, which counts what it sent, is kept beside); and for
# B, the size of its new layer as pushed: the layers of B's manifest that
# the registry did not hold before B (for cfs, B's one layer). The
# systems alternate, one round each in turn.
#
# The signed pull: A pushed by cfsctl with --sign-by (a GPG key made in
# build/), and cfsctl pull of it into an empty digest store with --policy
# (signedBy, the key's file) against the same pull with a policy that
# accepts anything; alternating too.
#
# cfsctl's push blob cache is build/bench/push/xdg-cache, emptied at the
# start: within the run it holds what cfs-oci's pushes recompressed, as
# skopeo's blob-info cache holds what its copies did (cfs-oci's column
# "reused" counts the layers a push took from it, not recompressed).
#
# The medians and their ratios go into bench/results/DATE-host-push.json
# (DATE-host-push-2.json and so on when a run of the day wrote it already)
# and are printed.
#
# Usage: bench/push.sh [--runs N] [--cfsctl PATH] [--systems LIST]
#   --runs N         rounds (default 5)
#   --cfsctl PATH    the cfsctl measured (default build/cfsctl)
#   --systems LIST   a subset, comma-separated, of cfs, cfs-oci,
#                    cfs-oci-noseal (cfs-oci with --no-seal: what the seal
#                    costs), skopeo, skopeo-l3 and signed-pull (default:
#                    all of them but cfs-oci-noseal)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=5 cfsctl=$top/build/cfsctl systems=cfs,cfs-oci,skopeo,skopeo-l3,signed-pull
while [ $# -gt 0 ]; do
	case $1 in
	--runs) runs=${2:?--runs needs a number}; shift 2 ;;
	--cfsctl) cfsctl=${2:?--cfsctl needs a path}; shift 2 ;;
	--systems) systems=${2:?--systems needs a list}; shift 2 ;;
	-h|--help) sed -n '3,51p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/push.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
	esac
done
for s in ${systems//,/ }; do
	case $s in
	cfs | cfs-oci | cfs-oci-noseal | skopeo | skopeo-l3 | signed-pull) ;;
	*) echo "bench/push.sh: unknown system '$s' in --systems (see --help)" >&2; exit 2 ;;
	esac
done
# has SYSTEM: is SYSTEM measured?
has() { case ",$systems," in *",$1,"*) return 0 ;; esac; return 1; }
say() { echo "bench-push: $*" >&2; }
die() { echo "bench-push: $*" >&2; exit 1; }
for t in debootstrap skopeo docker-registry gpg curl python3 tar; do
	command -v $t > /dev/null || die "$t is not installed (make deps)"
done
[ "$(id -u)" = 0 ] || die "needs root (debootstrap, and trees with their owners)"
[ -x "$cfsctl" ] || die "no cfsctl at '$cfsctl' (make)"

. "$top/bench/lib.sh"
commit=$(bench_commit "$cfsctl")
src=$top/build/bench/pull out=$top/build/bench/push
mkdir -p "$src" "$out"
. "$top/bench/registry.sh"
. "$top/bench/debian.sh"
cleanup() {
	local rc=$?
	registry_stop
	gpgconf --homedir "$out/gnupg" --kill all 2> /dev/null || true
	exit $rc
}
trap cleanup EXIT

# ---- the root filesystem and version B, as bench/pull.sh makes them (bench/debian.sh) ----
debian_rootfs "$src"
debian_version_b "$src" || true
recipe="$(md5sum < "$src/rootfs.tar" | cut -c1-32) $(md5sum < "$src/rootfsB.tar" | cut -c1-32) $(md5sum < "$top/tests/lib/mkoci.py" | cut -c1-32) $(md5sum < "$0" | cut -c1-32)"
if [ "$(cat "$out/recipe" 2> /dev/null)" != "$recipe" ]; then
	say "making the layout and the trees of A and B"
	rm -rf "$out/layout" "$out/A" "$out/B" "$out/recipe" "$out/new.tar"
	# B's new layer: the members of rootfsB.tar that differ from A's, and
	# the directories above them, as A has them
	python3 - "$src/rootfs.tar" "$src/rootfsB.tar" "$out/new.tar.tmp" <<'EOF' || die "making B's new layer"
import io, os, sys, tarfile
a = {}
with tarfile.open(sys.argv[1]) as t:
    for m in t:
        a[m.name] = (m, t.extractfile(m).read() if m.isreg() else None)
changed = []
with tarfile.open(sys.argv[2]) as t:
    for m in t:
        data = t.extractfile(m).read() if m.isreg() else None
        if m.isreg() and (m.name not in a or a[m.name][1] != data):
            changed.append((m, data))
dirs = set()
for m, _ in changed:
    d = os.path.dirname(m.name)
    while d not in ("", "."):
        dirs.add(d)
        d = os.path.dirname(d)
with tarfile.open(sys.argv[3], "w", format=tarfile.PAX_FORMAT) as dst:
    for name in sorted(dirs, key=lambda n: (n.count("/"), n)):
        dst.addfile(a[name][0])
    for m, data in changed:
        dst.addfile(m, io.BytesIO(data))
print(f"{len(changed)} files changed", file=sys.stderr)
EOF
	mv "$out/new.tar.tmp" "$out/new.tar"
	cat > "$out/spec.json" <<EOF
[{"tag": "A", "layers": [["$src/rootfs.tar", "none"]]},
 {"tag": "B", "layers": [["$src/rootfs.tar", "none"], ["$out/new.tar", "none"]]}]
EOF
	python3 "$top/tests/lib/mkoci.py" "$out/layout" "$out/spec.json" || die "writing the OCI layout"
	for v in A B; do
		mkdir "$out/$v"
		for t in "$src/rootfs.tar" "$out/new.tar"; do
			[ $v = A ] && [ "$t" = "$out/new.tar" ] && continue
			tar --numeric-owner --xattrs --xattrs-include='*' -p -xf "$t" -C "$out/$v" || die "unpacking $v"
		done
	done
	# B's tree is A's with the new layer applied: the same as rootfsB.tar's
	mkdir "$out/B.check"
	tar --numeric-owner --xattrs --xattrs-include='*' -p -xf "$src/rootfsB.tar" -C "$out/B.check" ||
		die "unpacking rootfsB.tar"
	diff -r --no-dereference "$out/B" "$out/B.check" > /dev/null || die "A's layer and B's new layer do not make B"
	rm -rf "$out/B.check"
	echo "$recipe" > "$out/recipe"
fi

# ---- the registry: started afresh, empty, for each turn ----
start_registry() { registry_start "$out/registry"; }
# blob_bytes: the bytes of the blobs the registry holds
blob_bytes() {
	[ -d "$out/registry/data" ] || { echo 0; return; }
	find "$out/registry/data" -path '*/blobs/sha256/*/data' -type f -printf '%s\n' 2> /dev/null |
		awk '{ n += $1 } END { print n + 0 }'
}

echo '{"default": [{"type": "insecureAcceptAnything"}]}' > "$out/accept.json"
# blob_list: the blobs the registry holds, by digest
blob_list() {
	[ -d "$out/registry/data" ] || return 0
	find "$out/registry/data" -path '*/blobs/sha256/*/data' -type f -printf '%h\n' 2> /dev/null |
		sed 's,.*/,,' | sort
}
# new_layers REPO TAG BEFORE: the bytes of the layers of REPO:TAG's manifest
# not in the list of blobs BEFORE, and how many there are of all
new_layers() {
	python3 - "$out/registry/data/docker/registry/v2" "$1" "$2" "$3" <<'EOF'
import json, sys
root, repo, tag, before = sys.argv[1:5]
old = set(open(before).read().split())
def blob(d):
    return open(f"{root}/blobs/sha256/{d[7:9]}/{d[7:]}/data", "rb").read()
d = open(f"{root}/repositories/{repo}/_manifests/tags/{tag}/current/link").read().strip()
layers = json.loads(blob(d))["layers"]
new = [l for l in layers if l["digest"][7:] not in old]
print(sum(l["size"] for l in new), len(new), len(layers))
EOF
}
# push SYSTEM VERSION: one timed push; appends "SYSTEM VERSION SECONDS BYTES SENT NEWLAYER REUSED"
# to runs.txt (NEWLAYER: for B, the bytes of its layers new to the registry, '-' for A;
# REUSED: cfs-oci's layers taken from the push blob cache, not recompressed)
push() {
	local sys=$1 v=$2 b0 b1 t0 t1 sent=- newl=- repo reused=-
	b0=$(blob_bytes)
	blob_list > "$out/before.txt"
	sync
	t0=$(date +%s.%N)
	case $sys in
	cfs)
		"$cfsctl" push --plain-http --json "$out/$v" "$reg/bench/cfs:$v" > "$out/push.json" 2> "$out/push.err" ||
			{ cat "$out/push.err" >&2; die "cfsctl push of $v failed"; }
		;;
	cfs-oci | cfs-oci-noseal)
		local noseal=()
		[ $sys = cfs-oci-noseal ] && noseal=(--no-seal)
		"$cfsctl" push --plain-http --json --compression=zstd:chunked "${noseal[@]}" "oci:$out/layout:$v" \
			"$reg/bench/$sys:$v" > "$out/push.json" \
			2> "$out/push.err" || { cat "$out/push.err" >&2; die "cfsctl push of oci:LAYOUT:$v failed"; }
		;;
	skopeo | skopeo-l3)
		# skopeo-l3: at zstd level 3, cfsctl's, where skopeo's default is higher
		local level=()
		[ $sys = skopeo-l3 ] && level=(--dest-compress-level 3)
		skopeo --policy "$out/accept.json" copy -q --dest-tls-verify=false \
			--dest-compress-format zstd:chunked "${level[@]}" "oci:$out/layout:$v" \
			"docker://$reg/bench/skopeo:$v" || die "$sys copy of $v failed"
		;;
	esac
	t1=$(date +%s.%N)
	case $sys in cfs*) sent=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes_uploaded"])' "$out/push.json") ;; esac
	case $sys in cfs-oci*) reused=$(python3 -c 'import json,sys; print(sum(l.get("from_blob_cache", False) for l in json.load(open(sys.argv[1]))["layers"]))' "$out/push.json") ;; esac
	b1=$(blob_bytes)
	repo=bench/$sys
	case $sys in skopeo*) repo=bench/skopeo ;; esac
	if [ $v = B ]; then
		newl=$(new_layers "$repo" B "$out/before.txt") || die "reading B's manifest in the registry"
		# shellcheck disable=SC2086 # three numbers
		set -- $newl
		newl=$1
		say "$sys B: $2 of its $3 layers new to the registry"
	fi
	echo "$sys $v $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') $((b1 - b0)) $sent $newl $reused" >> "$out/runs.txt"
	say "$(tail -n 1 "$out/runs.txt")"
}

# ---- the key, and the policies of the signed pull ----
rm -rf "$out/gnupg" "$out/sigstore" "$out/registries.d"
mkdir -m 700 "$out/gnupg"
mkdir "$out/registries.d"
gpg --homedir "$out/gnupg" --batch --passphrase '' --quick-gen-key "cfs bench <bench@example.org>" \
	ed25519 sign never > /dev/null 2>&1 || die "gpg: making a key"
fpr=$(gpg --homedir "$out/gnupg" --with-colons --list-secret-keys | awk -F: '/^fpr/ { print $10; exit }')
gpg --homedir "$out/gnupg" --export "$fpr" > "$out/signer.gpg"

: > "$out/runs.txt"
: > "$out/pulls.txt"
export XDG_CACHE_HOME=$out/xdg-cache
rm -rf "$XDG_CACHE_HOME"
start=$(date +%s)
for n in $(seq "$runs"); do
	say "round $n of $runs"
	order="cfs cfs-oci cfs-oci-noseal skopeo skopeo-l3"
	[ $((n % 2)) = 0 ] && order="skopeo-l3 skopeo cfs-oci-noseal cfs-oci cfs"
	for sys in $order; do
		has $sys || continue
		start_registry
		push $sys A
		push $sys B
	done
done

# ---- the signed pull ----
if has signed-pull; then
start_registry
printf '%s\n' "docker:" "  $reg/bench:" "    lookaside: file://$out/sigstore" \
	"    lookaside-staging: file://$out/sigstore" > "$out/registries.d/bench.yaml"
printf '%s\n' '{"default": [{"type": "reject"}], "transports": {' \
	"\"docker\": {\"$reg/bench\": [{\"type\": \"signedBy\", \"keyType\": \"GPGKeys\", \"keyPath\": \"$out/signer.gpg\"}]}}}" \
	> "$out/signed.json"
GNUPGHOME=$out/gnupg "$cfsctl" push --plain-http --sign-by "$fpr" --gpg-homedir "$out/gnupg" \
	--registries.d "$out/registries.d" "$out/A" "$reg/bench/signed:A" 2> "$out/push.err" ||
	{ cat "$out/push.err" >&2; die "the signed push failed"; }
for n in $(seq "$runs"); do
	order="signed accept"
	[ $((n % 2)) = 0 ] && order="accept signed"
	for p in $order; do
		rm -rf "$out/store" "$out/pulled.cfs"
		sync
		t0=$(date +%s.%N)
		"$cfsctl" pull --plain-http --policy "$out/$p.json" --registries.d "$out/registries.d" \
			--digest-store "$out/store" "$reg/bench/signed:A" "$out/pulled.cfs" 2> "$out/pull.err" ||
			{ cat "$out/pull.err" >&2; die "the $p pull failed"; }
		t1=$(date +%s.%N)
		echo "$p $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')" >> "$out/pulls.txt"
		say "pull $(tail -n 1 "$out/pulls.txt")"
	done
done
# the signed policy refuses what it should: an unsigned image
"$cfsctl" push --plain-http "$out/B" "$reg/bench/unsigned:B" 2> /dev/null || die "the unsigned push failed"
if "$cfsctl" pull --plain-http --policy "$out/signed.json" --registries.d "$out/registries.d" \
	--digest-store "$out/store" "$reg/bench/unsigned:B" "$out/pulled.cfs" 2> /dev/null; then
	die "the signedBy policy accepted an unsigned image: the signed pull measured no check"
fi
registry_stop
fi

# ---- the result ----
mkdir -p "$top/bench/results"
res=$top/bench/results/$(date -u +%Y-%m-%d)-host-push.json
k=2
while [ -e "$res" ]; do
	res=$top/bench/results/$(date -u +%Y-%m-%d)-host-push-$k.json
	k=$((k + 1))
done
python3 - "$out" "$res" "$commit" "$runs" "$(( $(date +%s) - start ))" "$src/rootfs.tar" <<'EOF'
import json, os, platform, statistics as st, subprocess, sys, time
out, res, commit, runs, elapsed, tar = sys.argv[1:7]
def ver(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"
rows = [l.split() for l in open(f"{out}/runs.txt")]
pushes = {}
for sysname in ("cfs", "cfs-oci", "cfs-oci-noseal", "skopeo", "skopeo-l3"):
    for v in ("A", "B"):
        rs = [r for r in rows if r[0] == sysname and r[1] == v]
        if not rs:
            continue
        pushes[f"{sysname} {v}"] = {
            "seconds": [float(r[2]) for r in rs],
            "median_seconds": st.median(float(r[2]) for r in rs),
            "uploaded_bytes": [int(r[3]) for r in rs],
            "median_uploaded_bytes": st.median(int(r[3]) for r in rs),
            "cfsctl_json_bytes_uploaded": [int(r[4]) for r in rs if r[4] != "-"],
            "layers_from_blob_cache": [int(r[6]) for r in rs if len(r) > 6 and r[6] != "-"]}
        if v == "B":
            p = pushes[f"{sysname} B"]
            p["new_layer_bytes"] = [int(r[5]) for r in rs]
            p["median_new_layer_bytes"] = st.median(int(r[5]) for r in rs)
            p["uploaded_to_new_layer"] = p["median_uploaded_bytes"] / p["median_new_layer_bytes"]
def ratios_of(me):
    return {f"{v} to {peer}": {
                "seconds": pushes[f"{me} {v}"]["median_seconds"] / pushes[f"{peer} {v}"]["median_seconds"],
                "uploaded": pushes[f"{me} {v}"]["median_uploaded_bytes"] / pushes[f"{peer} {v}"]["median_uploaded_bytes"]}
            for v in ("A", "B") for peer in ("skopeo", "skopeo-l3")
            if f"{me} {v}" in pushes and f"{peer} {v}" in pushes}
ratios, ratios_oci = ratios_of("cfs"), ratios_of("cfs-oci")
ratios_noseal = ratios_of("cfs-oci-noseal")
pl = [l.split() for l in open(f"{out}/pulls.txt")]
pulls = {p: {"seconds": [float(r[1]) for r in pl if r[0] == p],
             "median_seconds": st.median(float(r[1]) for r in pl if r[0] == p)}
         for p in ("signed", "accept") if any(r[0] == p for r in pl)}
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "")
doc = {"benchmark": "push", "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "commit": commit, "kernel": platform.release(), "machine": f"{cpu}, {os.cpu_count()} CPUs",
       "runs": int(runs), "elapsed_seconds": int(elapsed),
       "rootfs": {"what": "debootstrap --variant=minbase bookworm, apt caches and lists removed",
                  "tar_bytes": os.path.getsize(tar)},
       "tools": {"skopeo": ver(["skopeo", "--version"]),
                 "registry": ver(["docker-registry", "--version"])},
       "uploaded": "the sizes of the blobs the registry did not hold before the push",
       "new_layer": "for B, the sizes of the layers of its manifest the registry did not hold before it",
       "systems": {"cfs": "cfsctl push of the tree, one zstd:chunked layer",
                   "cfs-oci": "cfsctl push --compression=zstd:chunked oci:LAYOUT:TAG, the layout's uncompressed layers recompressed",
                   "cfs-oci-noseal": "the same with --no-seal",
                   "skopeo": "skopeo copy --dest-compress-format zstd:chunked oci:LAYOUT:TAG",
                   "skopeo-l3": "the same with --dest-compress-level 3"},
       "pushes": pushes, "ratio_cfs_to_skopeo": ratios, "ratio_cfs_oci_to_skopeo": ratios_oci,
       "ratio_cfs_oci_noseal_to_skopeo": ratios_noseal,
       "pulls": pulls,
       "ratio_signed_to_accept": pulls["signed"]["median_seconds"] / pulls["accept"]["median_seconds"]
                                 if pulls else None}
with open(res + ".tmp", "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")
os.rename(res + ".tmp", res)
for k, p in pushes.items():
    print(f"push {k}: median {p['median_seconds']:6.2f} s, {p['median_uploaded_bytes'] / 2**20:7.2f} MiB uploaded"
          + (f", new layer {p['median_new_layer_bytes'] / 2**20:.2f} MiB ({p['uploaded_to_new_layer']:.3f}x)"
             if "new_layer_bytes" in p else ""))
for v, r in ratios.items():
    print(f"{v}: cfsctl's time {r['seconds']:.2f}x, uploaded {r['uploaded']:.2f}x")
for v, r in ratios_oci.items():
    print(f"oci: {v}: cfsctl's time {r['seconds']:.2f}x, uploaded {r['uploaded']:.2f}x")
for v, r in ratios_noseal.items():
    print(f"oci --no-seal: {v}: cfsctl's time {r['seconds']:.2f}x, uploaded {r['uploaded']:.2f}x")
for p, x in pulls.items():
    print(f"pull {p}: median {x['median_seconds']:6.2f} s")
if pulls:
    print(f"signed/accept pull: {doc['ratio_signed_to_accept']:.3f}x")
print(f"result: {res}")
EOF
