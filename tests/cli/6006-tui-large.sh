#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui on a 64k-inode image (a CentOS Stream 9 developer tree, from
# the shared data beside the checkout; CFS_DATA_DIR overrides where): the
# first screen appears (within a bounded wait; no timing is asserted), a
# search reaches a file deep in directories not read yet, and going to a
# path in a directory of thousands of entries works.
. "$(dirname "$0")/../lib/common.sh"

data=${CFS_DATA_DIR:-$TOP/../shared/data}/cs9-x86_64-developer.dump.gz
[ -f "$data" ] || skip "no $data (the shared test data is not beside the checkout; CFS_DATA_DIR names its directory)"
. "$TESTS_DIR/lib/tmux.sh"

gzip -dc "$data" | "$CFSCTL" build --from-dump - "$T/img" || fail "build of the 64k image failed"
inodes=$("$CFSCTL" inspect "$T/img" | sed -n 's/^inodes: *\([0-9]*\).*/\1/p')
[ "${inodes:-0}" -ge 50000 ] || fail "the image has only ${inodes:-0} inodes"

start_shell 80 24
tui "$T/img"
assert_screen '^- / +│ path     /$'
assert_screen '^  \+ usr/ +│'
assert_screen '^/ +1/[0-9]+$'
keys g /usr/lib64/libc.so.6 Enter
wait_for '^/usr/lib64/libc\.so\.6 +[0-9]+/[0-9]+$'
assert_screen '│ type     (regular file|symlink)$'
keys Home / 'rpmdb.sqlite' Enter
wait_for '^/usr/.*/rpmdb\.sqlite +[0-9]+/[0-9]+$'
quit_tui
exit 0
