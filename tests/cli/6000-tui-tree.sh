#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui in an 80x24 tmux pane: the first screen, expanding and
# collapsing with every key that does it, moving by row, page and end, the
# details of a file with xattrs and of a symlink, names that must be
# escaped, the status line, and q giving the terminal back with status 0.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

s=$T/src
mkdir -p "$s/etc/sub" "$s/usr/bin" "$s/var"
head -c 5000 /dev/zero >"$s/etc/data"
printf 'hi\n' >"$s/etc/hosts"
chmod 0640 "$s/etc/hosts"
setfattr -n user.color -v blue "$s/etc/hosts" 2>/dev/null || skip "no user xattrs on $T's filesystem"
setfattr -n user.bin -v 0sYQFi "$s/etc/hosts" # "a\x01b"
ln -s ../etc/hosts "$s/usr/bin/link"
for i in $(seq 1 40); do : >"$s/usr/bin/f$(printf %02d "$i")"; done
printf x >"$s/var/$(printf 'caf\xe9')"
printf x >"$s/var/café"
printf x >"$s/var/$(printf 'ctl\033[31m')"
touch -d '2023-11-14 22:13:20 UTC' "$s/etc/hosts"
"$CFSCTL" build "$s" "$T/img" >/dev/null || fail "build failed"

start_shell 80 24
tui "$T/img"
assert_screen '^ cfsctl tui: .*/img +\? help  q quit$'
assert_screen '^- /  +│ path     /$'
assert_screen '^  \+ etc/ +│ inode    [0-9]+$'
assert_screen '│ type     directory$'
assert_screen '^  \+ usr/ +│'
assert_screen '^  \+ var/ +│'
assert_screen '│ entries  3$'
assert_screen '^/ +1/4$'

# down, expand with Enter, collapse with Enter, expand with l / Right
keys j
wait_for '^/etc +2/4$'
keys Enter
wait_for '^  - etc/ +│'
assert_screen '^      data +│'
assert_screen '^      hosts +│'
assert_screen '^    \+ sub/ +│'
assert_screen '^/etc +2/7$'
keys Enter
wait_for '^  \+ etc/ +│'
refute_screen 'hosts'
keys l
wait_for '^      hosts +│'
keys h
wait_for '^  \+ etc/ +│'
keys Right
wait_for '^      hosts +│'
# Right on an expanded directory goes to its first entry; Left to the parent
keys Right
wait_for '^/etc/data +3/7$'
assert_screen '│ size     4\.9 KiB \(5000 bytes\)$'
keys Left
wait_for '^/etc +2/7$'
keys Space
wait_for '^  \+ etc/ +│'
keys Space j j
wait_for '^/etc/hosts +4/7$'

# the details of a file with xattrs
assert_screen '│ path     /etc/hosts$'
assert_screen '│ type     regular file$'
assert_screen '│ mode     -rw-r----- \(0640\)$'
assert_screen '│ uid/gid  0 / 0$'
assert_screen '│ size     3 bytes$'
assert_screen '│ mtime    2023-11-14 22:13:20\.000000000 UTC$'
assert_screen '│ nlink    1$'
assert_screen '│ backing  [0-9a-f]{2}/[0-9a-f]{30,}$'
assert_screen '│ digest   [0-9a-f]{36}$'
assert_screen '│          [0-9a-f]{28}$'
assert_screen '│ xattrs$'
assert_screen '│   user\.bin=a\\x01b$'
assert_screen '│   user\.color=blue$'

# k goes up; the symlink's target; a whole page down and back
keys k
wait_for '^/etc/data +3/7$'
keys G # not a key: nothing changes
keys End
wait_for '^/var +7/7$'
keys Home
wait_for '^/ +1/7$'
keys j j j j j l
wait_for '^/usr +6/8$'
keys j Enter
wait_for '^/usr/bin +7/49$'
keys NPage
wait_for '^/usr/bin/f21 +28/49$'
keys NPage
wait_for '^/var +49/49$'
keys PPage
wait_for '^/usr/bin/f21 +28/49$'
keys End k
wait_for '^/usr/bin/link +48/49$'
assert_screen '^        link -> \.\./etc/hosts +│'
assert_screen '│ type     symlink$'
assert_screen '│ target   \.\./etc/hosts$'

# names that are not UTF-8 or hold control characters are escaped
keys End Enter
wait_for '^/var +49/52$'
assert_screen '^      café +│'
assert_screen '^      caf\\xe9 +│'
assert_screen '^      ctl\\x1b\[31m +│'
screen | grep -q $'\033' && fail "a raw escape character reached the screen"

quit_tui

# in a locale that is not UTF-8, every byte outside ASCII is escaped
keys "clear; LC_ALL=C $CFSCTL tui $T/img; echo EXIT=\$?" Enter
wait_for 'q quit$'
keys g '/var/caf\xc3\xa9' Enter
wait_for '^/var/caf\\xc3\\xa9 +[0-9]+/[0-9]+$'
assert_screen '^      caf\\xc3\\xa9 +[|]'
assert_screen '[|] path     /var/caf\\xc3\\xa9$'
refute_screen 'café'
quit_tui
exit 0
