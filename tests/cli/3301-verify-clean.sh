#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl verify on intact images: no problems, exit 0, a summary (text and
# JSON); --digest checks the image's own fs-verity digest (computed on a
# filesystem without fs-verity, and the summary says so); usage errors exit 2.
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" verify --help >/dev/null 2>&1 || skip "cfsctl verify is not available"

"$CFSCTL" build --from-dump "$TOP/tests/data/verify/base.dump" "$T/base.img" || fail "build failed"
expect_exit 0 "$CFSCTL" verify "$T/base.img"
assert_eq "" "$(grep -E '^(error|warning):' "$T/out")" "problems in a clean image"
assert_contains "$T/out" "^verify: '$T/base.img': 6 inodes, 2 directories, 5 entries$"
assert_contains "$T/out" "^verify: OK: 0 errors, 0 warnings$"

# A larger tree with hardlinks, symlinks and xattrs, built with a store.
mkdir -p "$T/tree/d/e"
printf 'one\n' >"$T/tree/a"
ln "$T/tree/a" "$T/tree/d/a-link"
printf 'two\n' >"$T/tree/d/e/b"
ln -s ../a "$T/tree/d/s"
: >"$T/tree/empty"
setfattr -n user.x -v 1 "$T/tree/d" 2>/dev/null || true
for i in $(seq 1 300); do : >"$T/tree/d/e/n$i"; done
"$CFSCTL" build --digest-store="$T/store" "$T/tree" "$T/tree.img" || fail "build failed"
expect_exit 0 "$CFSCTL" verify "$T/tree.img"
assert_contains "$T/out" "^verify: OK: 0 errors, 0 warnings$"
expect_exit 0 "$CFSCTL" verify --json "$T/tree.img"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["ok"] is True and d["errors"] == 0 and d["problems"] == [], d' "$T/out" ||
	fail "JSON of a clean image"

# --digest: the right one passes, a wrong one is an error naming both.
digest=$("$CFSCTL" build --print-digest --from-dump "$TOP/tests/data/verify/base.dump" "$T/again.img" | tail -n 1)
[[ $digest =~ ^[0-9a-f]{64}$ ]] || fail "build --print-digest gave '$digest'"
expect_exit 0 "$CFSCTL" verify --digest "$digest" "$T/base.img"
assert_contains "$T/out" "^verify: image fs-verity digest $digest \((computed|measured)\): as expected$"
wrong=$(printf '%064d' 0)
expect_exit 1 "$CFSCTL" verify --digest "$wrong" "$T/base.img"
assert_contains "$T/out" "^error: image-digest: the image has fs-verity digest $digest \((computed|measured)\), expected $wrong$"
assert_contains "$T/out" "^verify: FAILED: 1 error, 0 warnings$"

# Usage errors and unreadable input.
expect_exit 2 "$CFSCTL" verify
expect_exit 2 "$CFSCTL" verify --digest xyz "$T/base.img"
expect_exit 2 "$CFSCTL" verify --jobs 0 "$T/base.img"
expect_exit 2 "$CFSCTL" verify "$T/base.img" extra
expect_exit 2 "$CFSCTL" verify --require-verity "$T/base.img"
expect_exit 1 "$CFSCTL" verify "$T/nothing"
assert_contains "$T/err" "^cfsctl: verify: '$T/nothing': No such file or directory$"
expect_exit 1 "$CFSCTL" verify --basedir "$T/nodir" "$T/tree.img"
assert_contains "$T/err" "^cfsctl: verify: '$T/tree.img': .*$T/nodir"
: >"$T/empty.img"
expect_exit 1 "$CFSCTL" verify "$T/empty.img"
assert_contains "$T/out" "^error: header: image .*too short"
exit 0
