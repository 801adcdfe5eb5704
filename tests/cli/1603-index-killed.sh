#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A writer of the sha256 index killed (SIGKILL, injected by strace at each
# step of writing the index: the log's append, the new table's fsync and
# rename, the log emptied after it) leaves an index that is the old one or
# the new one: readable, no entry torn, every entry right; and the next
# build completes it. A torn entry at the end of the log (a writer killed
# in the middle of its append) is believed by nobody and cut off by the
# next writer; a damaged entry in the middle of the log is skipped.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3 (tests/lib/index.py)"
command -v strace >/dev/null || skip "strace is not installed (make deps)"
umask 022

R=$T/repo
IX=(python3 "$TESTS_DIR/lib/index.py")
# tree DIR N SEED: N files of 100-300 bytes, all different
tree() { "${IX[@]}" tree "$@"; }
# sound WHAT [BAD]: the index readable, no entry torn (but BAD, a pattern,
# damaged on purpose), none wrong
sound() {
	"${IX[@]}" count "$R" > "$T/c" || fail "$1: the index cannot be read"
	grep -qE " bad (${2:-0})\$" "$T/c" || fail "$1: torn entries: $(cat "$T/c")"
	"${IX[@]}" verify "$R" > "$T/v" || fail "$1: the index cannot be read"
	grep -q ' wrong 0$' "$T/v" || fail "$1: wrong entries: $(cat "$T/v")"
}
# killed NAME FILE SYSCALLS: build the tree NAME, killed at the first of
# SYSCALLS on REPO/index/FILE (FILE "": on the directory's descriptor, as
# renameat() is)
killed() {
	tree "$T/$1" 600 "$1"
	# (in a subshell, which says "Killed" to a file, not to the log)
	(env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -o "$T/strace" -P "$R/index${2:+/$2}" -e trace="$3" -e inject="$3":signal=KILL \
		"$CFSCTL" build --repo "$R" "$T/$1" "$1" > "$T/out" 2>&1; exit $?) 2> "$T/shell"
	rc=$?
	[ "$rc" -eq 137 ] || fail "$1: the build was not killed at $3 of index/$2 (exit $rc): $(tail -n 3 "$T/strace")"
	sound "$1: killed at $3 of index/$2"
}

tree "$T/t0" 600 t0
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/t0" t0
assert_eq "table 600 log 0 bad 0" "$("${IX[@]}" count "$R")" "the first build"
before=$(md5sum < "$R/index/table")

killed t1 log pwrite64
assert_eq "table 600 log 0 bad 0" "$("${IX[@]}" count "$R")" "killed before its append: the old index"
killed t2 table.tmp fsync
assert_eq "table 600 log 600 bad 0" "$("${IX[@]}" count "$R")" "killed in the merge, before the rename: the old table and the log"
assert_eq "$before" "$(md5sum < "$R/index/table")" "the table after a merge killed before the rename"
killed t3 "" renameat,renameat2
assert_eq "$before" "$(md5sum < "$R/index/table")" "the table after a merge killed at the rename"
killed t4 log ftruncate
# the rename done, the log not emptied: the new table (t0, and t2 to t4:
# t1 was killed before its append), and a log it holds already
assert_eq "table 2400 log 1800 bad 0" "$("${IX[@]}" count "$R")" "killed after the rename: the new table"

# A torn entry at the end of the log, and a damaged one before it.
# (t5 merges the log of the kills into the table; t5b's 100 stay in the log)
tree "$T/t5" 100 t5
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/t5" t5
tree "$T/t5b" 100 t5b
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/t5b" t5b
assert_eq "table 2500 log 100 bad 0" "$("${IX[@]}" count "$R")" "the index before the damage"
python3 - "$R/index/log" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
assert len(b) >= 160 and len(b) % 80 == 0, len(b)
b[len(b) - 80 + 40] ^= 0xff           # the last whole entry damaged
open(p, "wb").write(bytes(b) + b"\x01" * 37)  # and a torn one after it
PY
n_log=$("${IX[@]}" count "$R" | awk '{ print $4 }')
"${IX[@]}" count "$R" | grep -q ' bad 1$' || fail "the damaged entry is not seen as such: $("${IX[@]}" count "$R")"
tree "$T/t6" 50 t6
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/t6" t6
[ $(($(stat -c %s "$R/index/log") % 80)) -eq 0 ] || fail "the torn entry was not cut off"
"${IX[@]}" count "$R" | grep -q " log $((n_log + 50)) bad 1\$" ||
	fail "the next writer's entries do not follow the log's whole ones: $("${IX[@]}" count "$R")"
sound "after the torn entry" 1

# Builds killed at a moment of chance, then one that completes: all indexed.
for i in 1 2 3; do
	tree "$T/r$i" 1500 "r$i"
	"$CFSCTL" build --repo "$R" "$T/r$i" "r$i" > /dev/null 2>&1 &
	p=$!
	sleep "0.$((RANDOM % 9 + 1))"
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	# the damaged entry, until a merge drops it
	sound "a build killed at random ($i)" "0|1"
done
for t in t1 t2 t3 t4 t5 t5b t6 r1 r2 r3; do
	expect_exit 0 "$CFSCTL" build --repo "$R" "$T/$t" "$t-again"
done
"${IX[@]}" verify "$R" > "$T/v"
grep -q ' unindexed 0 wrong 0$' "$T/v" || fail "the index after the builds again: $(cat "$T/v")"
echo ok
