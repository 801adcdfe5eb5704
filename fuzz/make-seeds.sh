#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Makes the seed corpora of the fuzz targets, at build time, so that no
# binary corpus is kept in the repository: images that cfsctl builds from
# examples/tree and from a small tree with every file type and awkward case
# (hardlinks, xattrs, long names and targets, a directory of several chunks,
# deep nesting), composefs 1.0 (EROFS) images of some of them, their dumps,
# and the malformed dumps of the tests; tars of those trees and of the test
# images' layers; the documents of an image as fuzz_oci.c lays it out; the
# header lines, challenges, references and auth files of a registry;
# zstd:chunked tables of contents, written by hand here: every entry
# type, chunks, xattrs, times with fractions and zones.
# Usage: fuzz/make-seeds.sh CFSCTL OUTDIR
# containers-policy.json files and simple-signing payloads.
# (fills OUTDIR/image, OUTDIR/dump, OUTDIR/tar, OUTDIR/oci, OUTDIR/registry,
# OUTDIR/toc, OUTDIR/policy, OUTDIR/sigpayload)
set -eu
export LC_ALL=C
cfsctl=$(realpath "${1:?usage: make-seeds.sh CFSCTL OUTDIR}")
out=${2:?usage: make-seeds.sh CFSCTL OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfs-seeds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out/image" "$out/dump" "$out/tar" "$out/oci" "$out/registry" "$out/toc" \
	"$out/policy" "$out/sigpayload"

# A small tree with the cases the reader must handle.
t=$tmp/tree
mkdir -p "$t/dir/sub" "$t/many"
printf 'hello\n' >"$t/file"
printf 'hello\n' >"$t/same"
: >"$t/empty"
ln "$t/file" "$t/dir/hardlink"
ln -s file "$t/symlink"
ln -s "$(printf 't%.0s' $(seq 600))" "$t/longlink"
mkfifo "$t/fifo"
printf 'x' >"$t/$(printf 'n%.0s' $(seq 255))"
printf 'y' >"$t/$(printf 'caf\xe9 a=b')"
for i in $(seq 1 300); do : >"$t/many/entry-$i"; done
p=$t/deep
for i in $(seq 1 20); do p=$p/d$i; done
mkdir -p "$p"
printf 'bottom' >"$p/leaf"
chmod 4755 "$t/file"
if [ "$(id -u)" -eq 0 ]; then
	mknod "$t/null" c 1 3
	mknod "$t/whiteout" c 0 0
	mknod "$t/loop" b 7 0
fi
if command -v setfattr >/dev/null; then
	setfattr -n user.color -v blue "$t/file" 2>/dev/null || :
	setfattr -n user.empty "$t/empty" 2>/dev/null || :
	setfattr -n user.bin -v 0sAAEC "$t/same" 2>/dev/null || :
	setfattr -n user.color -v blue "$t/dir" 2>/dev/null || :
	[ "$(id -u)" -ne 0 ] || setfattr -n trusted.overlay.opaque -v y "$t/dir/sub" 2>/dev/null || :
fi
small=$tmp/small
mkdir -p "$small/d"
printf 'a' >"$small/f"
ln -s f "$small/l"

n=0
for src in "$top/examples/tree" "$t" "$small" "$t/dir"; do
	n=$((n + 1))
	"$cfsctl" build "$src" "$out/image/tree-$n.cfs"
	"$cfsctl" build --use-epoch --skip-xattrs "$src" "$out/image/epoch-$n.cfs"
	"$cfsctl" inspect dump "$out/image/tree-$n.cfs" >"$out/dump/tree-$n.dump"
done
# An image of a single empty directory: the smallest valid input.
mkdir "$tmp/emptydir"
"$cfsctl" build "$tmp/emptydir" "$out/image/emptydir.cfs"
"$cfsctl" inspect dump "$out/image/emptydir.cfs" >"$out/dump/emptydir.dump"
# composefs 1.0 (EROFS) images go through the same reader.
n=0
for src in "$small" "$t/dir" "$tmp/emptydir"; do
	n=$((n + 1))
	"$cfsctl" build --format=erofs "$src" "$out/image/erofs-$n.img"
done
"$cfsctl" build --format=erofs --from-dump "$out/dump/tree-3.dump" "$out/image/erofs-dump.img"
for f in "$top"/tests/data/bad-dumps/*.dump; do
	cp "$f" "$out/dump/bad-$(basename "$f")"
done
# Tars: the small trees in each format GNU tar writes, compressed or not,
# and the layers of the tests' container images (whiteouts, hardlinks,
# xattrs, devices).
n=0
for src in "$small" "$top/examples/tree" "$t/dir"; do
	n=$((n + 1))
	for fmt in gnu pax ustar; do
		tar -C "$src" --format=$fmt -cf "$out/tar/tree-$n-$fmt.tar" . 2>/dev/null || :
	done
	gzip -9c "$out/tar/tree-$n-pax.tar" >"$out/tar/tree-$n.tar.gz"
	! command -v zstd >/dev/null || zstd -q -c "$out/tar/tree-$n-pax.tar" >"$out/tar/tree-$n.tar.zst"
done
mkdir "$tmp/layers"
python3 "$top/tests/lib/oci-layers.py" "$tmp/layers"
cp "$tmp"/layers/*.tar "$out/tar/"

# The documents of fuzz_oci.c's image, byte for byte as it writes the
# others, each behind the byte that says which it is.
python3 - "$out/oci" <<'EOF'
import hashlib, json, sys
out = sys.argv[1]
def hdr(name, size):
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:107] = b"0000644"; h[108:115] = b"0000000"; h[116:123] = b"0000000"
    h[124:135] = b"%011o" % size; h[136:147] = b"00000000000"; h[156] = ord("0")
    h[257:263] = b"ustar\0"; h[263:265] = b"00"; h[148:156] = b" " * 8
    h[148:155] = b"%06o\0" % sum(h)
    return bytes(h)
layer = hdr("f", 3) + b"hi\n" + bytes(509) + bytes(1024)
sha = lambda b: hashlib.sha256(b).hexdigest()
config = ('{"architecture":"amd64","os":"linux","rootfs":{"type":"layers",'
          '"diff_ids":["sha256:%s"]}}' % sha(layer)).encode()
manifest = ('{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",'
            '"config":{"mediaType":"application/vnd.oci.image.config.v1+json",'
            '"digest":"sha256:%s","size":%d},'
            '"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar",'
            '"digest":"sha256:%s","size":%d}]}' % (sha(config), len(config), sha(layer),
                                                   len(layer))).encode()
desc = {"mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": "sha256:" + sha(manifest), "size": len(manifest),
        "platform": {"architecture": "amd64", "os": "linux"},
        "annotations": {"org.opencontainers.image.ref.name": "latest"}}
index = json.dumps({"schemaVersion": 2, "manifests": [desc]}).encode()
arm = dict(desc, platform={"architecture": "arm64", "os": "linux", "variant": "v8"})
index2 = json.dumps({"schemaVersion": 2, "manifests": [arm, desc]}).encode()
docker = json.dumps([{"Config": "config.json", "RepoTags": ["img:v1"],
                      "Layers": ["layer.tar"]}]).encode()
for name, kind, data in [("index", 0, index), ("index2", 0, index2), ("manifest", 1, manifest),
                         ("config", 2, config), ("docker", 3, docker)]:
    open("%s/%s" % (out, name), "wb").write(bytes([kind]) + data)
EOF

# What a registry and a user's files say.
r=$out/registry
printf 'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: 145\r\nWWW-Authenticate: Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/debian:pull"\r\n\r\n' >"$r/bearer"
printf 'HTTP/1.1 307 Temporary Redirect\r\nLocation: http://storage.example/x?sig=1\r\nContent-Length: 0\r\n\r\nHTTP/2 200\r\ncontent-type: application/vnd.oci.image.manifest.v1+json\r\n\r\n' >"$r/redirect"
printf 'Basic realm="Registry Realm", charset="UTF-8"' >"$r/basic"
printf 'Bearer realm="a\\"b",scope=x,,service=' >"$r/quoted"
printf 'Y2ZzOnMzY3JldDp4' >"$r/base64"
printf 'debian:12' >"$r/short"
printf 'localhost:5000/team/app@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef' >"$r/digest"
printf '{"auths": {"reg.example:5000": {"auth": "dTE6cDE="}, "reg.example:5000/team": {"auth": "bnM6eA=="}, "https://index.docker.io/v1/": {"auth": "aHViOnB3"}}, "credsStore": "x"}' >"$r/authfile"


# zstd:chunked tables of contents.
d=sha256:$(printf 'ab%.0s' $(seq 32))
cat >"$out/toc/layer.json" <<EOF
{"version":1,"entries":[{"type":"dir","name":"./","mode":493,"modtime":"2024-05-06T07:08:09Z"},
{"type":"reg","name":"./small","mode":420,"size":3,"modtime":"2024-05-06T07:08:09.5+02:00","digest":"$d","offset":94,"endOffset":110},
{"type":"symlink","name":"./link","linkName":"a/f1","mode":511},
{"type":"dir","name":"./a/","mode":493,"uid":1000,"gid":1000,"xattrs":{"user.k":"dg=="}},
{"type":"reg","name":"./a/big","mode":420,"size":57000,"digest":"$d","offset":245,"endOffset":57287,"chunkSize":3065,"chunkDigest":"$d"},
{"type":"chunk","name":"./a/big","offset":3324,"chunkSize":38093,"chunkOffset":3065,"chunkDigest":"$d"},
{"type":"chunk","name":"./a/big","offset":41431,"chunkSize":15842,"chunkOffset":41158,"chunkType":"zeros"},
{"type":"hardlink","name":"./a/hard","linkName":"./a/big","mode":420},
{"type":"reg","name":"./a/.wh.gone","mode":420},
{"type":"char","name":"./null","mode":438,"devMajor":1,"devMinor":3},
{"type":"block","name":"./loop","devMajor":7},{"type":"fifo","name":"./fifo","mode":420}],
"tarSplitDigest":"$d"}
EOF
printf '{"version":1,"entries":[]}' >"$out/toc/empty.json"
# a tar-split (the same target reads its input as one too)
printf '%s\n' '{"type":2,"payload":"Li8AAAAA","position":0}' '{"type":1,"name":"./","payload":null,"position":1}' \
	'{"type":2,"payload":"Li9zbWFsbAAA","position":2}' '{"type":1,"name":"./small","size":3,"payload":"tAt3+IpQDrE=","position":3}' \
	'{"type":2,"payload":"AAAAAAAAAAAAAAAAAAAAAAAA","position":4}' >"$out/toc/tarsplit.jsonl"
# Policies: every requirement and signedIdentity form, and scopes; payloads.
d=sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
printf '{"default": [{"type": "insecureAcceptAnything"}]}' >"$out/policy/accept.json"
cat >"$out/policy/scopes.json" <<EOF
{"default": [{"type": "reject"}],
 "transports": {
  "docker": {
   "example.com/ns/app:1": [{"type": "insecureAcceptAnything"}],
   "example.com/ns": [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "/k.gpg",
     "signedIdentity": {"type": "matchRepository"}}],
   "example.com:5000": [{"type": "signedBy", "keyType": "GPGKeys", "keyPaths": ["/a", "/b"],
     "signedIdentity": {"type": "exactReference", "dockerReference": "example.com/x:1"}}],
   "*.example.org": [{"type": "sigstoreSigned", "keyData": "AAAA",
     "signedIdentity": {"type": "remapIdentity", "prefix": "example.org", "signedPrefix": "example.com/m"}}],
   "docker.io/library": [{"type": "sigstoreSigned", "keyPath": "/c.pub",
     "signedIdentity": {"type": "exactRepository", "dockerRepository": "docker.io/library/debian"}}],
   "": [{"type": "signedBy", "keyType": "GPGKeys", "keyData": "AAAA",
     "signedIdentity": {"type": "matchExact"}}]},
  "atomic": {"": [{"type": "reject"}]}}}
EOF
printf '{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": "%s"}, "identity": {"docker-reference": "example.com/ns/app:1"}}, "optional": {"creator": "x", "timestamp": 1}}' \
	"$d" >"$out/sigpayload/gpg.json"
printf '{"critical":{"identity":{"docker-reference":"example.com/ns/app:1"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' \
	"$d" >"$out/sigpayload/cosign.json"
echo "seeds: $(ls "$out/image" | wc -l) images, $(ls "$out/dump" | wc -l) dumps, $(ls "$out/tar" | wc -l) tars, $(ls "$out/oci" | wc -l) OCI documents, $(ls "$out/registry" | wc -l) registry inputs, $(ls "$out/toc" | wc -l) TOCs in $out"
