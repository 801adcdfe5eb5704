#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui search and go to: '/' moves to the first match as one types,
# also into directories not read yet (which it then expands), Esc goes back,
# n/N go to the next/previous match in depth-first order and wrap around,
# a search without a match says so; 'g' goes to a path, also one with an
# escaped byte, and a path that does not exist is reported.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

s=$T/src
mkdir -p "$s/a/deep/er" "$s/b" "$s/c"
: >"$s/a/deep/er/needle-1"
: >"$s/b/needle-2"
: >"$s/b/other"
: >"$s/c/Needle-3"
: >"$s/$(printf 'caf\xe9')"
"$CFSCTL" build "$s" "$T/img" >/dev/null || fail "build failed"

start_shell 80 24
tui "$T/img"
assert_screen '^/ +1/5$'
# incremental: each key moves to the first match after where the search began
keys /
wait_for '^/$'
keys o
wait_for '│ path     /b/other$'
assert_screen '^      other +│'
keys BSpace
wait_for '^/$'
keys n e
wait_for '^          needle-1 +│'
assert_screen '^/ne$'
assert_screen '│ path     /a/deep/er/needle-1$'
keys Enter
wait_for '^/a/deep/er/needle-1 +5/10$'
# n: next in depth-first order, reading b/ and c/ as it goes; lowercase
# text matches case-insensitively
keys n
wait_for '^/b/needle-2 +[0-9]+/[0-9]+$'
keys n
wait_for '^/c/Needle-3 +[0-9]+/[0-9]+$'
keys n
wait_for '^/a/deep/er/needle-1 +[0-9]+/[0-9]+$'
keys N
wait_for '^/c/Needle-3 +[0-9]+/[0-9]+$'
keys N
wait_for '^/b/needle-2 +[0-9]+/[0-9]+$'
# an uppercase letter makes the search case-sensitive
keys / N e e Enter
wait_for '^/c/Needle-3 +[0-9]+/[0-9]+$'
keys n
wait_for "^the only match for 'Nee'"
# no match: the prompt says so, Enter reports it, the selection stays
keys / x y z
wait_for '^/ \(no match\) xyz$'
keys Enter
wait_for "^no name contains 'xyz'"
assert_screen '│ path     /c/Needle-3$'
# Esc cancels and goes back to where the search began
keys Home
wait_for '^/ +1/'
keys / o t h
wait_for '│ path     /b/other$'
keys Escape
wait_for '^/ +1/'
# a byte that is not UTF-8, typed as \xXY
keys / 'caf\xe9' Enter
wait_for '^/caf\\xe9 +[0-9]+/[0-9]+$'

# go to a path
keys g
wait_for '^go to: ?$'
keys /b/other Enter
wait_for '^/b/other +[0-9]+/[0-9]+$'
assert_screen '│ path     /b/other$'
keys g '/a/deep/er' Enter
wait_for '^/a/deep/er +[0-9]+/[0-9]+$'
keys g 'caf\xe9' Enter
wait_for '^/caf\\xe9 +[0-9]+/[0-9]+$'
# a path that does not exist: the message, and the deepest existing part selected
keys g /a/deep/nope/x Enter
wait_for "^'/a/deep/nope/x': No such file or directory"
assert_screen '│ path     /a/deep$'
keys g /b/other/x Enter
wait_for "^'/b/other/x': Not a directory"
# Esc leaves the prompt without moving
keys g /c Escape
wait_for '^/b/other +[0-9]+/[0-9]+$'

quit_tui
exit 0
