#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# An index of the earlier form, a pair of symlinks per entry, is migrated
# into the index's files on first use and its symlinks removed: a partial
# pull of B after A into a repository whose index is symlinks reads none of
# the objects it reuses (the entries and their inode signatures came
# across), leaves no symlink under REPO/index, and its image is the full
# pull's. A directory of the earlier form with a stray file in it is
# removed too, and a symlink whose target is no entry is skipped.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"
command -v strace >/dev/null || skip "strace is not installed (make deps)"

push_images
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/want-store" "$REG/t/gzip:B" "$T/want.B"
R=$T/repo
IX=(python3 "$TESTS_DIR/lib/index.py")

expect_exit 0 "$CFSCTL" pull --plain-http --repo "$R" "$REG/t/chunked:A" a
"${IX[@]}" dump "$R" > "$T/before"
n=$(wc -l < "$T/before")
[ "$n" -gt 10 ] || fail "the pull of A indexed $n files"
"${IX[@]}" legacy "$R"
[ "$(find "$R/index" -type l | wc -l)" -eq $((2 * n)) ] || fail "tests/lib/index.py legacy made no symlink index"
[ ! -e "$R/index/table" ] && [ ! -e "$R/index/log" ] || fail "tests/lib/index.py legacy left the index's files"
# what an older cfsctl could leave: a temporary, and a symlink that is no entry
ln -s nothing "$R/index/sha256/00/.tmp-1-2"
ln -s not-base64 "$R/index/sha256/00/$(printf '%062d' 0)"

find "$R/objects" -type f -size +64c -printf '%p>\n' > "$T/objects"
expect_exit 0 env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
	strace -f -y -e trace=read -o "$T/strace" \
	"$CFSCTL" pull --plain-http --json --repo "$R" "$REG/t/chunked:B" b
cmp -s "$T/want.B" "$R/images/$(readlink "$R/images/refs/b" | sed 's|.*/||')" ||
	fail "the partial pull of B after the migration differs from the full pull"
grep -q '"bytes_reused":[1-9]' "$T/out" || fail "B reused nothing after the migration: $(cat "$T/out")"
reads=$(grep -F -c -f "$T/objects" "$T/strace")
[ "$reads" -eq 0 ] || fail "B read $reads times from objects whose entries were migrated with their signatures"
[ -z "$(find "$R/index" -mindepth 1 ! -type f)" ] ||
	fail "the migration left symlinks or directories: $(find "$R/index" -mindepth 1 ! -type f | head -n 3)"
# every entry of A is there, signature and all (B's pull adds its own)
"${IX[@]}" dump "$R" > "$T/after"
missing=$(grep -v -x -F -f "$T/after" "$T/before" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing entries of the symlink index were lost: $(grep -v -x -F -f "$T/after" "$T/before" | head -n 2)"
assert_eq "unindexed 0 wrong 0" "$("${IX[@]}" verify "$R" | sed 's/.*\(unindexed\)/\1/')" "the migrated index against the objects"
echo ok
