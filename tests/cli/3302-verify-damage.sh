#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl verify names each kind of structural damage (made on purpose by
# tests/lib/damage.py): errors exit 1, warnings alone exit 0; an image with
# several problems has each reported, not just the first; JSON agrees.
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" verify --help >/dev/null 2>&1 || skip "cfsctl verify is not available"

"$CFSCTL" build --from-dump "$TOP/tests/data/verify/base.dump" "$T/base.img" || fail "build failed"
python3 "$TOP/tests/lib/damage.py" "$T/base.img" "$T/dmg" || fail "damage.py failed"

# file  exit  a line that must be reported
while read -r kind rc pattern; do
	expect_exit "$rc" "$CFSCTL" verify "$T/dmg/$kind.img"
	assert_contains "$T/out" "$pattern"
	"$CFSCTL" verify --json "$T/dmg/$kind.img" >"$T/json"
	python3 - "$T/json" "$kind" "$rc" <<'PY' || fail "JSON of $kind"
import json, sys
d = json.load(open(sys.argv[1]))
kind, rc = sys.argv[2], int(sys.argv[3])
kinds = {p["kind"] for p in d["problems"]}
assert (d["errors"] > 0) == (rc == 1), d
assert kind == "several" or kind in kinds, (kind, kinds)
PY
done <<'TABLE'
unsorted 1 ^error: unsorted: '/a' \(offset [0-9]+\): entry sorts before
duplicate 1 ^error: duplicate: '/a' \(offset [0-9]+\): a second entry of this name
chunk-page 1 ^error: chunk-page: '/' \(offset 4088\): chunk 0 of [0-9]+ bytes crosses a 4096-byte page boundary$
chunk-oversized 1 ^error: chunk-oversized: '/' \(offset [0-9]+\): chunk 0 is 5000 bytes, more than 4096$
xattr-bounds 1 ^error: xattr-bounds: '/a' \(offset [0-9]+\): xattr set: entry 0 .* runs past the set$
cycle 1 ^error: cycle: '/d/f' \(offset [0-9]+\): names directory inode [0-9]+, which contains this entry \('/'\): a cycle$
dir-hardlink 1 ^error: dir-hardlink: '/d' \(offset [0-9]+\): names directory inode [0-9]+, already reached at '/b': a directory hardlink$
d_type 1 ^error: d_type: '/a' \(offset [0-9]+\): entry type 10 does not match the regular file
entry-name 1 ^error: entry-name: '//' \(offset [0-9]+\): invalid name
unreachable 0 ^warning: unreachable: image \(offset 40\): [0-9]+ bytes of the inode section .* belong to no reachable inode
noncanonical 0 ^warning: noncanonical: image \(offset 1\): header: unused byte at offset 1 is not 0$
TABLE

# The directory flagged DIGEST_FROM_PAYLOAD is named too.
expect_exit 0 "$CFSCTL" verify "$T/dmg/noncanonical.img"
assert_contains "$T/out" "^warning: noncanonical: '/' \(offset [0-9]+\): inode [0-9]+: a digest flag on a file that is not regular$"
assert_contains "$T/out" "^verify: OK: 0 errors, 2 warnings$"

# Three problems at once: all three reported, and the walk still saw every inode.
expect_exit 1 "$CFSCTL" verify "$T/dmg/several.img"
assert_contains "$T/out" "^error: chunk-page: "
assert_contains "$T/out" "^error: xattr-bounds: "
assert_contains "$T/out" "^error: unsorted: "
assert_contains "$T/out" "^verify: '$T/dmg/several.img': 6 inodes, 2 directories, 5 entries$"
assert_contains "$T/out" "^verify: FAILED: 3 errors, 0 warnings$"

# The reader rejects what verify calls an error (the two agree on corruption).
for kind in unsorted duplicate chunk-page chunk-oversized xattr-bounds cycle dir-hardlink entry-name; do
	"$CFSCTL" inspect dump "$T/dmg/$kind.img" >/dev/null 2>&1 && fail "inspect dump reads $kind.img"
done
exit 0
