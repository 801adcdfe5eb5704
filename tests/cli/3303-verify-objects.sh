#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl verify --basedir: each object problem (missing, wrong size, wrong
# digest, not a regular file) is an error naming the object and every image
# path that uses it; the first basedir holding an object wins; each object
# is hashed once; a damaged store is reported, never changed. This host's
# filesystems have no fs-verity, so digests are computed here: the
# "measured" path needs a filesystem with fs-verity (the VM tests).
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" verify --help >/dev/null 2>&1 || skip "cfsctl verify is not available"

mkdir -p "$T/tree/d"
printf 'shared\n' >"$T/tree/a"
printf 'shared\n' >"$T/tree/d/same"   # same object as /a
ln "$T/tree/a" "$T/tree/d/a-link"      # and a hardlink to it
printf 'size\n' >"$T/tree/sized"
printf 'digest\n' >"$T/tree/digested"
printf 'gone\n' >"$T/tree/d/missing"
printf 'dir\n' >"$T/tree/d/notfile"
printf 'fine\n' >"$T/tree/fine"
"$CFSCTL" build --digest-store="$T/store" "$T/tree" "$T/img" || fail "build failed"
obj() { "$CFSCTL" inspect stat --json "$T/img" "$1" | python3 -c 'import json,sys; print(json.load(sys.stdin)["backing_path"])'; }

expect_exit 0 "$CFSCTL" verify --basedir "$T/store" --jobs 3 "$T/img"
assert_contains "$T/out" "^verify: 6 objects in 1 basedir: 6 ok, 0 with problems; digests 0 measured \(fs-verity\), 6 computed \(33 bytes read\)$"
if grep -q '^warning: no-verity: basedir' "$T/out"; then
	echo "note: the store's filesystem has no fs-verity; digests were computed, the measured path is not exercised here"
fi

# Damage the store: one object of each kind of problem.
o_shared=$(obj /a) o_size=$(obj /sized) o_digest=$(obj /digested) o_missing=$(obj /d/missing)
o_notfile=$(obj /d/notfile)
chmod -R u+w "$T/store"
printf 'size!!\n' >"$T/store/$o_size"
printf 'DIGEST\n' >"$T/store/$o_digest"   # same size, other content
printf 'SHARED\n' >"$T/store/$o_shared"
rm "$T/store/$o_missing"
rm "$T/store/$o_notfile" && mkdir "$T/store/$o_notfile"
chmod -R a-w "$T/store"
before=$(cd "$T/store" && find . -printf '%p %s %m %T@\n' | sort; find . -type f -exec sha256sum {} + | sort)

expect_exit 1 "$CFSCTL" verify --basedir "$T/store" "$T/img"
assert_contains "$T/out" "^error: missing: object '$o_missing' in none of the 1 basedirs; used by '/d/missing'$"
assert_contains "$T/out" "^error: size: object '$o_size' in basedir '$T/store' is 7 bytes, the image records 5; used by '/sized'$"
assert_contains "$T/out" "^error: digest: object '$o_digest' in basedir '$T/store' has fs-verity digest [0-9a-f]{64} \(computed\), the image records ${o_digest%%/*}${o_digest#*/}; used by '/digested'$"
assert_contains "$T/out" "^error: not-file: object '$o_notfile' in basedir '$T/store' is not a regular file; used by '/d/notfile'$"
# every path using the object, hardlinks included
assert_contains "$T/out" "^error: digest: object '$o_shared' .*; used by '/a', '/d/a-link', '/d/same'$"
assert_eq 5 "$(grep -c '^error: ' "$T/out")" "errors"
assert_contains "$T/out" "^verify: 6 objects in 1 basedir: 1 ok, 5 with problems"
assert_contains "$T/out" "^verify: FAILED: 5 errors"

# JSON names the same objects and users.
expect_exit 1 "$CFSCTL" verify --json --basedir "$T/store" "$T/img"
python3 - "$T/out" "$o_shared" <<'PY' || fail "JSON object problems"
import json, sys
d = json.load(open(sys.argv[1]))
errs = [p for p in d["problems"] if p["severity"] == "error"]
assert sorted(p["kind"] for p in errs) == ["digest", "digest", "missing", "not-file", "size"], errs
shared = [p for p in errs if p["object"] == sys.argv[2]][0]
assert shared["users"] == ["/a", "/d/a-link", "/d/same"], shared
assert d["objects"]["with_problems"] == 5 and d["ok"] is False, d
PY

# The store was not touched.
after=$(cd "$T/store" && find . -printf '%p %s %m %T@\n' | sort; find . -type f -exec sha256sum {} + | sort)
assert_eq "$before" "$after" "the store after verify"

# First match wins: a good copy in a later basedir does not hide a bad one
# in an earlier basedir, but fills in for a missing one.
mkdir -p "$T/good/${o_missing%%/*}"
printf 'gone\n' >"$T/good/$o_missing"
expect_exit 1 "$CFSCTL" verify --basedir "$T/store:$T/good" "$T/img"
grep -q "^error: missing:" "$T/out" && fail "an object in the second basedir was reported missing"
assert_contains "$T/out" "^error: size: object '$o_size' in basedir '$T/store'"
assert_contains "$T/out" "^verify: 6 objects in 2 basedirs: 2 ok, 4 with problems"

# --require-verity: an object without fs-verity is then an error.
"$CFSCTL" build --digest-store="$T/store2" "$T/tree" "$T/img2" || fail "build failed"
expect_exit 0 "$CFSCTL" verify --basedir "$T/store2" "$T/img2"
if grep -q '^warning: no-verity: basedir' "$T/out"; then
	expect_exit 1 "$CFSCTL" verify --require-verity --basedir "$T/store2" "$T/img2"
	assert_contains "$T/out" "^error: no-verity: object '$o_size' in basedir '$T/store2' has no fs-verity \(the filesystem has none\); .*used by '/sized'$"
	assert_eq 6 "$(grep -c '^error: no-verity' "$T/out")" "no-verity errors"
else
	expect_exit 0 "$CFSCTL" verify --require-verity --basedir "$T/store2" "$T/img2"
fi
exit 0
