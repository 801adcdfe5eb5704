#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui and the terminal: it refuses to run when stdout (or stdin) is
# not a terminal, rejects bad usage, and gives the terminal back whichever
# way it ends: q (status 0), Ctrl-C, SIGINT and SIGTERM (it dies of the
# signal, after restoring the screen and the tty modes). Colors are used on
# a color terminal, and not with NO_COLOR or on a monochrome one.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

mkdir -p "$T/src/dir"
: >"$T/src/dir/file"
"$CFSCTL" build "$T/src" "$T/img" >/dev/null || fail "build failed"

expect_exit 1 "$CFSCTL" tui "$T/img"
assert_contains "$T/err" "^cfsctl: tui: standard output is not a terminal"
[ -s "$T/out" ] && fail "wrote to a stdout that is not a terminal"
expect_exit 0 "$CFSCTL" tui --help
assert_contains "$T/out" '^Usage: cfsctl tui \[--basedir DIR\[:DIR\.\.\.\]\] IMAGE$'
expect_exit 2 "$CFSCTL" tui
assert_contains "$T/err" "missing IMAGE"
expect_exit 2 "$CFSCTL" tui "$T/img" extra
expect_exit 2 "$CFSCTL" tui --bogus "$T/img"

# run CMD in the shell; wait for its end, marked by a tag of its own
nrun=0
run() {
	nrun=$((nrun + 1))
	keys "clear; $1; echo R$nrun=\$?" Enter
	wait_for "^R$nrun=[0-9]+$"
}
tty_modes() {
	run "stty -a | tr ';' '\n' | grep -Eo -- '(^| )-?(icanon|echo)( |$)' | tr -d ' ' | sort | tr '\n' ' '; echo"
	assert_screen '^echo icanon ?$'
}

start_shell 80 24
# stdout redirected inside a terminal: still refused, exit 1
run "$CFSCTL tui $T/img >$T/redirected"
assert_screen "^R$nrun=1$"
assert_screen '^cfsctl: tui: standard output is not a terminal'
run "$CFSCTL tui $T/img </dev/null"
assert_screen "^R$nrun=1$"
assert_screen '^cfsctl: tui: standard input is not a terminal'
# an image that cannot be opened: the reason, exit 1, no screen
: >"$T/empty"
run "$CFSCTL tui $T/empty"
assert_screen "^R$nrun=1$"
assert_screen "^cfsctl: tui: '$T/empty': image is empty$"

# q: status 0, the screen and the tty modes as before
tui "$T/img"
quit_tui
tty_modes

# SIGTERM and SIGINT from outside: dies of the signal with the terminal
# restored. (A command killed by SIGINT ends the shell's command line, as
# Ctrl-C does: the status is read with a command of its own.)
for sig in TERM INT; do
	rm -f "$T/pid"
	keys "clear; sh -c 'echo \$\$ >$T/pid; exec $CFSCTL tui $T/img'" Enter
	wait_for 'q quit$'
	kill -s "$sig" "$(cat "$T/pid")" || fail "cannot signal cfsctl tui"
	wait_gone 'q quit$'
	wait_for '^\$ ?$'
	keys "echo STATUS=\$?" Enter
	wait_for '^STATUS=[0-9]+$'
	[ "$sig" = TERM ] && assert_screen '^STATUS=143$' || assert_screen '^STATUS=130$'
	tty_modes
done
# Ctrl-C at the keyboard (the shell then drops the rest of the line)
keys "clear; $CFSCTL tui $T/img" Enter
wait_for 'q quit$'
keys C-c
wait_gone 'q quit$'
wait_for '^\$ ?$'
keys "echo STATUS=\$?" Enter
wait_for '^STATUS=130$'
tty_modes

# color: directories in blue on a color terminal; none with NO_COLOR or on a monochrome terminal (xterm-mono)
tui "$T/img"
tm capture-pane -p -e -t t | grep -q $'\033\\[[0-9;]*34m' || fail "no blue on a color terminal"
quit_tui
for env in "NO_COLOR=1" "TERM=xterm-mono"; do
	keys "clear; $env $CFSCTL tui $T/img; echo EXIT=\$?" Enter
	wait_for 'q quit$'
	tm capture-pane -p -e -t t | grep -q $'\033\\[[0-9;]*3[0-7]m' && fail "colors with $env"
	tm capture-pane -p -e -t t | grep -q $'\033\\[[0-9;]*7m' || fail "no reverse video with $env"
	quit_tui
done
exit 0
