#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The seal: cfsctl push writes the manifest annotation
# composefs.merged.erofs.v1.fsverity-sha256-12, the fs-verity digest of
# the composefs 1.0 image of the tree (that of build --format=erofs, and
# of pull --format=erofs). pull checks it whatever --format (a v1 pull
# keeps the small files' content to write the EROFS image too): another
# digest is refused (exit 1, no image, no name, no new object), a seal
# that is not 64 hex digits is refused by any pull before a layer is
# fetched, and --require-seal refuses an image without one, before its
# config is. With --repo the sealed form is written once, into the
# repository (checked as it is stored), byte for byte pull
# --format=erofs's image.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

expect_exit 0 "$CFSCTL" push --plain-http --json "$T/tree" "$REG/t/sealed:v1"
seal=$(sed -n 's/^Seal: //p' "$T/err")
[[ $seal =~ ^[0-9a-f]{64}$ ]] || fail "no Seal: line: $(cat "$T/err")"
grep -q "\"seal\":\"$seal\"" "$T/out" || fail "--json has not the seal"
ann=$(manifest t/sealed v1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["annotations"]["composefs.merged.erofs.v1.fsverity-sha256-12"])')
assert_eq "$seal" "$ann" "the manifest's seal annotation"
expect_exit 0 "$CFSCTL" build --format=erofs "$T/tree" "$T/want.erofs"
assert_eq "sha256:$seal" "$(fsverity digest "$T/want.erofs" | cut -d' ' -f1)" "the seal against build --format=erofs"
expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs --require-seal "$REG/t/sealed:v1" "$T/pulled.erofs"
cmp -s "$T/want.erofs" "$T/pulled.erofs" || fail "pull --format=erofs of a sealed image: not build's image"
# a v1 pull checks the seal too, and still makes build's v1 image, with an
# object for each file, the small ones too
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/accept.json"
expect_exit 0 "$CFSCTL" pull --plain-http --policy "$T/accept.json" --require-seal --repo "$T/v1repo" "$REG/t/sealed:v1" v1
! grep -q "seal" "$T/err" || fail "a v1 pull of a sealed image: $(cat "$T/err")"
cmp -s "$T/want.img" "$T/v1repo/images/refs/v1" || fail "a v1 pull of a sealed image: not build's image"
hello=$(fsverity digest "$T/tree/etc/hello" | cut -d' ' -f1)
hello=${hello#sha256:}
[ -f "$T/v1repo/objects/${hello:0:2}/${hello:2}" ] || fail "a v1 pull of a sealed image: no object for a small file"
# with --repo, the sealed form is stored under the seal too, so that
# composefs=<seal> boots what the seal covers; images --json says so, and
# gc keeps it while the name points at the image it was pulled with
cmp -s "$T/want.erofs" "$T/v1repo/images/$seal" || fail "a v1 pull --repo: no sealed form at images/$seal"
digest=$(sed -n 's/^Digest: //p' "$T/err")
expect_exit 0 "$CFSCTL" images --repo "$T/v1repo" --json
python3 - "$T/out" "$seal" "$digest" "$REG/t/sealed:v1" <<'PY' || fail "images --json: $(cat "$T/out")"
import json, sys
doc = json.load(open(sys.argv[1]))
n, = doc["names"]
assert n["name"] == "v1" and n["seal"] == sys.argv[2] and n["manifest"] == sys.argv[3], n
assert n["source"] == sys.argv[4] and n["policy"] == "insecureAcceptAnything", n
assert sorted(i["digest"] for i in doc["images"]) == sorted([n["digest"], sys.argv[2]]), doc["images"]
PY
expect_exit 0 "$CFSCTL" gc --repo "$T/v1repo"
[ -f "$T/v1repo/images/$seal" ] || fail "gc removed the sealed form of a named image"
expect_exit 0 "$CFSCTL" images --repo "$T/v1repo" --remove v1
expect_exit 0 "$CFSCTL" gc --repo "$T/v1repo"
[ ! -e "$T/v1repo/images/$seal" ] || fail "gc kept the sealed form of an image no name reaches"
# an EROFS pull with the defaults stores one image: its own is the sealed form
expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs --repo "$T/erepo" "$REG/t/sealed:v1" e
assert_eq "$seal" "$(ls "$T/erepo/images" | grep -v '^refs$\|^origins$')" "the images of an EROFS pull"
# with --repo the sealed form is written once, straight into the
# repository, and checked there: no other copy is made to check the seal
# (so no temporary file outside the repository: $TMPDIR may be unusable),
# and it is byte for byte the image pull --format=erofs writes
for f in v1 erofs; do
	expect_exit 0 env TMPDIR="$T/no-such-dir" "$CFSCTL" pull --plain-http --policy "$T/accept.json" \
		--format=$f --require-seal --repo "$T/once-$f" "$REG/t/sealed:v1" x
	cmp -s "$T/pulled.erofs" "$T/once-$f/images/$seal" ||
		fail "a $f pull --repo: its sealed form is not pull --format=erofs's image"
done

# re-tag the image with another seal annotation: python3 - SEAL TAG
reseal() {
	python3 - "$REG" "$1" "$2" <<'PY' || fail "writing the image with the seal '$1'"
import json, sys, urllib.request
reg, seal, tag = sys.argv[1:4]
MT = "application/vnd.oci.image.manifest.v1+json"
r = urllib.request.Request(f"http://{reg}/v2/t/sealed/manifests/v1", headers={"Accept": MT})
man = json.loads(urllib.request.urlopen(r).read())
if seal == "-":
    del man["annotations"]
else:
    man["annotations"]["composefs.merged.erofs.v1.fsverity-sha256-12"] = seal
urllib.request.urlopen(urllib.request.Request(f"http://{reg}/v2/t/sealed/manifests/{tag}",
    data=json.dumps(man).encode(), method="PUT", headers={"Content-Type": MT})).read()
PY
}
other=$(printf '%s' "$seal" | tr '0-9a-f' '1-9a-f0')
reseal "$other" other
expect_exit 1 "$CFSCTL" pull --plain-http --format=erofs --repo "$T/repo" "$REG/t/sealed:other" img
grep -q "the tree's composefs 1.0 image has the digest $seal, not the image's seal $other: refused" "$T/err" ||
	fail "another seal: no message: $(cat "$T/err")"
[ ! -e "$T/repo/images/refs/img" ] || fail "another seal: the name was set"
[ -z "$(find "$T/repo/objects" -type f 2>/dev/null)" ] || fail "another seal: objects were published"
expect_exit 1 "$CFSCTL" pull --plain-http --format=erofs "$REG/t/sealed:other" "$T/other.erofs"
[ ! -e "$T/other.erofs" ] || fail "another seal: an image was left"
# the same refusal by a v1 pull, in full and in part, and from the layers cache
for how in --full-pull "" "--layers-cache $T/cache" "--layers-cache $T/cache"; do
	# shellcheck disable=SC2086 # $how is zero or two words
	expect_exit 1 "$CFSCTL" pull --plain-http $how --repo "$T/repo" "$REG/t/sealed:other" img
	grep -q "the tree's composefs 1.0 image has the digest $seal, not the image's seal $other: refused" "$T/err" ||
		fail "another seal, v1 pull $how: no message: $(cat "$T/err")"
	[ ! -e "$T/repo/images/refs/img" ] || fail "another seal, v1 pull $how: the name was set"
	[ -z "$(find "$T/repo/objects" "$T/repo/images" -maxdepth 1 -type f 2>/dev/null)" ] ||
		fail "another seal, v1 pull $how: an image was left"
	[ -z "$(find "$T/repo/objects" -type f 2>/dev/null)" ] || fail "another seal, v1 pull $how: objects were published"
done
[ -n "$(ls "$T/cache")" ] || fail "the layers cache was not filled"
expect_exit 1 "$CFSCTL" pull --plain-http "$REG/t/sealed:other" "$T/other.img"
[ ! -e "$T/other.img" ] || fail "another seal, v1 pull: an image was left"

for bad in "${seal:0:63}" "${seal^^}" "sha256:$seal"; do
	reseal "$bad" bad
	log0=$(stat -c %s "$T/reg/log")
	expect_exit 1 "$CFSCTL" pull --plain-http "$REG/t/sealed:bad" "$T/bad.img"
	grep -q "the seal (the annotation composefs.merged.erofs.v1.fsverity-sha256-12) is not 64 lowercase hex digits" "$T/err" ||
		fail "the seal '$bad': no message: $(cat "$T/err")"
	! tail -c +$((log0 + 1)) "$T/reg/log" | grep -q '"GET /v2/t/sealed/blobs/' ||
		fail "the seal '$bad': a blob was fetched"
done

reseal - unsealed
log0=$(stat -c %s "$T/reg/log")
expect_exit 1 "$CFSCTL" pull --plain-http --format=erofs --require-seal "$REG/t/sealed:unsealed" "$T/u.img"
grep -q "the image has no seal .*, and one is required (--require-seal)" "$T/err" || fail "--require-seal: $(cat "$T/err")"
! tail -c +$((log0 + 1)) "$T/reg/log" | grep -q '"GET /v2/t/sealed/blobs/' || fail "--require-seal: a blob was fetched"
expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs "$REG/t/sealed:unsealed" "$T/u.img"
expect_exit 1 "$CFSCTL" pull --plain-http --require-seal "$REG/t/sealed:unsealed" "$T/u.img"
grep -q "the image has no seal .*, and one is required (--require-seal)" "$T/err" || fail "--require-seal, v1: $(cat "$T/err")"
echo ok
