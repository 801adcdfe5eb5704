#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --from-oci: an OCI image layout of three layers (gzip, zstd,
# plain) with whiteouts, opaque directories (the marker before and after the
# layer's own entries), hardlinks into an earlier layer and to a replaced
# file, pax xattrs, devices, a file replaced by a directory and back, gives
# the image of the tree made by applying the layers by hand, and of what
# umoci unpacks, in both formats, from a directory, an oci-archive or a
# docker-archive (skopeo's, and one as docker save wrote it), with any
# thread count; docker media types too; tags and platforms choose the
# manifest; a symlink is 0777 whatever its header says; a tampered or resized blob, a layer that uncompressed is not the
# config's diff_id, a malformed diff_id, an unknown or wrong media type are
# refused naming the blob, and leave no image and no objects.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices and owners in the tree made by hand)"
umask 022

dump() { # IMAGE -> stdout
	"$CFSCTL" inspect dump "$1" || fail "inspect dump $1"
}

# The layers, their entries in the order given.
mkdir "$T/L"
python3 - "$T/L" <<'EOF' || fail "writing the layers"
import io, sys, tarfile
M = 1700000000
def layer(path, entries):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for e in entries:
            name, kind = e[0], e[1]
            i = tarfile.TarInfo(name); i.mtime = M; i.mode = 0o644
            data = b""
            if kind == "d":
                i.type = tarfile.DIRTYPE; i.mode = 0o755
            elif kind == "f":
                data = e[2]
            elif kind == "h":
                i.type = tarfile.LNKTYPE; i.linkname = e[2]
            elif kind == "l":
                i.type = tarfile.SYMTYPE; i.linkname = e[2]
            elif kind in ("c", "b"):
                i.type = tarfile.CHRTYPE if kind == "c" else tarfile.BLKTYPE
                i.devmajor, i.devminor = e[2]
            for k, v in (e[3] if len(e) > 3 else {}).items():
                if k == "xattrs":
                    i.pax_headers = {"SCHILY.xattr." + x: y for x, y in v.items()}
                else:
                    setattr(i, k, v)
            i.size = len(data)
            t.addfile(i, io.BytesIO(data))
