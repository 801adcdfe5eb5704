#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Concurrent writers of one sha256 index: two builds into one repository at
# once, in rounds, each writing enough objects to merge the log into the
# table, and a partial-pull reader's lookups beside them; no entry is lost
# or torn, and every entry names an object of its sha256.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3 (tests/lib/index.py)"
umask 022

R=$T/repo
IX=(python3 "$TESTS_DIR/lib/index.py")
# tree DIR N SEED: N files of 100-300 bytes, all different
tree() { "${IX[@]}" tree "$@"; }
total=0
for round in 1 2 3 4; do
	tree "$T/a$round" 700 "a$round"
	tree "$T/b$round" $((500 + 100 * round)) "b$round"
	# the same files in both: both builds index them, one entry survives
	cp -r "$T/a$round/d00" "$T/b$round/shared"
	"$CFSCTL" build --repo "$R" "$T/a$round" "a$round" > "$T/a.out" 2>&1 &
	pa=$!
	"$CFSCTL" build --repo "$R" "$T/b$round" "b$round" > "$T/b.out" 2>&1 &
	pb=$!
	wait "$pa" || fail "round $round: the build of a failed: $(cat "$T/a.out")"
	wait "$pb" || fail "round $round: the build of b failed: $(cat "$T/b.out")"
	total=$((total + 700 + 500 + 100 * round))
	"${IX[@]}" count "$R" > "$T/c" || fail "round $round: the index cannot be read"
	grep -q ' bad 0$' "$T/c" || fail "round $round: torn entries: $(cat "$T/c")"
	assert_eq "entries $total objects $total unindexed 0 wrong 0" "$("${IX[@]}" verify "$R")" \
		"round $round: the index after two builds at once"
done
# the rounds merged: most entries are in the table
table=$("${IX[@]}" count "$R" | awk '{ print $2 }')
[ "$table" -ge 1000 ] || fail "the log was never merged: $("${IX[@]}" count "$R")"
[ -z "$(find "$R/index" -name '*.tmp')" ] || fail "a merge left its temporary"
echo ok
