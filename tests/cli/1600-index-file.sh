#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The sha256 index is two files, not a symlink per entry (docs/repository.md):
# a build into a repository indexes every object it writes, each entry
# right (the object's sha256); the log is merged into the sorted table once
# it has grown; the repository then costs, beyond its objects and their
# directories, a handful of inodes (at most 2% of the objects); and an
# index removed comes back whole from the next builds (rebuildable).
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3 (tests/lib/index.py)"
umask 022

R=$T/repo
IX=(python3 "$TESTS_DIR/lib/index.py")
# tree DIR N SEED: N files of 100-300 bytes, all different
tree() { "${IX[@]}" tree "$@"; }
tree "$T/a" 1500 a
tree "$T/b" 300 b

expect_exit 0 "$CFSCTL" build --repo "$R" "$T/a" a
"${IX[@]}" verify "$R" > "$T/v" || fail "reading the index"
assert_eq "entries 1500 objects 1500 unindexed 0 wrong 0" "$(cat "$T/v")" "the index after one build"
# 1500 entries are past the merge's threshold: they are in the table
"${IX[@]}" count "$R" > "$T/c"
assert_eq "table 1500 log 0 bad 0" "$(cat "$T/c")" "the index's files after one build"

# a second build, smaller: appended to the log, not merged
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/b" b
assert_eq "table 1500 log 300 bad 0" "$("${IX[@]}" count "$R")" "the index's files after two builds"
assert_eq "entries 1800 objects 1800 unindexed 0 wrong 0" "$("${IX[@]}" verify "$R")" "the index after two builds"

# No symlinks, no directories per entry: the index is its files.
[ -z "$(find "$R/index" -mindepth 1 ! -type f)" ] || fail "the index has more than files: $(find "$R/index" -mindepth 1 ! -type f | head)"
n_index=$(find "$R/index" | wc -l)
[ "$n_index" -le 4 ] || fail "the index costs $n_index inodes"
# The inode count: the repository's entries against its objects.
n_objects=$(find "$R/objects" -type f | wc -l)
n_all=$(find "$R" | wc -l)
n_dirs=$(find "$R/objects" -mindepth 1 -type d | wc -l)
extra=$((n_all - n_objects - n_dirs))
[ $((extra * 50)) -le "$n_objects" ] ||
	fail "the repository has $n_all entries for $n_objects objects (and $n_dirs directories of them): $extra more than 2%"

# Removed, it comes back from the builds that write the objects again.
rm -rf "$R/index"
rm -rf "$R/objects"/*
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/a" a2
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/b" b2
assert_eq "entries 1800 objects 1800 unindexed 0 wrong 0" "$("${IX[@]}" verify "$R")" "the index rebuilt"
echo ok