d = sys.argv[1]
layer(f"{d}/l1.tar", [
    ("./", "d"), ("etc/", "d"), ("etc/passwd", "f", b"root:x:0:0\n"),
    ("usr/", "d"), ("usr/bin/", "d"), ("usr/bin/perl", "f", b"perl-1", {"mode": 0o755}),
    ("usr/bin/perl5", "h", "usr/bin/perl"),
    ("keep/", "d"), ("keep/a", "f", b"a"), ("keep/b", "f", b"b", {"uid": 1000, "gid": 100}),
    ("opq/", "d"), ("opq/old", "f", b"old"), ("opq/olddir/", "d"), ("opq/olddir/x", "f", b"x"),
    ("opq2/", "d"), ("opq2/old", "f", b"old2"), ("opq2/sub/", "d"), ("opq2/sub/y", "f", b"y"),
    ("gone", "f", b"gone"), ("gonedir/", "d"), ("gonedir/f", "f", b"f"),
    ("swap", "f", b"a file"),
    ("dev/", "d"), ("dev/null", "c", (1, 3), {"mode": 0o666}),
    ("dev/sda", "b", (8, 0), {"mode": 0o660}),
    ("data", "f", b"data" * 100, {"xattrs": {"user.foo": "bar", "user.two": "2"}}),
    ("sym", "l", "etc/passwd"),  # mode 0644 in the header
])
layer(f"{d}/l2.tar", [
    (".wh.gone", "f", b""), (".wh.gonedir", "f", b""),
    ("etc/", "d", None, {"mode": 0o750, "xattrs": {"user.dir": "1"}}),
    ("opq/", "d", None, {"mode": 0o700}), ("opq/.wh..wh..opq", "f", b""), ("opq/new", "f", b"new"),
    ("opq2/mine", "f", b"mine"), ("opq2/sub/z", "f", b"z"), ("opq2/.wh..wh..opq", "f", b""),
    ("swap/", "d"), ("swap/inner", "f", b"inner"),
    ("usr/bin/perl", "f", b"perl-2", {"mode": 0o755}),
    ("link2", "h", "usr/bin/perl5"),
    ("keep/c", "f", b"c"),
])
layer(f"{d}/l3.tar", [
    ("swap", "f", b"a file again"),
    ("keep/.wh.a", "f", b""),
    ("usr/bin/.wh.perl", "f", b""),
])
layer(f"{d}/arm.tar", [("arm", "f", b"arm64")])
EOF
L=$T/L
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$L/l1.tar", "gzip"], ["$L/l2.tar", "zstd"], ["$L/l3.tar", "none"]]},
 {"tag": "gz", "layers": [["$L/l1.tar", "gzip"], ["$L/l2.tar", "gzip"], ["$L/l3.tar", "gzip"]]},
 {"tag": "docker", "docker": true,
  "layers": [["$L/l1.tar", "gzip"], ["$L/l2.tar", "gzip"], ["$L/l3.tar", "gzip"]]},
 {"tag": "latest", "layers": [["$L/l1.tar", "none"]]},
 {"tag": "multi", "platforms": [
   {"arch": "amd64", "layers": [["$L/l1.tar", "gzip"]]},
   {"arch": "arm64", "variant": "v8", "layers": [["$L/l1.tar", "gzip"], ["$L/arm.tar", "zstd"]]}]},
 {"tag": "bzip2", "layer_type": "application/vnd.oci.image.layer.v1.tar+bzip2",
  "layers": [["$L/l1.tar", "none"]]},
 {"tag": "mislabelled", "layer_type": "application/vnd.oci.image.layer.v1.tar",
  "layers": [["$L/l1.tar", "gzip"]]},
 {"tag": "baddiff", "layers": [["$L/l1.tar", "gzip"], ["$L/l2.tar", "zstd"], ["$L/l3.tar", "none"]],
  "diff_ids": {"1": "sha256:$(printf '%064d' 0)"}},
 {"tag": "notdiff", "layers": [["$L/l1.tar", "gzip"], ["$L/l2.tar", "zstd"]],
  "diff_ids": {"1": "md5:0"}}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"

# The same layers applied by hand.
h=$T/hand
mkdir -p "$h/etc" "$h/usr/bin" "$h/keep" "$h/opq" "$h/opq2/sub" "$h/dev"
printf 'root:x:0:0\n' >"$h/etc/passwd"
printf perl-1 >"$h/link2" && chmod 755 "$h/link2" && ln "$h/link2" "$h/usr/bin/perl5"
printf b >"$h/keep/b" && chown 1000:100 "$h/keep/b"
printf c >"$h/keep/c"
printf new >"$h/opq/new"
printf mine >"$h/opq2/mine"
printf z >"$h/opq2/sub/z"
printf 'a file again' >"$h/swap"
mknod -m 666 "$h/dev/null" c 1 3 && mknod -m 660 "$h/dev/sda" b 8 0
ln -s etc/passwd "$h/sym"
python3 -c 'print("data" * 100, end="")' >"$h/data"
setfattr -n user.foo -v bar "$h/data" && setfattr -n user.two -v 2 "$h/data" &&
	setfattr -n user.dir -v 1 "$h/etc" || fail "setting user xattrs"
chmod 750 "$h/etc" && chmod 700 "$h/opq"
find "$h" -exec touch -h -d @1700000000 {} +

expect_exit 0 "$CFSCTL" build --print-digest "$h" "$T/hand.img"
hand_digest=$(cat "$T/out")
dump "$T/hand.img" >"$T/hand.dump"
expect_exit 0 "$CFSCTL" build --from-oci --print-digest --digest-store="$T/store" "oci:$T/lay:v1" \
	"$T/v1.img"
