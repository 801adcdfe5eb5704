#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl verify names each kind of damage to a composefs 1.0 (EROFS) image
# (made on purpose by tests/lib/damage-erofs.py, one structure at a time: the
# superblock, an inode, an inline and a shared xattr, the overlay xattrs, a
# directory block and its entries): exit 1, a line naming the kind, the path
# and the offset, the same in JSON; and the reader refuses what verify
# calls an error in the inode, xattrs or a name. Cuts at every length and
# every byte changed are tests/unit/test_verify_erofs.c.
. "$(dirname "$0")/../lib/common.sh"

"$CFSCTL" build --format=erofs --from-dump "$TOP/tests/data/verify/erofs.dump" "$T/base.img" ||
	fail "build failed"
expect_exit 0 "$CFSCTL" verify "$T/base.img"
assert_contains "$T/out" "^verify: OK: 0 errors, 0 warnings$"
python3 "$TOP/tests/lib/damage-erofs.py" "$T/base.img" "$T/dmg" || fail "damage-erofs.py failed"

# file  kind  a line that must be reported
n=0
while read -r file kind pattern; do
	n=$((n + 1))
	[ -f "$T/dmg/$file.img" ] || fail "damage-erofs.py made no $file.img"
	expect_exit 1 "$CFSCTL" verify "$T/dmg/$file.img"
	assert_contains "$T/out" "^error: $kind: $pattern"
	"$CFSCTL" verify --json "$T/dmg/$file.img" >"$T/json"
	python3 - "$T/json" "$kind" <<'PY' || fail "JSON of $file"
import json, sys
d = json.load(open(sys.argv[1]))
assert not d["ok"] and d["errors"] > 0, d
assert sys.argv[2] in {p["kind"] for p in d["problems"] if p["severity"] == "error"}, d
PY
done <<'TABLE'
superblock-magic superblock image \(offset 1024\): not an EROFS superblock: magic 0x[0-9a-f]{8} at offset 1024
superblock-blocks superblock image \(offset 1024\): superblock at offset 1024: 5 blocks, but the image holds [0-9]+ bytes
inode-mode inode '/a' \(offset [0-9]+\): inode [0-9]+ at offset [0-9]+: mode 0170644 is not a file type
unsorted unsorted '/a0' \(offset [0-9]+\): entry sorts before the one stored ahead of it
duplicate duplicate '/d/f' \(offset [0-9]+\): a second entry of this name in the directory$
entry-name entry-name '//' \(offset [0-9]+\): invalid name
dot dot '/d' \(offset [0-9]+\): '\.' names inode [0-9]+, not [0-9]+$
cycle cycle '/d/f' \(offset [0-9]+\): names directory inode [0-9]+, which contains this entry \('/'\): a cycle$
d_type d_type '/s' \(offset [0-9]+\): entry type 1 does not match the symlink it names$
nid-range inode '/d/f' \(offset [0-9]+\): inode 1099511627776: lies outside the image
redirect-digest redirect-digest '/a' \(offset [0-9]+\): inode [0-9]+: trusted.overlay.redirect '/01/[0-9a-f]{62}' is not the object path of the digest in trusted.overlay.metacopy$
metacopy inode '/a' \(offset [0-9]+\): inode [0-9]+ at offset [0-9]+: trusted.overlay.metacopy of 36 bytes is not a sha256 fs-verity digest$
xattr-index inode '/a' \(offset [0-9]+\): inode [0-9]+: xattr entry at offset [0-9]+ has unknown name index 9$
overlay-xattr overlay-xattr '/d/f' \(offset [0-9]+\): unescaped trusted.overlay.nlink\.\.\.keep, which overlayfs would act on$
shared-xattr inode '/a' \(offset [0-9]+\): inode [0-9]+: xattr entry at offset [0-9]+ runs past its area$
dir-block dir-block '/d' \(offset [0-9]+\): directory block: first name at 13 of [0-9]+ bytes
TABLE
[ $n -eq "$(ls "$T/dmg" | wc -l)" ] || fail "$n kinds checked, $(ls "$T/dmg" | wc -l) images made"

# Where the reader must agree: it refuses these too.
for file in superblock-magic superblock-blocks inode-mode unsorted duplicate entry-name nid-range metacopy xattr-index shared-xattr dir-block; do
	"$CFSCTL" inspect dump "$T/dmg/$file.img" >/dev/null 2>&1 && fail "inspect dump reads $file.img"
done
exit 0
