#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build is reproducible: the same tree gives a byte-identical image
# with 1 or 4 threads, and a copy of the tree whose directories list their
# entries in another order (readdir order) gives the same image too. The
# copy lives on tmpfs where it can, which lists entries newest first, where
# ext4 lists them in hash order.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"

make_tree "$T/a" nosparse
# The copy: top-level entries created in reverse order, in one cp so that
# hardlinks between them survive.
b=$T/b
if shm=$(mktemp -d /dev/shm/cfs-test.XXXXXX 2>/dev/null); then
	trap 'rm -rf "$shm"; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
	b=$shm/b
fi
mkdir "$b"
(cd "$T/a" && find . -mindepth 1 -maxdepth 1 -print0 | sort -rz | xargs -0 cp -a -t "$b")
# Only the roots' own times differ now.
touch -d @1000000000 "$T/a" "$b"
[ "$(ls -U "$T/a" | head -n 3)" != "$(ls -U "$b" | head -n 3)" ] ||
	echo "note: readdir order of the two trees is the same here"
[ "$(ls -U "$T/a/many" | head -n 3)" != "$(ls -U "$b/many" | head -n 3)" ] ||
	echo "note: readdir order of the two 'many' directories is the same here"

expect_exit 0 "$CFSCTL" build --threads=1 "$T/a" "$T/a1.img"
expect_exit 0 "$CFSCTL" build --threads=4 "$T/a" "$T/a4.img"
expect_exit 0 "$CFSCTL" build --threads=2 "$b" "$T/b2.img"
cmp "$T/a1.img" "$T/a4.img" || fail "--threads=1 and --threads=4 differ"
cmp "$T/a1.img" "$T/b2.img" || fail "readdir order changes the image"

# A change in the metadata does change it (the comparison is not vacuous).
touch -h -d @2000000000 "$b/symlink"
expect_exit 0 "$CFSCTL" build "$b" "$T/b3.img"
! cmp -s "$T/a1.img" "$T/b3.img" || fail "an mtime change did not change the image"
# ... unless mtimes are not recorded.
expect_exit 0 "$CFSCTL" build --use-epoch "$T/a" "$T/ae.img"
expect_exit 0 "$CFSCTL" build --use-epoch "$b" "$T/be.img"
cmp "$T/ae.img" "$T/be.img" || fail "--use-epoch images differ"
! cmp -s "$T/ae.img" "$T/a1.img" || fail "--use-epoch changed nothing"
echo "ok"