assert_eq "$hand_digest" "$(cat "$T/out")" "--print-digest of the image"
dump "$T/v1.img" >"$T/v1.dump"
diff -u "$T/hand.dump" "$T/v1.dump" >&2 || fail "the image differs from the tree made by hand"
cmp -s "$T/hand.img" "$T/v1.img" || fail "the images of the layout and the tree differ"
# What must be there for the comparison to mean something.
grep -q '^/usr/bin/perl5 6 @100755 2 .* /link2 ' "$T/v1.dump" ||
	fail "the hardlinks into the first layer lost their inode"
grep -q '^/data .*user\.foo=bar user\.two=2$' "$T/v1.dump" || fail "pax xattrs"
grep -q '^/etc 0 40750 .* user\.dir=1$' "$T/v1.dump" || fail "a later directory entry's metadata"
grep -q "^/dev/sda 0 60660 1 0 0 $((8 << 8)) " "$T/v1.dump" || fail "block device"
grep -q '^/swap 12 100644 ' "$T/v1.dump" || fail "a file replaced by a directory and back"
grep -q '^/sym 0 120777 .* etc/passwd ' "$T/v1.dump" || fail "a symlink's mode is not 0777 whatever its header says"
grep -q '^/opq2/sub/z ' "$T/v1.dump" || fail "an opaque directory lost its layer's own entries"
if grep -qE '(\.wh\.|/gone|/keep/a |/opq/old|/opq2/old|/opq2/sub/y|/usr/bin/perl |/swap/)' \
	"$T/v1.dump"; then
	fail "a whiteout, or what it removes, is in the image"
fi

# Every object is named by its fs-verity digest; no temporaries are left.
check_store "$T/store"
assert_eq 9 "$n_objects" "objects in the store"

# Both formats, any thread count, docker media types, all gzip: the same image.
expect_exit 0 "$CFSCTL" build --format=erofs "$h" "$T/hand.erofs"
expect_exit 0 "$CFSCTL" build --from-oci --format=erofs --threads=1 "oci:$T/lay:v1" "$T/v1.erofs"
cmp -s "$T/hand.erofs" "$T/v1.erofs" || fail "EROFS images of the layout and the tree differ"
expect_exit 0 "$CFSCTL" build --from-oci --threads=2 "oci:$T/lay:v1" "$T/threads.img"
cmp -s "$T/v1.img" "$T/threads.img" || fail "--threads changes the image"
for tag in gz docker; do
	expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay:$tag" "$T/$tag.img"
	cmp -s "$T/v1.img" "$T/$tag.img" || fail "the image tagged $tag differs"
done

# umoci unpacks the same tree (it takes no zstd layers: the all-gzip image).
umoci unpack --image "$T/lay:gz" "$T/bundle" >"$T/umoci.log" 2>&1 ||
	{ cat "$T/umoci.log"; fail "umoci unpack"; }
expect_exit 0 "$CFSCTL" build "$T/bundle/rootfs" "$T/umoci.img"
# umoci leaves the time of unpacking as the mtime of a directory that an
# opaque whiteout above it emptied, when the layer does not list it itself.
dump "$T/umoci.img" | sed 's|^\(/opq2/sub 0 40755 2 0 0 0 \)[0-9.]*|\11700000000.0|' >"$T/umoci.dump"
diff -u "$T/umoci.dump" "$T/v1.dump" >&2 || fail "the image differs from umoci's unpacked tree"

# An oci-archive, plain or compressed.
tar -C "$T/lay" -cf "$T/lay.tar" . || fail "tar of the layout"
gzip -c "$T/lay.tar" >"$T/lay.tar.gz"
for a in lay.tar lay.tar.gz; do
	expect_exit 0 "$CFSCTL" build --from-oci "oci-archive:$T/$a:v1" "$T/archive.img"
	cmp -s "$T/v1.img" "$T/archive.img" || fail "oci-archive:$a gives another image"
