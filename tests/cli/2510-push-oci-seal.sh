#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The seal of an image pushed from an OCI layout: its layers merged as pull
# merges them (here A's tree, then a layer with a whiteout, an opaque
# directory and new files), the composefs 1.0 image of that tree measured.
# - pushed as it is and recompressed, the manifest carries the seal that
#   build --format=erofs --from-oci gives, and pull --format=erofs of it
#   (with --require-seal) makes that image byte for byte; a v1 pull --repo
#   checks it too and stores the sealed form;
# - a layout whose manifest has that seal already goes as it is (its
#   manifest digest kept); one whose manifest has another seal, or one that
#   is not 64 hex digits, is refused before any request;
# - --no-seal pushes the manifest as it is, which --require-seal refuses;
#   with a directory it is a usage error.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

tar --format=pax --xattrs --xattrs-include='*' --numeric-owner --sort=name -C "$T/tree" -cf "$T/A.tar" . ||
	fail "tar of the tree"
mkdir -p "$T/wh/etc" "$T/wh/usr/bin"
: >"$T/wh/.wh.zeros"
: >"$T/wh/etc/.wh..wh..opq"
echo "new" >"$T/wh/etc/new"
head -c 50000 /dev/urandom >"$T/wh/usr/bin/added"
find "$T/wh" -exec touch -h -d '2024-05-06 07:08:09' {} +
tar --format=pax --numeric-owner --sort=name -C "$T/wh" -cf "$T/wh.tar" . || fail "tar of the whiteouts"
cat >"$T/spec.json" <<EOF2
[{"tag": "two", "layers": [["$T/A.tar", "none"], ["$T/wh.tar", "gzip"]]}]
EOF2
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the layout"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/policy.json"

# retag MANIFEST_DIGEST SEAL TAG: the layout's image MANIFEST_DIGEST with the
# seal annotation SEAL, tagged TAG in the layout; prints the new manifest's digest
retag() {
	python3 - "$T/lay" "$@" <<'EOF2'
import hashlib, json, sys
lay, digest, seal, tag = sys.argv[1:5]
m = json.load(open(f"{lay}/blobs/sha256/{digest[7:]}"))
m.setdefault("annotations", {})["composefs.merged.erofs.v1.fsverity-sha256-12"] = seal
data = json.dumps(m, indent=1).encode()
d = hashlib.sha256(data).hexdigest()
open(f"{lay}/blobs/sha256/{d}", "wb").write(data)
idx = json.load(open(f"{lay}/index.json"))
idx["manifests"].append({"mediaType": m["mediaType"], "digest": "sha256:" + d, "size": len(data),
                         "annotations": {"org.opencontainers.image.ref.name": tag}})
json.dump(idx, open(f"{lay}/index.json", "w"))
print("sha256:" + d)
EOF2
}
# seal_of REPO TAG: the seal annotation of the manifest in the registry, or "none"
seal_of() {
	manifest "$1" "$2" | python3 -c 'import json,sys; print(json.load(sys.stdin).get("annotations", {}).get("composefs.merged.erofs.v1.fsverity-sha256-12", "none"))'
}
layout_digest=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"])' "$T/lay/index.json")

