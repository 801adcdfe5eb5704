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
# The seal is cached there too, keyed by the layers' diff_ids: B's second
# push takes it from the cache (--json's seal_from_cache, the stderr
# line), and it is the digest of build --from-oci's image; an entry that
# is not 64 lowercase hex digits is no entry, and is written right again;
# a layout that claims another seal than the cache's is refused.
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
assert_eq "False False" "$(field 'j["layers"][0]["from_blob_cache"], j["seal_from_cache"]')" \
	"A: its layer and its seal from the cache"
a_layer=$(field 'j["layers"][0]["digest"]')
[ -f "$entry" ] || fail "A: no cache entry $entry: $(ls -R "$XDG_CACHE_HOME")"
assert_eq "$a_layer" "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["digest"])' "$entry")" \
	"A: the cache entry's digest"

# B after A: its first layer is not recompressed, and not uploaded
log0=$(stat -c %s "$T/reg/log")
push_b
assert_eq "True False" "$(field 'j["layers"][0]["from_blob_cache"], j["layers"][0]["uploaded"]')" \
	"B: its first layer, from the cache and not uploaded"
assert_eq False "$(field 'j["seal_from_cache"]')" "B: its seal (A's layers are not B's) from the cache"
! grep -q "seal .* from the push blob cache" "$T/err" || fail "B: a seal from the cache: $(cat "$T/err")"
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

# B again: both layers and the seal from the cache, the same manifest, nothing uploaded
want_seal=$(fsverity digest "$T/want.erofs" | cut -d' ' -f1)
want_seal=${want_seal#sha256:}
push_b
assert_eq "True True" "$(field 'j["layers"][0]["from_blob_cache"], j["layers"][1]["from_blob_cache"]')" \
	"B again: its layers from the cache"
assert_eq "0 $b_digest" "$(field 'j["bytes_uploaded"], j["digest"]')" "B again: the bytes uploaded and the digest"
assert_eq "True $want_seal" "$(field 'j["seal_from_cache"], j["seal"]')" \
	"B again: the seal, from the cache, against build --from-oci's image"
grep -q "^push: the seal $want_seal from the push blob cache (the layers not merged again)$" "$T/err" ||
	fail "B again: no line saying the seal came from the cache: $(cat "$T/err")"
# without --compression too (B's layers as they are): the seal from the cache
expect_exit 0 "$CFSCTL" push --plain-http --json "oci:$T/lay:B" "$REG/t/bc-plain:B"
assert_eq "True $want_seal" "$(field 'j["seal_from_cache"], j["seal"]')" \
	"B as it is: the seal from the cache"

# the seal's entries: those of A and B, each the seal and a newline
seals=$(find "$cache" -name 'seal-*' | sort)
assert_eq 2 "$(echo "$seals" | wc -l)" "the seal entries: $seals"
seal_entry=$(grep -l "^$want_seal\$" $seals) || fail "no entry holds B's seal: $(head $seals)"
# entries that are not 64 lowercase hex digits: no entry, the seal computed and written again
for bad in upper short garbage other-format; do
	case $bad in
	upper) echo "$want_seal" | tr a-f A-F >"$seal_entry" ;;
	short) echo "${want_seal:1}" >"$seal_entry" ;;
	garbage) head -c 65 /dev/urandom >"$seal_entry" ;;
	other-format) printf '%s' "$want_seal" >"$seal_entry" ;;
	esac
	push_b
	assert_eq "False $want_seal $b_digest" "$(field 'j["seal_from_cache"], j["seal"], j["digest"]')" \
		"an entry of $bad: B's seal computed again"
	assert_eq "$want_seal" "$(cat "$seal_entry")" "an entry of $bad: written again"
done
# a layout that claims a seal the cache's entry is not: computed, and refused
other=$(echo "$want_seal" | tr 0-9a-f 1-9a-f0)
third=$(echo "$want_seal" | tr 0-9a-f 2-9a-f01)
python3 - "$T/lay" B "$other" <<'EOF2' || fail "sealing B's manifest in the layout"
import hashlib, json, sys
lay, tag, seal = sys.argv[1:4]
idx = json.load(open(f"{lay}/index.json"))
d = next(m for m in idx["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == tag)
m = json.load(open(f"{lay}/blobs/sha256/{d['digest'][7:]}"))
m.setdefault("annotations", {})["composefs.merged.erofs.v1.fsverity-sha256-12"] = seal
data = json.dumps(m).encode()
h = hashlib.sha256(data).hexdigest()
open(f"{lay}/blobs/sha256/{h}", "wb").write(data)
idx["manifests"].append({"mediaType": d["mediaType"], "digest": "sha256:" + h, "size": len(data),
                         "annotations": {"org.opencontainers.image.ref.name": "B-other"}})
json.dump(idx, open(f"{lay}/index.json", "w"))
EOF2
echo "$third" >"$seal_entry"
expect_exit 1 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:B-other" "$REG/t/bc:B-other"
grep -q "has the seal $other, but the composefs 1.0 image of its tree has the digest $want_seal: refused" "$T/err" ||
	fail "B-other: not refused for its seal: $(cat "$T/err")"
assert_eq "$want_seal" "$(cat "$seal_entry")" "B-other: the entry, written again"

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
