#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui on a composefs 1.0 (EROFS) image in an 80x24 tmux pane: the
# root shows the tree's entries and not the whiteouts composefs adds for
# the lower layers; a file of up to 64 bytes has its content in the image
# (no backing object) and its digest; a larger one has a backing object,
# found in --basedir, whose digest 'v' checks; xattrs and a symlink target
# show as for v1.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

s=$T/src
mkdir -p "$s/etc" "$s/usr" "$s/var"
printf 'hi\n' >"$s/etc/hosts"
head -c 5000 /dev/zero >"$s/etc/data"
setfattr -n user.color -v blue "$s/etc/hosts" 2>/dev/null || skip "no user xattrs on $T's filesystem"
ln -s ../etc/hosts "$s/usr/link"
"$CFSCTL" build --format=erofs --digest-store="$T/store" "$s" "$T/img" >/dev/null || fail "build failed"
small=$(fsverity digest --compact "$s/etc/hosts" 2>/dev/null) || skip "fsverity is not installed (make deps)"
big=$(fsverity digest --compact "$s/etc/data")

start_shell 80 24
tui --basedir "$T/store" "$T/img"
assert_screen '^- /  +│ path     /$'
assert_screen '│ entries  3$'
assert_screen '^/ +1/4$'
refute_screen '^  +(00|ff) '
keys j Enter
wait_for '^  - etc/ +│'
assert_screen '^      data +│'
assert_screen '^      hosts +│'
keys j
wait_for '^/etc/data +3/6$'
assert_screen '│ size     4\.9 KiB \(5000 bytes\)$'
assert_screen "│ backing  ${big:0:2}/${big:2:30}"
assert_screen "│ object   present in "
keys v
wait_for '│ verity   matches \((computed|measured by the kernel)\)$'
keys j
wait_for '^/etc/hosts +4/6$'
assert_screen '│ size     3 bytes$'
assert_screen '│ backing  none \(the content is in the image\)$'
assert_screen "│ digest   ${small:0:36}$"
assert_screen '│   user\.color=blue$'
refute_screen '│ object '
keys End Enter
wait_for '^/var +6/6$'
keys k Enter
wait_for '^/usr +5/7$'
keys j
wait_for '^/usr/link +6/7$'
assert_screen '│ target   \.\./etc/hosts$'
quit_tui
exit 0
