#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Reading composefs 1.0 (EROFS) images: inspect, ls, stat, dump and objects
# work on one built from a tree; the dump of an image built from a dumpfile
# (the reference dumps of composefs, when present) builds back into the same
# bytes; diff sees no difference between the v1 and the EROFS image of one
# tree; truncated and damaged images are refused with exit 1, never a crash.
# test: early (it tries thousands of damaged images)
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
"$CFSCTL" build --help >/dev/null 2>&1 || skip "cfsctl build is not available"

# ---- a tree with every file type ----
make_tree "$T/tree" nosparse 2>/dev/null || true
printf 'x%.0s' $(seq 100) >"$T/tree/outside" # too big to go in the image
"$CFSCTL" build --format=erofs "$T/tree" "$T/e.img" || fail "erofs build failed"
"$CFSCTL" build "$T/tree" "$T/v1.img" || fail "v1 build failed"

expect_exit 0 "$CFSCTL" inspect "$T/e.img"
assert_contains "$T/out" '^inodes: '
assert_contains "$T/out" '^format: +composefs 1\.0 \(EROFS\), composefs_version [01]$'
expect_exit 0 "$CFSCTL" inspect --json "$T/e.img"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["format"] == "erofs" and s["version"] in (0, 1), s' "$T/out" ||
	fail "summary JSON of an EROFS image: $(head -c 300 "$T/out")"
expect_exit 0 "$CFSCTL" inspect --json "$T/v1.img"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1])); assert s["format"] == "composefs-v1" and s["version"] == 1, s' "$T/out" ||
	fail "summary JSON of a v1 image: $(head -c 300 "$T/out")"
expect_exit 0 "$CFSCTL" inspect ls "$T/e.img" /
assert_contains "$T/out" ' symlink -> file$'
assert_contains "$T/out" ' many$'
# the root's whiteouts for lower layers are not entries of the tree
grep -qE ' (00|ff)$' "$T/out" && fail "the root lists the whiteouts mkcomposefs adds"
expect_exit 0 "$CFSCTL" inspect stat "$T/e.img" /file
assert_contains "$T/out" '^size: +6$'
assert_contains "$T/out" 'user.color=blue'
expect_exit 0 "$CFSCTL" inspect dump "$T/e.img"
cp "$T/out" "$T/e.dump"
# small files are in the image: CONTENT, no backing path, no DIGEST (that
# would ask for a metacopy xattr); mounted, the digest of the content
assert_contains "$T/e.dump" '^/file 6 100644 3 1234 5678 0 981173106.123456789 - hello\\n - user.color=blue$'
expect_exit 0 "$CFSCTL" inspect dump --as-mounted "$T/e.img"
assert_contains "$T/out" '^/file 6 100644 3 1234 5678 0 981173106.123456789 - hello\\n [0-9a-f]{64} user.color=blue$'
# a larger one is an object named by its digest
assert_contains "$T/e.dump" '^/outside 100 100644 1 0 0 0 [0-9.]+ ([0-9a-f]{2})/[0-9a-f]{62} - [0-9a-f]{64}$'
if [ "$(id -u)" = 0 ]; then
	# escaped overlay xattrs and whiteouts read back as they were
	assert_contains "$T/e.dump" '^/sticky [0-9]+ 41777 2 .* trusted.overlay.opaque=y$'
	assert_contains "$T/e.dump" '^/whiteout 0 20644 1 0 0 0 '
	grep -q 'overlay.whiteout\|trusted.overlay.metacopy\|trusted.overlay.redirect' "$T/e.dump" &&
		fail "composefs-internal xattrs are listed"
fi
expect_exit 0 "$CFSCTL" inspect objects "$T/e.img"
assert_eq 1 "$(wc -l <"$T/out")" "objects of the tree"
expect_exit 0 "$CFSCTL" diff "$T/v1.img" "$T/e.img"
[ -s "$T/out" ] && { cat "$T/out"; fail "diff of the v1 and EROFS images of one tree is not empty"; }
expect_exit 0 "$CFSCTL" verify "$T/e.img"
assert_contains "$T/out" '^verify: OK: 0 errors, 0 warnings$'

# build --from-dump of the dump: the same tree, so the same dump again
"$CFSCTL" build --format=erofs --from-dump "$T/e.dump" "$T/e2.img" || fail "build of the dump failed"
"$CFSCTL" inspect dump "$T/e2.img" >"$T/e2.dump" || fail "dump of the rebuilt image failed"
cmp "$T/e.dump" "$T/e2.dump" || fail "the rebuilt image dumps differently"
# from a dumpfile, the round trip gives the same bytes
"$CFSCTL" build --format=erofs --from-dump "$T/e2.dump" "$T/e3.img" || fail "build failed"
cmp "$T/e2.img" "$T/e3.img" || fail "dump of an image built from a dump does not build back"

# ---- the reference dumps of composefs ----
assets=
for a in "$TOP/../shared/data/composefs-assets" "$TOP/../../shared/data/composefs-assets"; do
	[ -d "$a" ] && { assets=$a; break; }