expect_exit 0 "$CFSCTL" build --format=erofs --from-oci "oci:$T/lay:two" "$T/want.erofs"
want=$(fsverity digest "$T/want.erofs" | cut -d' ' -f1)
want=${want#sha256:}
# the merge did its work: what the whiteout and the opaque directory removed is gone
expect_exit 0 "$CFSCTL" inspect dump "$T/want.erofs"
cut -d' ' -f1 "$T/out" | grep -x '/etc/.*\|/zeros\|/usr/bin/added\|/usr/hard' >"$T/paths"
printf '%s\n' /etc/new /usr/bin/added /usr/hard >"$T/want-paths"
cmp -s "$T/want-paths" "$T/paths" || fail "the merged tree: $(cat "$T/paths")"

# as it is: the manifest gets the seal, pull checks it and makes build's image
expect_exit 0 "$CFSCTL" push --plain-http --json "oci:$T/lay:two" "$REG/t/oseal:two"
assert_eq "$want" "$(sed -n 's/^Seal: //p' "$T/err")" "the Seal: line against build --format=erofs --from-oci"
grep -q "\"seal\":\"$want\"" "$T/out" || fail "--json has not the seal: $(cat "$T/out")"
assert_eq "$want" "$(seal_of t/oseal two)" "the pushed manifest's seal annotation"
digest=$(sed -n 's/^Digest: //p' "$T/err")
[ "$digest" != "$layout_digest" ] || fail "the sealed manifest has the unsealed one's digest"
python3 - "$T/lay" "$layout_digest" <<'EOF2' >"$T/layout-layers"
import json, sys
m = json.load(open(f"{sys.argv[1]}/blobs/sha256/{sys.argv[2][7:]}"))
print(json.dumps(m["layers"], sort_keys=True), m["config"]["digest"])
EOF2
manifest t/oseal two | python3 -c 'import json,sys; m=json.load(sys.stdin); print(json.dumps(m["layers"], sort_keys=True), m["config"]["digest"])' \
	>"$T/pushed-layers"
cmp -s "$T/layout-layers" "$T/pushed-layers" || fail "the sealed manifest changed the layers or the config"
expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs --require-seal "$REG/t/oseal:two" "$T/pulled.erofs"
cmp -s "$T/want.erofs" "$T/pulled.erofs" || fail "pull --format=erofs of the sealed layout: not build's image"
expect_exit 0 "$CFSCTL" pull --plain-http --policy "$T/policy.json" --require-seal --repo "$T/repo" \
	"$REG/t/oseal:two" two
cmp -s "$T/want.erofs" "$T/repo/images/$want" || fail "a v1 pull --repo: no sealed form at images/$want"
# the same layout pushed again: the same manifest
expect_exit 0 "$CFSCTL" push --plain-http "oci:$T/lay:two" "$REG/t/oseal-again:two"
assert_eq "$digest" "$(sed -n 's/^Digest: //p' "$T/err")" "the layout pushed again: the manifest digest"

# recompressed: the same seal
expect_exit 0 "$CFSCTL" push --plain-http --compression=zstd:chunked "oci:$T/lay:two" "$REG/t/oseal-zc:two"
assert_eq "$want" "$(seal_of t/oseal-zc two)" "the recompressed image's seal"
expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs --require-seal "$REG/t/oseal-zc:two" "$T/pulled-zc.erofs"
cmp -s "$T/want.erofs" "$T/pulled-zc.erofs" || fail "pull --format=erofs of the recompressed layout: not build's image"
expect_exit 0 "$CFSCTL" pull --plain-http --require-seal --digest-store "$T/store" "$REG/t/oseal-zc:two" "$T/pulled-zc.img"

# a layout sealed already, rightly: its manifest goes as it is
right=$(retag "$layout_digest" "$want" right)
expect_exit 0 "$CFSCTL" push --plain-http "oci:$T/lay:right" "$REG/t/oseal:right"
assert_eq "$right" "$(sed -n 's/^Digest: //p' "$T/err")" "a rightly sealed layout: the manifest digest"
assert_eq "$want" "$(sed -n 's/^Seal: //p' "$T/err")" "a rightly sealed layout: the Seal: line"

# another seal, or one that is not a seal: refused before any request
other=$(printf '%s' "$want" | tr '0-9a-f' '1-9a-f0')
retag "$layout_digest" "$other" wrong >/dev/null
retag "$layout_digest" "${want^^}" upper >/dev/null
log0=$(stat -c %s "$T/reg/log")
for comp in "" --compression=gzip; do
	# shellcheck disable=SC2086 # $comp is zero or one word
	expect_exit 1 "$CFSCTL" push --plain-http $comp "oci:$T/lay:wrong" "$REG/t/oseal:wrong"
	grep -q "has the seal $other, but the composefs 1.0 image of its tree has the digest $want: refused" "$T/err" ||
		fail "another seal ($comp): $(cat "$T/err")"
done
expect_exit 1 "$CFSCTL" push --plain-http "oci:$T/lay:upper" "$REG/t/oseal:upper"
grep -q "a seal (the annotation composefs.merged.erofs.v1.fsverity-sha256-12) that is not 64 lowercase hex digits" "$T/err" ||
	fail "a malformed seal: $(cat "$T/err")"
assert_eq 0 "$(tail -c +$((log0 + 1)) "$T/reg/log" | grep -c '"\(POST\|PUT\|HEAD\|GET\) /v2/' || true)" \
	"requests of the refused pushes"

# --no-seal: the manifest as it is, unsealed
expect_exit 0 "$CFSCTL" push --plain-http --no-seal --json "oci:$T/lay:two" "$REG/t/oseal:none"
assert_eq "$layout_digest" "$(sed -n 's/^Digest: //p' "$T/err")" "--no-seal: the layout's manifest digest"
grep -q '"seal":null' "$T/out" || fail "--no-seal: --json names a seal: $(cat "$T/out")"
assert_eq none "$(seal_of t/oseal none)" "--no-seal: the manifest's seal"
expect_exit 1 "$CFSCTL" pull --plain-http --format=erofs --require-seal "$REG/t/oseal:none" "$T/none.erofs"
grep -q "the image has no seal" "$T/err" || fail "--no-seal, pulled with --require-seal: $(cat "$T/err")"
expect_exit 2 "$CFSCTL" push --plain-http --no-seal "$T/tree" "$REG/t/oseal:dir"
grep -q "no-seal goes with oci:LAYOUT" "$T/err" || fail "--no-seal with a directory: $(cat "$T/err")"
echo ok