done

# Tags and platforms. Without a tag: 'latest', which has the first layer only.
expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay" "$T/latest.img"
dump "$T/latest.img" >"$T/latest.dump"
grep -q '^/gone ' "$T/latest.dump" && ! grep -q '^/keep/c ' "$T/latest.dump" ||
	fail "without a tag, not the image tagged latest"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:nope" "$T/bad.img"
assert_contains "$T/err" "lay/index\.json': no manifest is tagged 'nope'"
expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay:multi" "$T/amd64.img"
cmp -s "$T/latest.img" "$T/amd64.img" || fail "the index's amd64 image is not the first layer's"
for p in linux/arm64 linux/arm64/v8; do
	expect_exit 0 "$CFSCTL" build --from-oci --platform=$p "oci-archive:$T/lay.tar:multi" \
		"$T/arm64.img"
	dump "$T/arm64.img" | grep -q '^/arm 5 ' || fail "--platform=$p did not choose arm64"
done
expect_exit 1 "$CFSCTL" build --from-oci --platform=linux/s390x "oci:$T/lay:multi" "$T/bad.img"
assert_contains "$T/err" "blobs/sha256/[0-9a-f]{64}': no manifest for platform linux/s390x"
expect_exit 1 "$CFSCTL" build --from-oci --platform=linux/arm64/v7 "oci:$T/lay:multi" "$T/bad.img"
expect_exit 2 "$CFSCTL" build --from-oci --platform=linux "oci:$T/lay:multi" "$T/bad.img"
expect_exit 2 "$CFSCTL" build --platform=linux/amd64 "$h" "$T/bad.img"
expect_exit 2 "$CFSCTL" build --from-oci "$T/lay" "$T/bad.img"
expect_exit 2 "$CFSCTL" build --from-oci --from-tar "oci:$T/lay" "$T/bad.img"

# Media types: one not supported, one the data does not match.
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:bzip2" "$T/bad.img"
assert_contains "$T/err" "layer 1 \(sha256:[0-9a-f]{64}\) has media type 'application/vnd\.oci\.image\.layer\.v1\.tar\+bzip2', which is not supported"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:mislabelled" "$T/bad.img"
assert_contains "$T/err" "compressed as 'gzip', not as its media type 'application/vnd\.oci\.image\.layer\.v1\.tar' says"

# Blobs that are not what their descriptors say: the last layer (after the
# others were read into the store), a config, a manifest; a byte more or less.
blob_of() { # TAG WHICH: config or layer N (from 0) of the image TAG
	python3 - "$T/lay" "$1" "$2" <<'EOF'
import json, sys
lay, tag, which = sys.argv[1:]
i = json.load(open(f"{lay}/index.json"))
m = [d for d in i["manifests"] if d["annotations"]["org.opencontainers.image.ref.name"] == tag][0]
if which == "manifest":
    print(m["digest"][7:]); sys.exit()
m = json.load(open(f"{lay}/blobs/sha256/{m['digest'][7:]}"))
print((m["config"] if which == "config" else m["layers"][int(which)])["digest"][7:])
EOF
}
flip() { # FILE OFFSET: invert a bit
	python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 1]))' "$1" "$2" || fail "flipping a bit of $1"
}
refused() { # BLOB-HEX PATTERN: the build of v1 fails naming the blob
	rm -rf "$T/st2"
	expect_exit 1 "$CFSCTL" build --from-oci --digest-store="$T/st2" "oci:$T/bad:v1" "$T/bad.img"
	assert_contains "$T/err" "bad/blobs/sha256/$1': $2"
	[ ! -e "$T/bad.img" ] || fail "a refused image left $T/bad.img"
	[ -z "$(find "$T/st2" -type f 2>/dev/null)" ] || fail "a refused image left files in the store"
}
# docker-archive: as skopeo writes it (plain layers, RepoTags with
# docker.io/), and as docker save did before docker 25 (ID/layer.tar, here
# with the layout's gzip, zstd and plain layers, two images, short RepoTags),
# with the last layer's content changed after its diff_id was taken.
command -v skopeo >/dev/null || fail "skopeo is not installed (make deps)"
skopeo copy -q "oci:$T/lay:gz" "docker-archive:$T/skopeo.tar:cfs/test:v1" >"$T/skopeo.log" 2>&1 ||
	{ cat "$T/skopeo.log"; fail "skopeo copy to a docker-archive"; }
