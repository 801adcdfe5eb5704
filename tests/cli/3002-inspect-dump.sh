#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl inspect dump: the dump of an image builds back into a byte-identical
# image, for a scanned tree and for a dumpfile with every awkward case
# (escaped names, a literal "-" value, '=' in a key, hardlinks, devices,
# sizes over 4 GiB, a directory spanning several chunks).
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" build --help >/dev/null 2>&1 || skip "cfsctl build is not available"

roundtrip() { # IMAGE
	"$CFSCTL" inspect dump "$1" >"$1.dump" || fail "dump of $1 failed"
	"$CFSCTL" build --from-dump "$1.dump" "$1.again" || fail "build of the dump of $1 failed"
	cmp "$1" "$1.again" || fail "dump of $1 does not build back into the same image"
}

mkdir -p "$T/tree/d/sub"
printf 'x\n' >"$T/tree/a"
ln "$T/tree/a" "$T/tree/d/hardlink"
ln -s 'target with space' "$T/tree/s"
printf 'y' >"$T/tree/$(printf 'new\nline')"
printf 'z' >"$T/tree/d/sub/-"
setfattr -n user.dash -v - "$T/tree/d" 2>/dev/null || true
"$CFSCTL" build "$T/tree" "$T/scanned" || fail "build failed"
roundtrip "$T/scanned"
# the hardlink is an "@" line naming the first path, the inode's fields repeated
assert_contains "$T/scanned.dump" '^/d/hardlink 2 @100644 2 .* /a - [0-9a-f]{64}$'
assert_contains "$T/scanned.dump" '^/new\\nline 1 100644 '

{
	echo '/ 0 40755 2 0 0 0 0.0 - - -'
	echo '/big 6000000000 100600 1 5 6 0 1.000000001 ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e - abcd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e user.a=1'
	echo '/chr 0 20644 1 0 0 2049 0.0 - - - trusted.x\x3dy=\x2d security.z=a\x00b'
	echo '/many 0 40755 2 0 0 0 0.0 - - -'
	for i in $(seq 1 400); do
		echo "/many/name-number-$i-$(printf '%080d' 0) 0 100644 1 0 0 0 0.0 - - - user.a=1"
	done
} >"$T/in.dump"
"$CFSCTL" build --from-dump "$T/in.dump" "$T/fromdump" || fail "build --from-dump failed"
roundtrip "$T/fromdump"
assert_contains "$T/fromdump.dump" '^/big 6000000000 100600 1 5 6 0 1\.1 ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e - abcd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e user\.a=1$'
assert_contains "$T/fromdump.dump" '^/chr 0 20644 1 0 0 2049 0\.0 - - - security\.z=a\\x00b trusted\.x\\x3dy=\\x2d$'
assert_eq 404 "$(wc -l <"$T/fromdump.dump")" "dump lines"
"$CFSCTL" inspect stat "$T/fromdump" /many | grep -qE '^chunks: +([2-9]|[1-9][0-9]+)$' ||
	fail "/many should span several chunks"

# a full disk is an error
if [ -w /dev/full ]; then
	"$CFSCTL" inspect dump "$T/fromdump" >/dev/full 2>"$T/err" && fail "dump to /dev/full succeeded"
	assert_contains "$T/err" '^cfsctl: '
fi
exit 0
