#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl inspect (summary): counts of every inode type, hardlinks, shared
# xattr sets, objects and bytes, and the image's fs-verity digest, as text
# and as JSON that parses.
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" build --help >/dev/null 2>&1 || skip "cfsctl build is not available"

mkdir -p "$T/tree/d/e" "$T/tree/empty"
printf 'hello\n' >"$T/tree/a"
printf 'hello\n' >"$T/tree/d/same-content"
printf 'other\n' >"$T/tree/d/e/b"
ln "$T/tree/a" "$T/tree/hl"
ln -s a "$T/tree/sym"
mkfifo "$T/tree/fifo"
: >"$T/tree/zero"
xattrs=0
if setfattr -n user.test -v 1 "$T/tree/a" 2>/dev/null; then
	setfattr -n user.test -v 1 "$T/tree/d"
	setfattr -n user.test -v 1 "$T/tree/zero"
	setfattr -n user.other -v 2 "$T/tree/d/e/b"
	xattrs=1
fi
"$CFSCTL" build "$T/tree" "$T/img" || fail "build failed"

expect_exit 0 "$CFSCTL" inspect "$T/img"
cp "$T/out" "$T/summary"
assert_contains "$T/summary" '^format version: 1$'
assert_contains "$T/summary" "^image size: +$(stat -c %s "$T/img") bytes$"
digest=$(fsverity digest --compact --hash-alg=sha256 --block-size=4096 "$T/img" 2>/dev/null) ||
	digest=$(fsverity digest "$T/img" | sed 's/^sha256:\([0-9a-f]*\) .*/\1/')
assert_contains "$T/summary" "^fs-verity: +$digest$"
assert_contains "$T/summary" "^inodes: +10 \(4 regular, 4 directories, 1 symlink, 1 fifo\)$"
assert_contains "$T/summary" '^directories: +4, holding 10 entries$'
assert_contains "$T/summary" '^hardlinks: +1 extra name$'
# a and d/same-content share one object; zero has no backing file
assert_contains "$T/summary" '^objects: +2 backing files, 12 bytes$'
assert_contains "$T/summary" '^content: +18 bytes in 4 regular files$'
if [ $xattrs = 1 ]; then
	assert_contains "$T/summary" '^xattr sets: +2, used by 4 inodes$'
	assert_contains "$T/summary" 'set at offset [0-9]+ \(1 xattr, [0-9]+ bytes\): 3 inodes$'
fi

expect_exit 0 "$CFSCTL" inspect --json "$T/img"
python3 -m json.tool "$T/out" >/dev/null || fail "summary JSON does not parse"
python3 - "$T/out" "$digest" "$xattrs" <<'PY' || fail "summary JSON has wrong values"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["version"] == 1
assert s["fsverity_digest"] == sys.argv[2]
assert s["inodes"] == {"total": 10, "regular": 4, "directories": 4, "symlinks": 1,
                       "chardevs": 0, "blockdevs": 0, "fifos": 1, "sockets": 0}, s["inodes"]
assert s["directories"] == 4 and s["entries"] == 10 and s["hardlinks"] == 1
assert s["objects"] == 2 and s["object_bytes"] == 12 and s["content_bytes"] == 18
if sys.argv[3] == "1":
    assert sorted(x["inodes"] for x in s["xattr_sets"]) == [1, 3], s["xattr_sets"]
PY

# usage errors and help
expect_exit 2 "$CFSCTL" inspect
expect_exit 2 "$CFSCTL" inspect --bogus "$T/img"
expect_exit 2 "$CFSCTL" inspect "$T/img" extra
expect_exit 0 "$CFSCTL" inspect --help
assert_contains "$T/out" 'cfsctl inspect missing --basedir'
# a missing image: exit 1, the standard message
expect_exit 1 "$CFSCTL" inspect "$T/nope"
assert_contains "$T/err" "^cfsctl: inspect: '$T/nope': No such file or directory$"
exit 0
