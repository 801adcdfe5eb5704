#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui --basedir: whether each file's backing object is present in
# one of the base directories, and on 'v' whether the object's fs-verity
# digest matches the one the image records (a replaced object does not).
# Without --basedir, 'v' says what it needs.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

mkdir -p "$T/src"
printf 'present\n' >"$T/src/a-present"
printf 'missing\n' >"$T/src/b-missing"
printf 'changed\n' >"$T/src/c-changed"
"$CFSCTL" build --digest-store="$T/store" "$T/src" "$T/img" >/dev/null || fail "build failed"
obj() { "$CFSCTL" inspect stat "$T/img" "/$1" | sed -n 's/^backing: //p'; }
b=$(obj b-missing) c=$(obj c-changed)
[ -f "$T/store/$b" ] && [ -f "$T/store/$c" ] || fail "the store lacks the objects"
rm -f "$T/store/$b"
# a new file (no fs-verity) with other content in place of the object
rm -f "$T/store/$c"
printf 'tampered\n' >"$T/store/$c"
mkdir -p "$T/empty"

start_shell 80 24
tui --basedir "$T/empty:$T/store" "$T/img"
keys j
wait_for '^/a-present +2/4$'
assert_screen "│ object   present in /"
assert_screen '│ verity   press v to check the digest$'
keys v
wait_for '│ verity   matches \((computed|measured by the kernel)\)$'
keys j
wait_for '^/b-missing +3/4$'
assert_screen '│ object   MISSING from the base directories$'
keys v
wait_for '│ verity   object missing$'
keys j
wait_for '^/c-changed +4/4$'
keys v
wait_for '│ verity   MISMATCH: the object.s is$'
assert_screen '│          \(computed\)$'
# the result stays with the entry
keys k k
wait_for '^/a-present +2/4$'
assert_screen '│ verity   matches'
quit_tui

tui "$T/img"
keys j
wait_for '^/a-present +2/4$'
refute_screen '│ object'
keys v
wait_for '^v needs --basedir'
quit_tui

keys "clear; $CFSCTL tui --basedir $T/nope $T/img; echo BADDIR=\$?" Enter
wait_for '^BADDIR=[0-9]+$'
assert_screen '^BADDIR=1$'
assert_screen "^cfsctl: tui: '$T/nope': No such file or directory$"
exit 0