done
if [ -z "$assets" ]; then
	echo "skip: the composefs reference dumps (shared/data/composefs-assets) are absent"
else
	n=0
	for sum in "$assets"/*.sha256; do
		src=${sum%.sha256}
		name=$(basename "$src")
		[ -e "$src" ] || continue
		case $src in
		*.gz) gzip -dc "$src" >"$T/$name.in" ;;
		*) cp "$src" "$T/$name.in" ;;
		esac
		"$CFSCTL" build --format=erofs --from-dump "$T/$name.in" "$T/$name.img" 2>/dev/null ||
			continue # a dump the writer refuses is 1003-build-bad-dumps' business
		want=$(cut -d' ' -f1 "$sum")
		got=$(sha256sum <"$T/$name.img" | cut -d' ' -f1)
		[ "$want" = "$got" ] || continue # only images the writer matches
		"$CFSCTL" inspect dump "$T/$name.img" >"$T/$name.dump" || fail "$name: dump failed"
		"$CFSCTL" build --format=erofs --from-dump "$T/$name.dump" "$T/$name.again" ||
			fail "$name: build of its dump failed"
		got=$(sha256sum <"$T/$name.again" | cut -d' ' -f1)
		assert_eq "$want" "$got" "$name: sha256 after dump and build"
		"$CFSCTL" inspect "$T/$name.img" >/dev/null || fail "$name: inspect failed"
		"$CFSCTL" inspect objects "$T/$name.img" >/dev/null || fail "$name: objects failed"
		n=$((n + 1))
	done
	echo "$n reference dumps round-trip through EROFS images"
	[ $n -ge 5 ] || fail "only $n reference dumps round-trip"
fi

# ---- corrupt images ----
cat >"$T/small.dump" <<'DUMP'
/ 0 40755 2 0 0 0 0.0 - - - user.a=1
/d 0 40755 2 1 2 0 5.5 - - - trusted.overlay.x=1
/d/f 3 100644 2 0 0 0 0.0 ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e - abcd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e
/d/g 3 @100644 2 0 0 0 0.0 /d/f - -
/d/i 5 100644 1 0 0 0 0.0 - abcde -
/s 0 120777 1 0 0 0 0.0 d/f - -
/w 0 20000 1 0 0 0 0.0 - - -
DUMP
"$CFSCTL" build --format=erofs --from-dump "$T/small.dump" "$T/small.img" || fail "build failed"
"$CFSCTL" inspect dump "$T/small.img" >/dev/null || fail "the intact image does not read"
python3 - "$T/small.img" "$T/v" <<'PY'
import os, random, sys
data = open(sys.argv[1], "rb").read()
os.mkdir(sys.argv[2])
rnd = random.Random(47)
# the header and superblock byte by byte, the rest sampled
offsets = list(range(0, 32)) + list(range(1024, 1152))
offsets += rnd.sample(range(1152, len(data)), min(250, len(data) - 1152))
for n in sorted(set(rnd.sample(range(len(data)), 100) + [0, 1, 4, 1024, 1152, len(data) - 1])):
    open(f"{sys.argv[2]}/trunc-{n}", "wb").write(data[:n])
for n in offsets:
    for name, val in (("ff", 0xff), ("inc", (data[n] + 1) & 0xff)):
        if val != data[n]:
            open(f"{sys.argv[2]}/{name}-{n}", "wb").write(data[:n] + bytes([val]) + data[n + 1:])
PY
sample_variants "$T/v" >/dev/null
bad=0 total=0
for f in "$T"/v/*; do
	total=$((total + 1))
	"$CFSCTL" inspect dump "$f" >/dev/null 2>"$T/err"
	rc=$?
	case $rc in
	0) ;;
	1) grep -q "^cfsctl: inspect: '$f': " "$T/err" || { echo "$f: bad message: $(cat "$T/err")"; bad=$((bad + 1)); } ;;
	*) echo "$f: exit $rc: $(head -c 300 "$T/err")"; bad=$((bad + 1)) ;;
	esac
	case $f in */trunc-*)
		[ $rc -eq 1 ] || { echo "$f: a truncated image read"; bad=$((bad + 1)); } ;;
	esac
	case $f in */ff-*)
		for sub in "" ls objects; do
			"$CFSCTL" inspect $sub "$f" >/dev/null 2>&1
			[ $? -le 1 ] || { echo "inspect $sub $f crashed"; bad=$((bad + 1)); }
		done
		"$CFSCTL" inspect stat "$f" /d/i >/dev/null 2>&1
		[ $? -le 1 ] || { echo "inspect stat $f crashed"; bad=$((bad + 1)); }
		"$CFSCTL" diff "$T/small.img" "$f" >/dev/null 2>&1
		[ $? -le 2 ] || { echo "diff with $f crashed"; bad=$((bad + 1)); } # 2: trouble
		;;
	esac
done
echo "$total corrupt variants of an EROFS image"
[ $bad -eq 0 ] || fail "$bad variants misbehaved"
exit 0
