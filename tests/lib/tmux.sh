# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the cfsctl tui tests (after lib/common.sh): a shell in a detached tmux
# session on a private server, keys sent to it and its screen read back.
# Waits poll the screen with a bounded timeout rather than sleeping a fixed
# time; the server is killed when the test exits.

command -v tmux >/dev/null 2>&1 || skip "tmux is not installed"
locale -a 2>/dev/null | grep -qix 'c\.utf-\?8' || skip "no C.UTF-8 locale"

# The server's socket lives in $T, so that nothing is left behind.
TMUX_SOCK=$T/tmux.sock
trap 'tmux -S "$TMUX_SOCK" kill-server 2>/dev/null; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT

tm() { tmux -S "$TMUX_SOCK" -f /dev/null "$@"; }

# start_shell [WIDTH HEIGHT [ENV=VALUE...]]: a plain bash with "$ " as prompt
start_shell() {
	local w=${1:-80} h=${2:-24}
	shift 2 2>/dev/null || shift $#
	tm new-session -d -x "$w" -y "$h" -s t \
		env PS1='$ ' LC_ALL=C.UTF-8 TERM=screen "ASAN_OPTIONS=${ASAN_OPTIONS:-}" "$@" \
		bash --norc --noprofile || fail "tmux cannot start a session"
	wait_for '^\$ ?$'
}

keys() { tm send-keys -t t "$@"; }

screen() { tm capture-pane -p -t t; }

# wait_for REGEX [SECONDS]: until a line of the screen matches
wait_for() {
	local i limit=$(( ${2:-20} * 10 ))
	for ((i = 0; i < limit; i++)); do
		screen | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	echo "--- screen:"; screen; echo "---"
	fail "the screen never showed '$1'"
}

# wait_gone REGEX [SECONDS]: until no line of the screen matches
wait_gone() {
	local i limit=$(( ${2:-20} * 10 ))
	for ((i = 0; i < limit; i++)); do
		screen | grep -qE -- "$1" || return 0
		sleep 0.1
	done
	echo "--- screen:"; screen; echo "---"
	fail "the screen kept showing '$1'"
}

# assert_screen REGEX / refute_screen REGEX: the screen as it is now
assert_screen() { screen | grep -qE -- "$1" || { screen; fail "the screen does not show '$1'"; }; }
refute_screen() { ! screen | grep -qE -- "$1" || { screen; fail "the screen shows '$1'"; }; }

# tui ARGS...: start cfsctl tui in the shell and wait for its first screen
tui() {
	keys "clear; $CFSCTL tui $*; echo EXIT=\$?" Enter
	wait_for 'q quit$'
}

# quit_tui: q, then the shell is back, the browser gone, and the exit status 0
quit_tui() {
	keys q
	wait_for '^EXIT=[0-9]+$'
	assert_screen '^EXIT=0$'
	refute_screen 'q quit$'
}