mkdocker() { # OUT [flip]: the images v1 (as debian:12) and latest (as other:1)
	python3 - "$T/lay" "$@" <<'EOF' || fail "writing a docker-archive"
import io, json, sys, tarfile
lay, out, flip = sys.argv[1], sys.argv[2], len(sys.argv) > 3
idx = json.load(open(f"{lay}/index.json"))
def blob(d):
    return open(f"{lay}/blobs/sha256/{d[7:]}", "rb").read()
entries = []
with tarfile.open(out, "w") as t:
    def add(name, data):
        i = tarfile.TarInfo(name); i.size = len(data); t.addfile(i, io.BytesIO(data))
    for tag, rt in (("v1", "debian:12"), ("latest", "other:1")):
        d = [d for d in idx["manifests"] if d["annotations"]["org.opencontainers.image.ref.name"] == tag][0]
        m = json.loads(blob(d["digest"]))
        add(m["config"]["digest"][7:] + ".json", blob(m["config"]["digest"]))
        layers = []
        for n, l in enumerate(m["layers"]):
            data = bytearray(blob(l["digest"]))
            if flip and tag == "v1" and n == len(m["layers"]) - 1:
                data[513] ^= 1  # in the content of the plain layer's first file
            add(f"./{l['digest'][7:]}/layer.tar", bytes(data))
            layers.append(f"{l['digest'][7:]}/layer.tar")
        entries.append({"Config": m["config"]["digest"][7:] + ".json", "RepoTags": [rt], "Layers": layers})
    add("manifest.json", json.dumps(entries).encode())
EOF
}
mkdocker "$T/docker.tar"
for src in skopeo.tar skopeo.tar:cfs/test:v1 skopeo.tar:docker.io/cfs/test:v1 docker.tar:debian:12 \
	docker.tar:docker.io/library/debian:12; do
	expect_exit 0 "$CFSCTL" build --from-oci --digest-store="$T/dstore" "docker-archive:$T/$src" \
		"$T/docker.img"
	cmp -s "$T/v1.img" "$T/docker.img" || fail "docker-archive:$src gives another image"
done
check_store "$T/dstore"
assert_eq 9 "$n_objects" "objects in the store of the docker-archives"
expect_exit 0 "$CFSCTL" build --from-oci "docker-archive:$T/docker.tar:other:1" "$T/docker.img"
cmp -s "$T/latest.img" "$T/docker.img" || fail "the docker-archive's other image differs"
expect_exit 1 "$CFSCTL" build --from-oci "docker-archive:$T/docker.tar" "$T/bad.img"
assert_contains "$T/err" "docker\.tar:manifest\.json': 2 images: name one by a tag"
expect_exit 1 "$CFSCTL" build --from-oci "docker-archive:$T/docker.tar:debian:11" "$T/bad.img"
assert_contains "$T/err" "docker\.tar:manifest\.json': no image is tagged 'debian:11'"
expect_exit 1 "$CFSCTL" build --from-oci "docker-archive:$T/lay.tar" "$T/bad.img"
assert_contains "$T/err" "lay\.tar:manifest\.json': not in the archive"
mkdocker "$T/docker-bad.tar" flip
expect_exit 1 "$CFSCTL" build --from-oci --digest-store="$T/st4" "docker-archive:$T/docker-bad.tar:debian:12" \
	"$T/bad.img"
