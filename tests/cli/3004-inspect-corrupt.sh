#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Corrupt images: empty, short, not an image, truncated at every length and
# with every byte changed. inspect must exit 1 with "cfsctl: inspect:
# 'IMAGE': <reason>" (naming the offset where the reader can), or read the
# image if the change happens to be harmless; it must never crash.
# test: early (it tries thousands of damaged images)
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" build --help >/dev/null 2>&1 || skip "cfsctl build is not available"

: >"$T/empty"
expect_exit 1 "$CFSCTL" inspect "$T/empty"
assert_contains "$T/err" "^cfsctl: inspect: '$T/empty': image is empty$"
printf 'short' >"$T/short"
expect_exit 1 "$CFSCTL" inspect dump "$T/short"
assert_contains "$T/err" "^cfsctl: inspect: '$T/short': image is too short"
head -c 4096 /dev/zero >"$T/zeros"
expect_exit 1 "$CFSCTL" inspect ls "$T/zeros"
assert_contains "$T/err" "^cfsctl: inspect: '$T/zeros': not a composefs image: magic 0x00000000 at offset 4"
expect_exit 1 "$CFSCTL" inspect "$T"
assert_contains "$T/err" "^cfsctl: inspect: '$T': "

# A small image with a subdirectory, a symlink, a hardlink and xattrs.
cat >"$T/in.dump" <<'DUMP'
/ 0 40755 2 0 0 0 0.0 - - - user.a=1
/d 0 40755 2 1 2 0 5.5 - - - user.a=1
/d/f 3 100644 2 0 0 0 0.0 ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e - abcd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e
/d/g 3 @100644 2 0 0 0 0.0 /d/f - -
/s 0 120777 1 0 0 0 0.0 d/f - -
DUMP
"$CFSCTL" build --from-dump "$T/in.dump" "$T/img" || fail "build failed"
# The zeros that pad the image to whole sectors hold nothing: cut them,
# so that every truncation below cuts something the image needs.
truncate -s "$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().rstrip(b"\0")))' "$T/img")" "$T/img"
"$CFSCTL" inspect dump "$T/img" >"$T/good.dump" || fail "the intact image does not read"
size=$(stat -c %s "$T/img")

python3 - "$T/img" "$T/v" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
os.mkdir(sys.argv[2])
for n in range(len(data)):
    open(f"{sys.argv[2]}/trunc-{n}", "wb").write(data[:n])
    for name, val in (("ff", 0xff), ("00", 0), ("inc", (data[n] + 1) & 0xff)):
        if val != data[n]:
            open(f"{sys.argv[2]}/{name}-{n}", "wb").write(data[:n] + bytes([val]) + data[n + 1:])
PY
k=$(sample_variants "$T/v")

bad=0 read_ok=0 named_offset=0 total=0
for f in "$T"/v/*; do
	total=$((total + 1))
	"$CFSCTL" inspect dump "$f" >"$T/out" 2>"$T/err"
	rc=$?
	case $rc in
	0) read_ok=$((read_ok + 1)) ;;
	1)
		grep -q "^cfsctl: inspect: '$f': " "$T/err" || { echo "$f: bad message: $(cat "$T/err")"; bad=$((bad + 1)); }
		grep -q 'offset' "$T/err" && named_offset=$((named_offset + 1))
		;;
	*) echo "$f: exit $rc: $(head -c 300 "$T/err")"; bad=$((bad + 1)) ;;
	esac
	case $f in */trunc-*)
		[ $rc -eq 1 ] || { echo "$f: a truncated image read"; bad=$((bad + 1)); } ;;
	esac
done
echo "$total variants of a $size-byte image: $read_ok read, $((total - read_ok)) rejected ($named_offset naming an offset)"
[ $bad -eq 0 ] || fail "$bad variants misbehaved"
[ $total -gt $((size * 3 / k)) ] || fail "only $total variants"
# Nearly every rejection names where the problem is ("image is empty"/"too short" do not).
[ $named_offset -ge $((total - read_ok - 45)) ] || fail "only $named_offset rejections name an offset"

# Every subcommand survives a corrupt image too.
for f in "$T"/v/ff-*; do
	for sub in "" ls objects; do
		"$CFSCTL" inspect $sub "$f" >/dev/null 2>&1
		rc=$?
		[ $rc -le 1 ] || fail "inspect $sub $f exited $rc"
	done
	"$CFSCTL" inspect stat "$f" /d/f >/dev/null 2>&1
	[ $? -le 1 ] || fail "inspect stat $f crashed"
done
exit 0
