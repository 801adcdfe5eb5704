#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Every --basedir list is split as mount and the kernel module split it:
# '\:' is a colon in a name and '\\' a backslash, and an empty name is a
# usage error naming --basedir rather than dropped. A store whose name holds
# both is given to inspect missing, verify, fetch and tui; mount refuses an
# empty name before it touches anything (mounting itself is the VM tests').
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

mkdir -p "$T/src" "$T/empty"
head -c 5000 /dev/urandom >"$T/src/big"
printf 'present, and longer than the 64 bytes an erofs image would keep itself\n' >"$T/src/text"
"$CFSCTL" build --digest-store="$T/store" "$T/src" "$T/img" || fail "build failed"
[ "$("$CFSCTL" inspect objects "$T/img" | wc -l)" = 2 ] || fail "the image has not 2 objects"

# The name is 'a:b\c': written in a list as 'a\:b\\c'.
odd=$T/'a:b\c'
list="$T/empty:$T/a\\:b\\\\c"
cp -a "$T/store" "$odd"

expect_exit 0 "$CFSCTL" inspect missing --basedir "$list" "$T/img"
[ ! -s "$T/out" ] || { cat "$T/out"; fail "inspect missing: objects in '$odd' are reported missing"; }
expect_exit 0 "$CFSCTL" inspect missing --basedir "$T/empty" "$T/img"
assert_eq 2 "$(wc -l <"$T/out")" "objects missing from an empty basedir"

expect_exit 0 "$CFSCTL" verify --basedir "$list" "$T/img"
expect_exit 1 "$CFSCTL" verify --basedir "$T/empty" "$T/img"

# fetch: the store to fill is the first name, made if missing
mkdir -p "$T/new"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/new/st\\:ore\\\\x" --url "file://$T/store" "$T/img"
"$CFSCTL" inspect objects "$T/img" >"$T/want"
assert_store "$T/new/st:ore\\x" "$T/want"
[ "$(ls "$T/new")" = 'st:ore\x' ] || fail "fetch made '$(ls "$T/new")', not 'st:ore\\x'"
# a later basedir holding everything: nothing to fetch, nothing made
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/new/fresh:$list" --url "file://$T/nowhere" "$T/img"
assert_eq 2 "$(json_get "$T/out" already_present)" "objects present in '$odd'"

# an empty name is an error that names the option, in every verb
for bad in "" ":" "$T/empty:" ":$T/empty" "$T/empty::$odd" "$T/empty:\\:x:"; do
	for cmd in "inspect missing" "verify" "fetch --url file://$T/store" "mount"; do
		case $cmd in
		# no such image: a mount that got past the check could not mount anything
		mount) expect_exit 2 "$CFSCTL" mount --basedir "$bad" "$T/no-such.img" "$T/empty" ;;
		# shellcheck disable=SC2086 # $cmd is a verb and its options
		*) expect_exit 2 "$CFSCTL" $cmd --basedir "$bad" "$T/img" ;;
		esac
		grep -q -- "--basedir" "$T/err" || { cat "$T/err"; fail "$cmd --basedir '$bad': the message does not name --basedir"; }
	done
done

# tui, in a terminal: the objects are present in the odd basedir
. "$TESTS_DIR/lib/tmux.sh"
start_shell 100 24
tui --basedir "'$list'" "$T/img"
keys j
wait_for '^/big +2/3$'
assert_screen "│ object   present in /"
refute_screen 'MISSING'
keys v
wait_for '│ verity   matches \((computed|measured by the kernel)\)$'
quit_tui
keys "clear; $CFSCTL tui --basedir '$T/empty::$odd' $T/img; echo BAD=\$?" Enter
wait_for '^BAD=[0-9]+$'
assert_screen '^BAD=2$'
assert_screen "^cfsctl: tui: --basedir: empty directory name in"
exit 0
