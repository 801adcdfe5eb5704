#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The other sources of cfsctl push, and mounts across repositories:
# - --repo DIR NAME: a repository's image, its content from the
#   repository's objects, gives the digests the directory gives, and pull
#   makes build's image of it;
# - oci:LAYOUT[:TAG]: a layout's image goes as it is (the manifest digest
#   is the layout's, skopeo inspect reads it); a blob of the layout that
#   does not match its descriptor is refused before anything is sent;
# - --mount-from: blobs of another repository are mounted, not uploaded.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

expect_exit 0 "$CFSCTL" push --plain-http --json "$T/tree" "$REG/t/dir:v1"
dir_digest=$(sed -n 's/^Digest: //p' "$T/err")

# --repo
expect_exit 0 "$CFSCTL" build --repo "$T/repo" "$T/tree" app
expect_exit 0 "$CFSCTL" push --plain-http --repo "$T/repo" app "$REG/t/repo:v1"
assert_eq "$dir_digest" "$(sed -n 's/^Digest: //p' "$T/err")" "the repository's image pushed: the digest"
expect_exit 0 "$CFSCTL" pull --plain-http "$REG/t/repo:v1" "$T/repo.img"
cmp -s "$T/want.img" "$T/repo.img" || fail "--repo: pull gives another image than build"
expect_exit 1 "$CFSCTL" push --plain-http --repo "$T/repo" nosuch "$REG/t/repo:v2"
grep -q "nosuch" "$T/err" || fail "--repo with an unknown name: no message naming it: $(cat "$T/err")"

# oci:LAYOUT[:TAG]
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/policy.json"
skopeo --policy "$T/policy.json" copy -q --src-tls-verify=false "docker://$REG/t/dir:v1" \
	"oci:$T/lay:v1" >"$T/copy.out" 2>&1 || { cat "$T/copy.out"; fail "skopeo copy to a layout"; }
want=sha256:$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["digest"][7:])' "$T/lay/index.json")
expect_exit 0 "$CFSCTL" push --plain-http "oci:$T/lay:v1" "$REG/t/oci:v1"
assert_eq "$want" "$(sed -n 's/^Digest: //p' "$T/err")" "oci: the layout's manifest digest"
skopeo inspect --tls-verify=false "docker://$REG/t/oci:v1" >"$T/inspect" 2>&1 ||
	{ cat "$T/inspect"; fail "skopeo inspect of the layout pushed"; }
grep -q "\"Digest\": \"$want\"" "$T/inspect" || fail "skopeo inspect names another digest"
expect_exit 1 "$CFSCTL" push --plain-http "oci:$T/lay:nosuch" "$REG/t/oci:v2"
grep -q "no image tagged 'nosuch'" "$T/err" || fail "an unknown tag: $(cat "$T/err")"
# a layer changed in the layout: refused, nothing uploaded, no tag
layer=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(m["layers"][0]["digest"][7:])' \
	"$T/lay/blobs/sha256/${want#sha256:}")
chmod u+w "$T/lay/blobs/sha256/$layer"
printf 'X' | dd of="$T/lay/blobs/sha256/$layer" bs=1 seek=100 conv=notrunc 2>/dev/null
log0=$(stat -c %s "$T/reg/log")
expect_exit 1 "$CFSCTL" push --plain-http "oci:$T/lay:v1" "$REG/t/oci:v3"
grep -q "layer 1: its content has the digest sha256:[0-9a-f]*, not sha256:$layer" "$T/err" ||
	fail "a changed layer: no message: $(cat "$T/err")"
assert_eq 0 "$(tail -c +$((log0 + 1)) "$T/reg/log" | grep -c '"\(POST\|PUT\|HEAD\) /v2/' || true)" \
	"requests after a changed layer was found"

# --mount-from
log0=$(stat -c %s "$T/reg/log")
expect_exit 0 "$CFSCTL" push --plain-http --json --mount-from t/dir "$T/tree" "$REG/t/mounted:v1"
grep -q '"mounted":true' "$T/out" || fail "--mount-from: nothing mounted: $(cat "$T/out")"
tail -c +$((log0 + 1)) "$T/reg/log" | grep -q '"POST /v2/t/mounted/blobs/uploads/?mount=sha256:[0-9a-f]*&from=t%2Fdir' ||
	fail "--mount-from: no mount request"
assert_eq 0 "$(tail -c +$((log0 + 1)) "$T/reg/log" | grep -c '"PUT /v2/[^ ]*/blobs/' || true)" \
	"blobs uploaded with --mount-from"
expect_exit 0 "$CFSCTL" pull --plain-http "$REG/t/mounted:v1" "$T/mounted.img"
cmp -s "$T/want.img" "$T/mounted.img" || fail "--mount-from: pull gives another image than build"
echo ok
