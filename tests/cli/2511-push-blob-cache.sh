#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The push blob cache of cfsctl push --compression=C oci:LAYOUT: a layer
# recompressed is recorded under $XDG_CACHE_HOME/cfs/push-blobs; a later
# push of a layer of the same tar stream, to a registry that has the blob
# the cache names (of that size), takes the cached descriptor and does
# not recompress it. Here A (one layer) and then B (A's layer and a new
# one): B uploads its new layer and config only, its first layer not
# recompressed (--json's from_blob_cache, the stderr line), its descriptor
# A's, annotations and all, and pull --require-seal makes build's image.
# An entry naming a blob the registry lacks, or one it holds of another
# size, and an entry of garbage, each cost a recompression, and the entry
# is written right again; nothing is left half-written in the cache.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

tar --format=pax --xattrs --xattrs-include='*' --numeric-owner --sort=name -C "$T/tree" -cf "$T/A.tar" . ||
	fail "tar of the tree"
mkdir -p "$T/new/etc"
head -c 70000 /dev/urandom >"$T/new/etc/added"
find "$T/new" -exec touch -h -d '2024-05-06 07:08:09' {} +
tar --format=pax --numeric-owner --sort=name -C "$T/new" -cf "$T/new.tar" . || fail "tar of the new layer"
cat >"$T/spec.json" <<EOF2
[{"tag": "A", "layers": [["$T/A.tar", "none"]]},
 {"tag": "B", "layers": [["$T/A.tar", "none"], ["$T/new.tar", "gzip"]]}]
EOF2
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the layout"
sha() { echo "sha256:$(sha256sum | cut -d' ' -f1)"; }
a_id=$(sha <"$T/A.tar")
cache=$XDG_CACHE_HOME/cfs/push-blobs
entry=$cache/zstd-chunked-${a_id#sha256:}
# field JSON EXPR: a value of the --json output
field() {
	python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); v=eval(sys.argv[2]); print(*(v if isinstance(v, tuple) else (v,)))' \
		"$T/out" "$1"
}
# layer_desc REPO TAG N: layer N's descriptor in the registry's manifest, keys sorted
layer_desc() {
	manifest "$1" "$2" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["layers"][int(sys.argv[1])], sort_keys=True))' "$3"
}
push_b() {
	expect_exit 0 "$CFSCTL" push --plain-http --json --compression=zstd:chunked "oci:$T/lay:B" "$REG/t/bc:B"
}

expect_exit 0 "$CFSCTL" push --plain-http --json --compression=zstd:chunked "oci:$T/lay:A" "$REG/t/bc:A"
assert_eq False "$(field 'j["layers"][0]["from_blob_cache"]')" "A: its layer from the cache"
a_layer=$(field 'j["layers"][0]["digest"]')
[ -f "$entry" ] || fail "A: no cache entry $entry: $(ls -R "$XDG_CACHE_HOME")"
assert_eq "$a_layer" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$entry")" \
	"A: the cache entry's digest"

# B after A: its first layer is not recompressed, and not uploaded
log0=$(stat -c %s "$T/reg/log")
push_b
assert_eq "True False" "$(field 'j["layers"][0]["from_blob_cache"], j["layers"][0]["uploaded"]')" \
	"B: its first layer, from the cache and not uploaded"
assert_eq "False True" "$(field 'j["layers"][1]["from_blob_cache"], j["layers"][1]["uploaded"]')" \
	"B: its new layer, recompressed and uploaded"
grep -q "push: layer 1 $a_layer: [0-9]* bytes, the registry has it already (not recompressed: the blob cache knew it)" "$T/err" ||
	fail "B: no line saying the first layer was not recompressed: $(cat "$T/err")"
tail -c +$((log0 + 1)) "$T/reg/log" | grep '"PUT /v2/[^ ]*/blobs/' >"$T/puts" || true
assert_eq 2 "$(wc -l <"$T/puts")" "blobs B's push uploaded (its new layer and config)"
assert_eq "$(layer_desc t/bc A 0)" "$(layer_desc t/bc B 0)" "B's first layer's descriptor against A's"
b_digest=$(sed -n 's/^Digest: //p' "$T/err")
expect_exit 0 "$CFSCTL" build --format=erofs --from-oci "oci:$T/lay:B" "$T/want.erofs"
expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs --require-seal "$REG/t/bc:B" "$T/pulled.erofs"
cmp -s "$T/want.erofs" "$T/pulled.erofs" || fail "B: the pull gives another image than build --from-oci"

# B again: both layers from the cache, the same manifest, nothing uploaded
push_b
assert_eq "True True" "$(field 'j["layers"][0]["from_blob_cache"], j["layers"][1]["from_blob_cache"]')" \
	"B again: its layers from the cache"
assert_eq "0 $b_digest" "$(field 'j["bytes_uploaded"], j["digest"]')" "B again: the bytes uploaded and the digest"

# entries that are wrong: each costs a recompression, and is written right again
good=$(cat "$entry")
nosuch=sha256:$(printf 'nosuch' | sha256sum | cut -d' ' -f1)
new_layer=$(field 'j["layers"][1]["digest"]')
for bad in "digest:$nosuch" "digest:$new_layer" garbage; do
	case $bad in
	digest:*) python3 - "$entry" "${bad#digest:}" <<'EOF2' || fail "corrupting the entry" ;;
import json, sys
e = json.load(open(sys.argv[1]))
e["digest"] = sys.argv[2]
json.dump(e, open(sys.argv[1], "w"))
EOF2
	garbage) head -c 300 /dev/urandom >"$entry" ;;
	esac
	push_b
	assert_eq "False False $a_layer" \
		"$(field 'j["layers"][0]["from_blob_cache"], j["layers"][0]["uploaded"], j["layers"][0]["digest"]')" \
		"an entry of $bad: B's first layer recompressed, the registry has it"
	assert_eq "$b_digest" "$(field 'j["digest"]')" "an entry of $bad: B's manifest"
	assert_eq "$good" "$(cat "$entry")" "an entry of $bad: written again"
done
# an entry whose blob this repository lacks: recompressed and uploaded
expect_exit 0 "$CFSCTL" push --plain-http --json --compression=zstd:chunked "oci:$T/lay:A" "$REG/t/bc-other:A"
assert_eq "False True $a_layer" \
	"$(field 'j["layers"][0]["from_blob_cache"], j["layers"][0]["uploaded"], j["layers"][0]["digest"]')" \
	"another repository: A's layer recompressed and uploaded"
[ -z "$(find "$cache" -name '*.tmp.*')" ] || fail "temporary files left in the cache: $(ls "$cache")"
# a cache that cannot be made costs nothing but time
expect_exit 0 env XDG_CACHE_HOME=/proc/nonexistent "$CFSCTL" push --plain-http --compression=zstd:chunked \
	"oci:$T/lay:B" "$REG/t/bc:B"
assert_eq "$b_digest" "$(sed -n 's/^Digest: //p' "$T/err")" "no cache: B's manifest"
echo ok
