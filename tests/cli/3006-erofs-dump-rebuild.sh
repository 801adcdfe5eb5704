#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Generated dumpfiles (tests/lib/gendump.py: every file type, inline contents of
# 0 to 64 bytes, hardlinks, long and odd names, xattrs of every namespace,
# empty and '-' values, shared and inline ones) built as composefs 1.0
# images: 'inspect dump' of the image must say what the dumpfile said, as
# mkcomposefs reads it (CONTENT and no DIGEST for a small file, the DIGEST of
# a backing file, the xattrs given plus the opaque markers composefs puts
# on the parent of a whiteout, a hardlink line repeating its inode's
# fields), and building that dump must give the same bytes again.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "skip: needs python3 to generate the dumpfiles"

G=$TESTS_DIR/lib/gendump.py
for seed in 1 2 3 4 5 6 7 8; do
	python3 "$G" gen "$seed" "$T/in.dump" "$T/expect" || fail "seed $seed: gendump.py failed"
	"$CFSCTL" build --format=erofs --from-dump "$T/in.dump" "$T/img" ||
		fail "seed $seed: build of the generated dump failed"
	"$CFSCTL" inspect dump "$T/img" >"$T/dump" || fail "seed $seed: dump failed"
	python3 "$G" norm "$T/dump" >"$T/got" || fail "seed $seed: cannot read the dump"
	LC_ALL=C sort -o "$T/expect" "$T/expect"
	LC_ALL=C sort -o "$T/got" "$T/got"
	if ! cmp -s "$T/expect" "$T/got"; then
		diff "$T/expect" "$T/got" | head -n 6 | cut -c1-300 >&2
		fail "seed $seed: the dump does not say what the dumpfile said ($(diff "$T/expect" "$T/got" | grep -c '^<') paths)"
	fi
	"$CFSCTL" build --format=erofs --from-dump "$T/dump" "$T/again" ||
		fail "seed $seed: build of the dump failed"
	cmp "$T/img" "$T/again" || fail "seed $seed: the dump builds a different image"
	"$CFSCTL" inspect dump "$T/again" >"$T/dump2" || fail "seed $seed: dump of the rebuilt image failed"
	cmp -s "$T/dump" "$T/dump2" || fail "seed $seed: the rebuilt image dumps differently"
done
echo "ok (8 generated dumps)"
