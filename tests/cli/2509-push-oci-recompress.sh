#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl push --compression=C oci:LAYOUT:TAG: each layer of the layout
# recompressed, its tar stream kept byte for byte. The layout holds A (one
# uncompressed layer: GNU tar's pax stream of the tree lib/push.sh makes)
# and B (A's layer, and a gzip layer GNU tar wrote in its own format, with
# a name longer than 100 bytes, a large file cut in chunks and a run of
# zeros). For zstd:chunked:
# - the layer decompresses to the original tar (its sha256 the diff_id),
#   the config is the layout's blob, the manifest names the chunked
#   annotations, and the same layout pushed again gives the same digest;
# - its chunks are the compressor's (tests/lib/push-chunks.py);
# - skopeo 1.9 inspects and copies it, and the copy's layer (zstd:chunked)
#   recompressed is the same blob;
# - after a pull of the tree pushed as its own image, a pull of A is
#   partial, and pulls give byte for byte build --from-oci's image;
# - B after A uploads B's new layer and config, never A's layer again.
# gzip and zstd: the layer decompresses to the tar. Without --compression
# the layout's blobs go as they are (2502). A config whose diff_id is not
# the layer's tar stream, a docker v2 manifest, a layer of garbage, a tar
# stream cut short and a GNU sparse entry are refused before any upload.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

tar --format=pax --xattrs --xattrs-include='*' --numeric-owner --sort=name -C "$T/tree" -cf "$T/A.tar" . ||
	fail "tar of the tree"
long=$(printf 'd%.0s' $(seq 1 60))/$(printf 'f%.0s' $(seq 1 70))
mkdir -p "$T/new/${long%/*}"
python3 - "$T/new" "$long" <<'EOF2' || fail "making the new layer's files"
import random, sys
d, long = sys.argv[1], sys.argv[2]
r = random.Random(2509)
open(f"{d}/big", "wb").write(r.randbytes(400000) + bytes(3000) + r.randbytes(100000))
open(f"{d}/{long}", "wb").write(b"a long name\n")
EOF2
find "$T/new" -exec touch -h -d '2024-05-06 07:08:09' {} +
tar --format=gnu --numeric-owner --sort=name -C "$T/new" -cf "$T/new.tar" . || fail "tar of the new files"
head -c 2048 /dev/urandom >"$T/garbage.tar"
head -c 1500 "$T/A.tar" >"$T/cut.tar"
mkdir "$T/sparse"
truncate -s 1M "$T/sparse/hole"
printf x >>"$T/sparse/hole"
tar -S --format=gnu -C "$T/sparse" -cf "$T/sparse.tar" hole || fail "a GNU sparse tar"
cat >"$T/spec.json" <<EOF2
[{"tag": "A", "layers": [["$T/A.tar", "none"]]},
 {"tag": "B", "layers": [["$T/A.tar", "none"], ["$T/new.tar", "gzip"]]},
 {"tag": "lie", "layers": [["$T/new.tar", "none"]], "diff_ids": {"0": "sha256:$(printf '0%.0s' $(seq 1 64))"}},
 {"tag": "docker", "layers": [["$T/new.tar", "gzip"]], "docker": true},
 {"tag": "garbage", "layers": [["$T/garbage.tar", "none"]]},
 {"tag": "cut", "layers": [["$T/cut.tar", "zstd"]]},
 {"tag": "sparse", "layers": [["$T/sparse.tar", "none"]]}]
EOF2
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the layout"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/policy.json"

