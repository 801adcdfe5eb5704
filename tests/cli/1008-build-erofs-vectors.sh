#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# composefs 1.0.8's test vectors: for every NAME.dump[.gz] with a
# NAME.dump[.gz].sha256 beside it, 'cfsctl build --format=erofs --from-dump'
# must write the image whose sha256 mkcomposefs wrote (with --min-version and
# --max-version from NAME.dump.version when there is one, and --lax-dump for
# the three that the reference reads without CFS_PARSE_STRICT); the 64k-file
# ../cs9-x86_64-developer.dump.gz too. Every should-fail-*.dump must be
# refused with exit 1, no image, and a message naming its line. Every
# vector that does not match is listed, and any one fails the test.
. "$(dirname "$0")/../lib/common.sh"

composefs_assets || skip "skip: no composefs test assets at $TOP/../shared/data/composefs-assets"

mismatched=()
n=0
check() { # check NAME DUMP SHA256-FILE
	local name=$1 dump=$2 want got v=()
	want=$(cut -d' ' -f1 "$3")
	if [ -f "$A/$name.version" ]; then
		v=(--min-version="$(cat "$A/$name.version")" --max-version="$(cat "$A/$name.version")")
	fi
	case $name in
	no-newline.dump | longlink.dump | honggfuzz-longlink-unterminated.dump) v+=(--lax-dump) ;;
	esac
	rm -f "$T/img"
	if ! "$CFSCTL" build --format=erofs "${v[@]}" --from-dump "$dump" "$T/img" 2>"$T/err"; then
		mismatched+=("$name (refused: $(head -n 1 "$T/err"))")
		return
	fi
	got=$(sha256sum <"$T/img" | cut -d' ' -f1)
	[ "$got" = "$want" ] || mismatched+=("$name (sha256 $got, expected $want)")
	n=$((n + 1))
}

for sum in "$A"/*.dump.sha256 "$A"/*.dump.gz.sha256; do
	[ -e "$sum" ] || continue
	name=$(basename "$sum" .sha256)
	case $name in
	*.gz)
		dump=$A/$name
		[ -f "$dump" ] || dump=$A/../$name # the 64k-file one lives a level up
		[ -f "$dump" ] || continue # upstream has no dump for some sums either
		gunzip -c "$dump" >"$T/dump" || fail "$name: cannot decompress"
		check "$name" "$T/dump" "$sum"
		;;
	*)
		[ -f "$A/$name" ] || continue
		check "$name" "$A/$name" "$sum"
		;;
	esac
done
[ "$n" -ge 10 ] || [ "${#mismatched[@]}" -gt 0 ] || fail "only $n vectors found"

refused=0
for dump in "$A"/should-fail-*.dump; do
	name=$(basename "$dump")
	rm -f "$T/img"
	expect_exit 1 "$CFSCTL" build --format=erofs --from-dump "$dump" "$T/img"
	grep -qE -- "^cfsctl: .*$name:[0-9]+: " "$T/err" ||
		{ cat "$T/err"; fail "$name: the message names no line"; }
	[ ! -e "$T/img" ] || fail "$name: image written"
	refused=$((refused + 1))
done
[ "$refused" -ge 10 ] || fail "only $refused should-fail dumps"

if [ "${#mismatched[@]}" -gt 0 ]; then
	printf 'mismatch: %s\n' "${mismatched[@]}" >&2
	fail "${#mismatched[@]} of $((n + ${#mismatched[@]})) vectors do not match"
fi
echo "ok ($n vectors match, $refused dumps refused)"
