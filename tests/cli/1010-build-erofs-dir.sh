#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --format=erofs from a directory: the image is one that
# fsck.erofs accepts and extracts, a file of at most 64 bytes is stored
# inside it and a larger one is a chunk-based file of holes of the right
# size (its content is the backing file's), hardlinks share an inode, the
# same tree gives the same bytes, --digest-store makes objects only of the
# files the image does not hold (as mkcomposefs: none of 64 bytes or less),
# and the erofs-only options need --format=erofs.
. "$(dirname "$0")/../lib/common.sh"

command -v fsck.erofs >/dev/null || skip "skip: no fsck.erofs (erofs-utils)"

src=$T/src
mkdir -p "$src/d/sub"
printf 'small file\n' >"$src/small"
head -c 65 /dev/zero | tr '\0' x >"$src/just-over"
head -c 10000 /dev/urandom >"$src/big"
ln -s small "$src/link"
ln "$src/big" "$src/d/hard"
mkfifo "$src/fifo"

expect_exit 0 "$CFSCTL" build --format=erofs "$src" "$T/a.img"
expect_exit 0 "$CFSCTL" build --format=erofs --threads=1 "$src" "$T/b.img"
cmp -s "$T/a.img" "$T/b.img" || fail "two builds of one tree differ"
assert_eq "$(od -An -tx4 -j0 -N4 "$T/a.img" | tr -d ' ')" d078629a "composefs magic"

expect_exit 0 fsck.erofs --extract="$T/x" "$T/a.img"
assert_eq "small file" "$(cat "$T/x/small")" "inline content"
# Larger files are chunk-based (layout 4) over holes; a hardlink is one inode.
command -v dump.erofs >/dev/null || skip "skip: no dump.erofs (erofs-utils)"
inode() { dump.erofs --path="$1" "$T/a.img" >"$T/inode" || fail "dump.erofs $1"; }
inode /small
assert_contains "$T/inode" "^Size: 11 "
assert_contains "$T/inode" "Layout: 2 "
inode /just-over
assert_contains "$T/inode" "^Size: 65 "
assert_contains "$T/inode" "Layout: 4 "
inode /big
assert_contains "$T/inode" "Links: 2 +Layout: 4 "
big_nid=$(sed -n 's/^NID: \([0-9]*\).*/\1/p' "$T/inode")
inode /d/hard
assert_eq "$big_nid" "$(sed -n 's/^NID: \([0-9]*\).*/\1/p' "$T/inode")" "hardlink's inode"
assert_eq small "$(readlink "$T/x/link")" "symlink target"
[ -p "$T/x/fifo" ] || fail "fifo not extracted"
[ -c "$T/x/00" ] && [ -c "$T/x/ff" ] || fail "no root whiteouts 00..ff"

# The store: an object for each file over 64 bytes (just-over and big),
# none for small (inline), from a directory and from a tar of it, by
# each way the store reads a file (one thread or several).
objects() { (cd "$1" && find . -type f | sort | sed 's|^\./||' | tr -d '/'); }
want=$(for f in just-over big; do fsverity digest --compact "$src/$f"; done | sort)
for t in 1 4; do
	rm -rf "$T/store"
	expect_exit 0 "$CFSCTL" build --format=erofs --threads=$t --digest-store="$T/store" "$src" "$T/s.img"
	cmp -s "$T/a.img" "$T/s.img" || fail "the image depends on --digest-store"
	assert_eq "$want" "$(objects "$T/store")" "objects of a directory build (threads $t)"
done
if "$CFSCTL" build --help | grep -q -- --from-tar; then
	rm -rf "$T/store"
	tar -C "$src" -cf "$T/src.tar" small just-over big
	expect_exit 0 "$CFSCTL" build --format=erofs --digest-store="$T/store" --from-tar "$T/src.tar" "$T/t.img"
	assert_eq "$want" "$(objects "$T/store")" "objects of a tar build"
fi

expect_exit 2 "$CFSCTL" build --min-version=1 "$src" "$T/c.img"
assert_contains "$T/err" "need --format=erofs"
expect_exit 2 "$CFSCTL" build --format=squashfs "$src" "$T/c.img"
expect_exit 2 "$CFSCTL" build --format=erofs --max-version=2 "$src" "$T/c.img"
[ ! -e "$T/c.img" ] || fail "image written after a usage error"
echo ok