# layer_of REPO TAG N: the digest of layer N (from 0) of the manifest
layer_of() { manifest "$1" "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][int(sys.argv[1])]["digest"])' "$3"; }
layout_config() {
	python3 - "$T/lay" "$1" <<'EOF2'
import json, sys
lay, tag = sys.argv[1], sys.argv[2]
idx = json.load(open(f"{lay}/index.json"))
d = next(m for m in idx["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == tag)
print(json.load(open(f"{lay}/blobs/sha256/{d['digest'][7:]}"))["config"]["digest"])
EOF2
}
sha() { echo "sha256:$(sha256sum | cut -d' ' -f1)"; }
a_id=$(sha <"$T/A.tar")
new_id=$(sha <"$T/new.tar")

# zstd:chunked
expect_exit 0 "$CFSCTL" push --plain-http --compression=zstd:chunked --json "oci:$T/lay:A" "$REG/t/roc:A"
digest=$(sed -n 's/^Digest: //p' "$T/err")
manifest t/roc A >"$T/A.manifest" || fail "A: no manifest in the registry"
python3 - "$T/A.manifest" "$(layout_config A)" <<'EOF2' || fail "A: the manifest: $(cat "$T/A.manifest")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["config"]["digest"] == sys.argv[2], "another config than the layout's"
l = m["layers"][0]
assert l["mediaType"] == "application/vnd.oci.image.layer.v1.tar+zstd", l
for k in ("manifest-checksum", "manifest-position", "tarsplit-position"):
    assert "io.github.containers.zstd-chunked." + k in l.get("annotations", {}), (k, l)
EOF2
a_layer=$(layer_of t/roc A 0)
blob t/roc "$a_layer" >"$T/A.blob" || fail "A: fetching the layer"
assert_eq "$a_id" "$(zstd -dcq <"$T/A.blob" | sha)" "A: the layer's tar stream (the diff_id)"
python3 "$TESTS_DIR/lib/push-chunks.py" "$T/A.blob" "$T/tree" >"$T/A.chunks" 2>&1 ||
	{ cat "$T/A.chunks"; fail "A: the layer's chunks are not the compressor's"; }
expect_exit 0 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:A" "$REG/t/roc-again:A"
assert_eq "$digest" "$(sed -n 's/^Digest: //p' "$T/err")" "A pushed again: the manifest digest"

skopeo inspect --tls-verify=false "docker://$REG/t/roc:A" >"$T/inspect" 2>&1 ||
	{ cat "$T/inspect"; fail "skopeo inspect of A"; }
grep -q "\"Digest\": \"$digest\"" "$T/inspect" || fail "skopeo inspect names another digest than $digest"
skopeo --policy "$T/policy.json" copy -q --src-tls-verify=false "docker://$REG/t/roc:A" \
	"oci:$T/copy:A" >"$T/copy.out" 2>&1 || { cat "$T/copy.out"; fail "skopeo copy of A"; }
[ -f "$T/copy/blobs/sha256/${a_layer#sha256:}" ] || fail "skopeo copy has not A's layer"
# that copy's zstd:chunked layer recompressed: the same blob again
expect_exit 0 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/copy:A" "$REG/t/roc-copy:A"
assert_eq "$a_layer" "$(layer_of t/roc-copy A 0)" "A's zstd:chunked layer recompressed into zstd:chunked"

# B after A: B's new layer and its config go, A's layer does not
log0=$(stat -c %s "$T/reg/log")
expect_exit 0 "$CFSCTL" push --plain-http --compression=zstd:chunked --json "oci:$T/lay:B" "$REG/t/roc:B"
assert_eq "$a_layer" "$(layer_of t/roc B 0)" "B's first layer"
b_layer=$(layer_of t/roc B 1)
blob t/roc "$b_layer" >"$T/B.blob" || fail "B: fetching its new layer"
assert_eq "$new_id" "$(zstd -dcq <"$T/B.blob" | sha)" "B: the new layer's tar stream (from gzip)"
python3 "$TESTS_DIR/lib/push-chunks.py" "$T/B.blob" "$T/new" >"$T/B.chunks" 2>&1 ||
	{ cat "$T/B.chunks"; fail "B: the new layer's chunks are not the compressor's"; }
read -r _ files _ chunks _ zeros <"$T/B.chunks"
[ "$chunks" -ge 3 ] && [ "$zeros" = 1 ] || fail "B: big is not cut in chunks with one of zeros: $(cat "$T/B.chunks")"
tail -c +$((log0 + 1)) "$T/reg/log" | grep '"PUT /v2/[^ ]*/blobs/' >"$T/puts" || true
assert_eq 2 "$(wc -l <"$T/puts")" "blobs B's push uploaded (its new layer and config)"
grep -q "digest=$b_layer" "$T/puts" || fail "B's new layer was not uploaded: $(cat "$T/puts")"
grep -q "digest=$a_layer" "$T/puts" && fail "A's layer was uploaded again with B"
python3 - "$T/out" "$(stat -c %s "$T/B.blob")" <<'EOF2' || fail "B: --json: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
l = j["layers"]
assert not l[0]["uploaded"] and l[1]["uploaded"], l
assert j["bytes_uploaded"] == int(sys.argv[2]) + j["config"]["size"], j
EOF2

# pulls: partial after the tree's own image, and build --from-oci's image
"$CFSCTL" build --from-oci "oci:$T/lay:A" "$T/want.A" >"$T/build.out" 2>&1 ||
	{ cat "$T/build.out"; fail "build --from-oci of A"; }
"$CFSCTL" build --from-oci "oci:$T/lay:B" "$T/want.B" >"$T/build.out" 2>&1 ||
	{ cat "$T/build.out"; fail "build --from-oci of B"; }
expect_exit 0 "$CFSCTL" push --plain-http "$T/tree" "$REG/t/roc-tree:v1"
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/roc-tree:v1" tree
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/roc:A" a
grep -q '"layers_partial":1' "$T/out" || fail "A: not pulled in part: $(cat "$T/out")"
python3 - "$T/out" "$(stat -c %s "$T/A.blob")" <<'EOF2' || fail "A after the tree: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["bytes_fetched"] < int(sys.argv[2]) // 2, (j["bytes_fetched"], sys.argv[2])
print(f"A after the tree: fetched {j['bytes_fetched']} of {sys.argv[2]} bytes")
EOF2
cmp -s "$T/want.A" "$T/repo/images/$(readlink "$T/repo/images/refs/a" | sed 's|.*/||')" ||
	fail "A: the partial pull gives another image than build --from-oci"
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store "$T/store" "$REG/t/roc:B" "$T/pulled.B"
cmp -s "$T/want.B" "$T/pulled.B" || fail "B: the pull gives another image than build --from-oci"
expect_exit 0 "$CFSCTL" pull --plain-http --full-pull "$REG/t/roc:B" "$T/pulled.B"
cmp -s "$T/want.B" "$T/pulled.B" || fail "B: a full pull gives another image than build --from-oci"

# zstd and gzip
for comp in zstd gzip; do
	expect_exit 0 "$CFSCTL" push --plain-http --compression=$comp "oci:$T/lay:B" "$REG/t/roc-$comp:B"
	for i in 0 1; do
		want=$a_id
		[ $i = 1 ] && want=$new_id
		assert_eq "$want" "$(blob t/roc-$comp "$(layer_of t/roc-$comp B $i)" | $comp -dc | sha)" \
			"$comp: layer $i's tar stream"
	done
done

# refused before any upload
log0=$(stat -c %s "$T/reg/log")
expect_exit 1 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:lie" "$REG/t/roc:lie"
grep -q "layer 1: its tar stream has the digest $new_id, where the config's diff_id says sha256:0000" "$T/err" ||
	fail "a lying diff_id: $(cat "$T/err")"
expect_exit 1 "$CFSCTL" push --plain-http --compression=gzip "oci:$T/lay:docker" "$REG/t/roc:docker"
grep -q "only an OCI image manifest's layers are recompressed" "$T/err" || fail "a docker v2 manifest: $(cat "$T/err")"
expect_exit 1 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:garbage" "$REG/t/roc:garbage"
grep -q "not a tar header at byte 0 of its tar stream" "$T/err" || fail "a layer of garbage: $(cat "$T/err")"
expect_exit 1 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:cut" "$REG/t/roc:cut"
grep -q "its tar stream ends inside" "$T/err" || fail "a layer cut short: $(cat "$T/err")"
expect_exit 1 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:sparse" "$REG/t/roc:sparse"
grep -q "'hole' is of the tar type 'S', which cfs cannot recompress" "$T/err" ||
	fail "a GNU sparse entry: $(cat "$T/err")"
assert_eq 0 "$(tail -c +$((log0 + 1)) "$T/reg/log" | grep -c '"\(POST\|PUT\|HEAD\) /v2/' || true)" \
	"requests of the refused pushes"
echo ok
