#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl inspect objects and missing: backing paths sorted and unique, and
# the ones absent from every base directory (exit 0 either way).
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" build --help >/dev/null 2>&1 || skip "cfsctl build is not available"

mkdir -p "$T/tree/d"
printf 'one\n' >"$T/tree/a"
printf 'one\n' >"$T/tree/d/a-again"
printf 'two\n' >"$T/tree/b"
printf 'three\n' >"$T/tree/d/c"
: >"$T/tree/empty"
"$CFSCTL" build --digest-store="$T/store" "$T/tree" "$T/img" || fail "build failed"

expect_exit 0 "$CFSCTL" inspect objects "$T/img"
assert_eq 3 "$(wc -l <"$T/out")" "distinct objects"
sort -c "$T/out" || fail "objects are not sorted"
while read -r obj; do
	[[ $obj =~ ^[0-9a-f]{2}/[0-9a-f]{62}$ ]] || fail "object path '$obj'"
	[ -f "$T/store/$obj" ] || fail "object $obj is not in the store"
done <"$T/out"
cp "$T/out" "$T/objects"

expect_exit 0 "$CFSCTL" inspect missing --basedir "$T/store" "$T/img"
assert_eq "" "$(cat "$T/out")" "missing with a full store"
first=$(head -n 1 "$T/objects")
mkdir -p "$T/other/${first%%/*}"
mv "$T/store/$first" "$T/other/$first"
expect_exit 0 "$CFSCTL" inspect missing --basedir "$T/store" "$T/img"
assert_eq "$first" "$(cat "$T/out")" "missing after removing one object"
expect_exit 0 "$CFSCTL" inspect missing --basedir "$T/store:$T/other" "$T/img"
assert_eq "" "$(cat "$T/out")" "missing with two base directories"

expect_exit 2 "$CFSCTL" inspect missing "$T/img"
expect_exit 1 "$CFSCTL" inspect missing --basedir "$T/nodir" "$T/img"
assert_contains "$T/err" "^cfsctl: inspect: opening basedir '$T/nodir': No such file or directory$"

# The kernel's rule: the first basedir holding the path decides, so a
# truncated copy there hides the good one behind it.
second=$(sed -n 2p "$T/objects")
mkdir -p "$T/bad/${second%%/*}"
head -c 1 "$T/store/$second" >"$T/bad/$second"
expect_exit 0 "$CFSCTL" inspect missing --basedir "$T/bad:$T/store:$T/other" "$T/img"
assert_eq "$second" "$(cat "$T/out")" "an object of the wrong size in the first basedir"
exit 0
