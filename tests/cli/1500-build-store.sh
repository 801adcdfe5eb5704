#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --digest-store: every object is named by the fs-verity digest
# of its content (checked with the fsverity tool), every file's content is
# there, identical contents are stored once, objects already present are not
# rewritten, no temporary file is left, sparse files stay sparse, the image
# does not depend on the store, a build of more new objects than it may hold
# open names its temporaries, and --require-verity fails where the store's
# filesystem has no fs-verity (tmpfs).
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"
command -v fsverity >/dev/null || skip "needs the fsverity tool (Debian package fsverity)"
command -v strace >/dev/null || skip "needs strace (Debian package strace), to count a build's batches"

make_tree "$T/src" nosparse
expect_exit 0 "$CFSCTL" build --digest-store="$T/store" "$T/src" "$T/a.img"

# Each object's name is its digest; nothing else is in the store.
n=0
while IFS= read -r -d '' obj; do
	rel=${obj#"$T/store/"}
	[[ $rel =~ ^[0-9a-f]{2}/[0-9a-f]{62}$ ]] || fail "unexpected file in the store: $rel"
	n=$((n + 1))
	got=$(fsverity digest "$obj" | cut -d' ' -f1)
	assert_eq "sha256:${rel/\//}" "$got" "digest of object $rel"
done < <(find "$T/store" -mindepth 1 -not -type d -print0)

# Every regular file's content is there (under its digest), identical
# contents once: file/hardlink/same-content share one object.
want=0
declare -A seen
while IFS= read -r -d '' f; do
	dig=$(fsverity digest --compact "$f")
	obj=$T/store/${dig:0:2}/${dig:2}
	[ -f "$obj" ] || fail "no object for $f"
	cmp -s "$f" "$obj" || fail "object of $f has other content"
	[ -z "${seen[$dig]:-}" ] && want=$((want + 1))
	seen[$dig]=1
done < <(find "$T/src" -type f -size +0 -print0)
assert_eq "$want" "$n" "number of objects"
[ "$want" -ge 8 ] || fail "too few distinct contents ($want)"

# A sparse file's object is as sparse (and its digest right).
mkdir "$T/sparse"
truncate -s 5G "$T/sparse/big"
printf 'end' >>"$T/sparse/big"
expect_exit 0 "$CFSCTL" build --digest-store="$T/sstore" "$T/sparse" "$T/sparse.img"
obj=$(find "$T/sstore" -type f)
assert_eq "$((5 * 1024 * 1024 * 1024 + 3))" "$(stat -c %s "$obj")" "size of the sparse object"
[ "$(du -k "$obj" | cut -f1)" -lt 1024 ] || fail "sparse object is not sparse"
cmp -s -n 8192 -i 5368709000 "$obj" "$T/sparse/big" || fail "sparse object has other content"

# No temporary files anywhere.
[ -z "$(find "$T/store" -name '.*')" ] || fail "temporary files left in the store"
[ -z "$(find "$T" -maxdepth 1 -name '.*')" ] || fail "temporary image left"

# A second build leaves existing objects alone (same inode, same mtime).
obj=$(find "$T/store" -type f -size -2k | head -n 1)
before=$(stat -c '%i %Y.%y' "$obj")
sleep 1.1
expect_exit 0 "$CFSCTL" build --digest-store="$T/store" --threads=3 "$T/src" "$T/b.img"
assert_eq "$before" "$(stat -c '%i %Y.%y' "$obj")" "existing object rewritten"
cmp "$T/a.img" "$T/b.img" || fail "rebuild gives another image"

# An object that went missing is written again.
rm "$obj"
expect_exit 0 "$CFSCTL" build --digest-store="$T/store" "$T/src" "$T/c.img"
[ -f "$obj" ] || fail "missing object not restored"

# The image is the same without a store: it records digests either way.
expect_exit 0 "$CFSCTL" build "$T/src" "$T/nostore.img"
cmp "$T/a.img" "$T/nostore.img" || fail "image depends on --digest-store"

# More new objects than the build may hold open: as the image is written
# before any object is published, it names its temporaries (which hold no
# file open) and publishes them all at once (two syncfs), and the store
# and image are the same; so with open files for fewer than a batch's least.
mkdir "$T/many"
for i in $(seq 1 600); do echo "many $i" >"$T/many/f$i"; done
expect_exit 0 "$CFSCTL" build --digest-store="$T/many-ref" "$T/many" "$T/many.img"
for lim in 400 300; do
	# LeakSanitizer cannot work under strace (the other builds check leaks).
	(ulimit -n "$lim" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		exec strace -f -qq -e trace=syncfs -o "$T/strace-$lim" \
		"$CFSCTL" build --digest-store="$T/many-$lim" "$T/many" "$T/many-$lim.img") ||
		fail "build with $lim open files at most failed"
	cmp "$T/many.img" "$T/many-$lim.img" || fail "image built in batches differs"
	check_store "$T/many-$lim"
	assert_eq 600 "$n_objects" "objects built with $lim open files at most"
done
# 400 - 256 spare = 144 a batch, fewer than 600: named. 300 leaves less than 64: named.
assert_eq 2 "$(grep -c 'syncfs(' "$T/strace-400")" "syncfs calls of a build of more objects than a batch"
assert_eq 2 "$(grep -c 'syncfs(' "$T/strace-300")" "syncfs calls of a build with named temporaries"

# --require-verity: tmpfs has no fs-verity, so the build fails, leaving no image.
shm=$(mktemp -d /dev/shm/cfs-test.XXXXXX) || skip "no /dev/shm"
trap 'rm -rf "$shm"; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
[ "$(stat -f -c %T "$shm")" = tmpfs ] || skip "/dev/shm is not tmpfs"
expect_exit 1 "$CFSCTL" build --require-verity --digest-store="$shm/store" \
	"$TOP/examples/tree" "$T/verity.img"
assert_contains "$T/err" "fs-verity"
[ ! -e "$T/verity.img" ] || fail "image written despite --require-verity failure"
[ -z "$(find "$shm/store" -type f)" ] || fail "objects without verity got final names"
# Without --require-verity the same store is fine.
expect_exit 0 "$CFSCTL" build --digest-store="$shm/store" "$TOP/examples/tree" "$T/shm.img"
[ "$(find "$shm/store" -type f | wc -l)" -eq 4 ] || fail "objects missing in tmpfs store"
echo "ok"
