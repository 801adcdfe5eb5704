#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui follows the terminal's size: started at 80x24, made larger and
# back to 80x24, the panes, title and status line fill the new width and
# the rows the new height; a terminal too small says so and recovers. The
# help screen lists the keys and any key leaves it.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

s=$T/src
mkdir -p "$s/dir"
for i in $(seq 1 60); do : >"$s/dir/file-$(printf %02d "$i")"; done
"$CFSCTL" build "$s" "$T/img" >/dev/null || fail "build failed"

# the screen's size as the widest line and the number of lines
width() { screen | awk '{ if (length($0) > w) w = length($0) } END { print w }'; }

start_shell 80 24
tui "$T/img"
keys j Enter
wait_for '^/dir +2/62$'
assert_eq 80 "$(width)" "width at 80x24"
assert_screen '^ cfsctl tui: .*/img {20,}\? help  q quit$'
# the tree pane is 32 columns: the separator is column 33
assert_screen '^      file-01 {19}│'
assert_screen '^      file-21 {19}│'
refute_screen 'file-22'

tm resize-window -t t -x 132 -y 43 || fail "tmux resize-window failed"
wait_for '^      file-40 +│'
refute_screen 'file-41'
assert_eq 132 "$(width)" "width at 132x43"
assert_screen '^ cfsctl tui: .*/img {70,}\? help  q quit$'
assert_screen '^  - dir/ {44}│ path     /dir$'
assert_screen '^      file-01 {39}│ inode    [0-9]+$'
assert_screen '^/dir {100,}2/62$'

tm resize-window -t t -x 80 -y 24
wait_gone 'file-22'
assert_screen '^      file-21 {19}│'
assert_eq 80 "$(width)" "width back at 80x24"
assert_screen '^/dir {60,}2/62$'
# moving still keeps the selection in view in the smaller window
keys End
wait_for '^/dir/file-60 +62/62$'
assert_screen '^      file-60 +│'

tm resize-window -t t -x 30 -y 6
wait_for '^terminal too small'
tm resize-window -t t -x 80 -y 24
wait_for '^      file-60 +│'

# help
keys '?'
wait_for '^cfsctl tui: keys'
for k in 'Up, k / Down, j' 'Left, h' 'Right, l' 'Enter, Space' 'PgUp / PgDn' 'Home / End' \
	'/ ' 'n / N' 'g ' 'v ' '\?' 'q '; do
	assert_screen "^  $k"
done
assert_screen 'Press any key to go back'
tm resize-window -t t -x 100 -y 30
wait_for '^cfsctl tui: keys'
keys x
wait_for '^/dir/file-60 +62/62$'
refute_screen 'Press any key'

quit_tui
exit 0
