#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl diff with directories: an image against its own source tree is
# empty (exit 0), and comparing a changed tree with the original tree gives
# the same output as comparing it with the original's image.
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" diff --help >/dev/null 2>&1 || skip "cfsctl diff is not available"

s=$T/src
mkdir -p "$s/d/e"
printf 'one\n' >"$s/a"
ln "$s/a" "$s/d/a-link"
printf 'two\n' >"$s/d/e/b"
ln -s ../a "$s/d/s"
: >"$s/empty"
printf 'sp' >"$s/with space"
setfattr -n user.x -v 1 "$s/d" 2>/dev/null || true
"$CFSCTL" build --digest-store="$T/store" "$s" "$T/src.img" || fail "build failed"

expect_exit 0 "$CFSCTL" diff "$T/src.img" "$s"
assert_eq "" "$(cat "$T/out" "$T/err")" "image against its source"
expect_exit 0 "$CFSCTL" diff "$s" "$T/src.img"
expect_exit 0 "$CFSCTL" diff "$s" "$s"
assert_eq "" "$(cat "$T/out")" "a tree against itself"

cp -a "$s" "$T/new"
printf 'ONE!\n' >"$T/new/a"   # content of a hardlinked file
chmod 0700 "$T/new/d/e"
rm "$T/new/d/s"
mkdir "$T/new/added"
printf 'x' >"$T/new/added/x"
touch -d @1000 "$T/new/with space"
expect_exit 1 "$CFSCTL" diff "$s" "$T/new"
cp "$T/out" "$T/by-dir"
expect_exit 1 "$CFSCTL" diff "$T/src.img" "$T/new"
cp "$T/out" "$T/by-image"
assert_eq "$(cat "$T/by-dir")" "$(cat "$T/by-image")" "diff against a directory and against its image"
assert_contains "$T/by-dir" "^M /a content size=4->5 digest=[0-9a-f]{16}->[0-9a-f]{16} mtime="
assert_contains "$T/by-dir" "^M /d/a-link content size=4->5 "
assert_contains "$T/by-dir" "^M /d/e mode=0755->0700"
assert_contains "$T/by-dir" "^- /d/s$"
assert_contains "$T/by-dir" "^\+ /added$"
assert_contains "$T/by-dir" "^\+ /added/x$"
assert_contains "$T/by-dir" '^M /with\\x20space mtime=[0-9.]+->1000.0$'
assert_contains "$T/by-dir" "^objects: 2 in both, 1 only in OLD, 2 only in NEW; 6 bytes to fetch to have NEW$"
exit 0
