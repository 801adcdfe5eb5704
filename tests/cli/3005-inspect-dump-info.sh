#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The dump is an interchange format: for every composefs 1.0.8 test vector
# with a composefs-info dump beside it (info-dumps/NAME.info-dump.gz),
# 'cfsctl build --format=erofs' of the vector (the image mkcomposefs
# writes, byte for byte, as 1008-build-erofs-vectors checks) and then
# 'cfsctl inspect dump' must print exactly what composefs-info dump 1.0.8
# printed for that image: no DIGEST for content in the image, the root's
# overlay.opaque xattrs, xattrs in stored order, empty values as nothing,
# hardlinks with their inode's fields. Building that dump again must give
# the same image. --as-mounted still prints the digest of inline content.
# Entries that share an inode are hardlinks even where its nlink says 1
# (generated seed 2).
. "$(dirname "$0")/../lib/common.sh"

{ composefs_assets && [ -d "$A/info-dumps" ]; } || skip "skip: no composefs-info dumps at $TOP/../shared/data/composefs-assets/info-dumps"

bad=()
n=0
for want in "$A"/info-dumps/*.info-dump.gz; do
	[ -e "$want" ] || continue
	name=$(basename "$want" .info-dump.gz)
	src=
	for f in "$A/$name.dump" "$A/$name.dump.gz" "$A/../$name.dump.gz"; do
		[ -f "$f" ] && { src=$f; break; }
	done
	[ -n "$src" ] || { bad+=("$name (no vector)"); continue; }
	case $src in
	*.gz) gunzip -c "$src" >"$T/in.dump" || fail "$name: cannot decompress" ;;
	*) cp "$src" "$T/in.dump" ;;
	esac
	gunzip -c "$want" >"$T/want" || fail "$name: cannot decompress its info dump"
	v=()
	if [ -f "$A/$name.dump.version" ]; then
		v=(--min-version="$(cat "$A/$name.dump.version")" --max-version="$(cat "$A/$name.dump.version")")
	fi
	case $name in
	no-newline | longlink | honggfuzz-longlink-unterminated) v+=(--lax-dump) ;;
	esac
	rm -f "$T/img" "$T/again"
	"$CFSCTL" build --format=erofs "${v[@]}" --from-dump "$T/in.dump" "$T/img" 2>"$T/err" ||
		{ bad+=("$name (build refused: $(head -n 1 "$T/err"))"); continue; }
	"$CFSCTL" inspect dump "$T/img" >"$T/got" 2>"$T/err" ||
		{ bad+=("$name (dump failed: $(head -n 1 "$T/err"))"); continue; }
	if ! cmp -s "$T/want" "$T/got"; then
		echo "$name: first differing lines (composefs-info, then cfsctl):" >&2
		diff "$T/want" "$T/got" | head -n 4 | cut -c1-300 >&2
		bad+=("$name (dump differs from composefs-info's)")
		continue
	fi
	"$CFSCTL" build --format=erofs "${v[@]}" --from-dump "$T/got" "$T/again" 2>"$T/err" ||
		{ bad+=("$name (build of the dump refused: $(head -n 1 "$T/err"))"); continue; }
	cmp -s "$T/img" "$T/again" || bad+=("$name (the dump builds a different image)")
	n=$((n + 1))
done

if [ "${#bad[@]}" -gt 0 ]; then
	printf 'mismatch: %s\n' "${bad[@]}" >&2
	fail "${#bad[@]} of $((n + ${#bad[@]})) vectors do not dump as composefs-info does"
fi
[ "$n" -ge 10 ] || fail "only $n vectors with a composefs-info dump found"

# Hardlinks are found by inode identity, not by nlink: composefs 1.0.8's
# image of tests/lib/gendump.py's seed 2 has entries that share an inode whose
# nlink says 1, and composefs-info dumps them as hardlinks. The same image
# comes from the seed's dump with every NLINK set to 1 (the writer keeps a
# dump's NLINK, as mkcomposefs does): its dump must name all the seed's
# hardlinks, say what the seed said, and build the same image again.
command -v python3 >/dev/null || fail "python3 is needed to generate seed 2"
G=$TESTS_DIR/lib/gendump.py
python3 "$G" gen 2 "$T/seed.dump" "$T/seed.expect" || fail "seed 2: gendump.py failed"
awk '$3 !~ /^@/ && $3 !~ /^40/ { $4 = 1 } { print }' "$T/seed.dump" >"$T/seed1.dump"
links=$(grep -c '^[^ ]* [0-9]* @' "$T/seed1.dump")
[ "$links" -ge 10 ] || fail "seed 2 has only $links hardlinks"
"$CFSCTL" build --format=erofs --from-dump "$T/seed1.dump" "$T/seed.img" || fail "seed 2: build failed"
"$CFSCTL" inspect dump "$T/seed.img" >"$T/seed.got" || fail "seed 2: dump failed"
got=$(grep -c '^[^ ]* [0-9]* @' "$T/seed.got")
[ "$got" -eq "$links" ] || fail "seed 2: the dump names $got hardlinks, not $links"
awk '$3 ~ /^@/ && $4 != 1 { bad = 1 } END { exit bad }' "$T/seed.got" ||
	fail "seed 2: the image's shared inodes do not say nlink 1"
python3 "$G" norm "$T/seed.got" | LC_ALL=C sort >"$T/seed.norm" || fail "seed 2: cannot read the dump"
LC_ALL=C sort -o "$T/seed.expect" "$T/seed.expect"
if ! cmp -s "$T/seed.expect" "$T/seed.norm"; then
	diff "$T/seed.expect" "$T/seed.norm" | head -n 4 | cut -c1-300 >&2
	fail "seed 2: the dump does not say what the seed said"
fi
"$CFSCTL" build --format=erofs --from-dump "$T/seed.got" "$T/seed.again" || fail "seed 2: build of the dump failed"
cmp -s "$T/seed.img" "$T/seed.again" || fail "seed 2: the dump builds a different image"

# The mounted view is still there on request: the content's digest.
gunzip -c "$A/info-dumps/special.info-dump.gz" >"$T/special.dump" || fail "cannot decompress special"
v=()
[ -f "$A/special.dump.version" ] && v=(--min-version="$(cat "$A/special.dump.version")" --max-version="$(cat "$A/special.dump.version")")
"$CFSCTL" build --format=erofs "${v[@]}" --from-dump "$T/special.dump" "$T/special.img" || fail "build of special failed"
expect_exit 0 "$CFSCTL" inspect dump --as-mounted "$T/special.img"
assert_contains "$T/out" '^/inline 15 100777 1 0 0 0 1633950376\.0 - FOOBAR\\nINAFILE\\n [0-9a-f]{64} user\.foo=bar-2$'
assert_contains "$T/special.dump" '^/inline 15 100777 1 0 0 0 1633950376\.0 - FOOBAR\\nINAFILE\\n - user\.foo=bar-2$'
echo "ok ($n vectors dump as composefs-info does and build back; seed 2's $links hardlinks with nlink 1 found)"