assert_contains "$T/err" "docker-bad\.tar:$(blob_of v1 2)/layer\.tar': uncompressed, its content has the digest sha256:[0-9a-f]{64}, not the config's diff_id sha256:$(sha256sum <"$L/l3.tar" | cut -c1-64)$"
[ ! -e "$T/bad.img" ] || fail "a docker-archive layer not its diff_id left $T/bad.img"
[ -z "$(find "$T/st4" -type f 2>/dev/null)" ] || fail "a docker-archive layer not its diff_id left files in the store"
expect_exit 2 "$CFSCTL" build --from-oci "docker:$T/docker.tar" "$T/bad.img"

# A layer whose uncompressed stream is not the config's diff_id for it
# (its blob is what the manifest says): refused naming the layer, after
# the first layer was read into the store, leaving no image and no object.
expect_exit 1 "$CFSCTL" build --from-oci --digest-store="$T/st3" "oci:$T/lay:baddiff" "$T/bad.img"
l2=$(blob_of baddiff 1) || fail "finding layer 1 of baddiff"
assert_contains "$T/err" "lay/blobs/sha256/$l2': uncompressed, its content has the digest sha256:$(sha256sum <"$L/l2.tar" | cut -c1-64), not the config's diff_id sha256:0{64}$"
[ ! -e "$T/bad.img" ] || fail "a layer not its diff_id left $T/bad.img"
[ -z "$(find "$T/st3" -type f 2>/dev/null)" ] || fail "a layer not its diff_id left files in the store"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:notdiff" "$T/bad.img"
assert_contains "$T/err" "lay/blobs/sha256/[0-9a-f]{64}': diff_id 2 is not sha256:<64 lowercase hex digits>"
[ ! -e "$T/bad.img" ] || fail "a malformed diff_id left $T/bad.img"

for which in 2 1 config manifest; do
	rm -rf "$T/bad" && cp -a "$T/lay" "$T/bad"
	b=$(blob_of v1 $which) || fail "finding blob $which"
	size=$(stat -c %s "$T/bad/blobs/sha256/$b")
	flip "$T/bad/blobs/sha256/$b" $((size / 2))
	refused "$b" "its content has the digest sha256:[0-9a-f]{64}, not sha256:$b"
	cp "$T/lay/blobs/sha256/$b" "$T/bad/blobs/sha256/$b"
	echo >>"$T/bad/blobs/sha256/$b"
	refused "$b" "$((size + 1)) bytes, but its descriptor says $size"
	truncate -s $((size - 1)) "$T/bad/blobs/sha256/$b"
	refused "$b" "$((size - 1)) bytes, but its descriptor says $size"
	rm "$T/bad/blobs/sha256/$b"
	refused "$b" "No such file"
done
# In an archive, a flipped bit in the last layer.
rm -rf "$T/bad" && cp -a "$T/lay" "$T/bad"
b=$(blob_of v1 2) && flip "$T/bad/blobs/sha256/$b" 700
tar -C "$T/bad" -cf "$T/bad.tar" . || fail "tar of the tampered layout"
expect_exit 1 "$CFSCTL" build --from-oci "oci-archive:$T/bad.tar:v1" "$T/bad.img"
assert_contains "$T/err" "bad\.tar:blobs/sha256/$b': its content has the digest"
[ ! -e "$T/bad.img" ] || fail "a refused archive left an image"
# A layout without oci-layout, or with a broken index.json.
rm "$T/bad/oci-layout"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/bad:v1" "$T/bad.img"
assert_contains "$T/err" "bad/oci-layout': No such file"
cp "$T/lay/oci-layout" "$T/bad/" && printf '{"schemaVersion": 2, "manifests": [],}' >"$T/bad/index.json"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/bad:v1" "$T/bad.img"
assert_contains "$T/err" "bad/index\.json': invalid JSON at byte 37"

echo ok
