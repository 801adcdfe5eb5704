#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl verify of composefs 1.0 (EROFS) images that are right: every
# image the reference vectors make, and one built from a directory with
# every file type, xattrs and a hardlink, verify with no error and no
# warning; with --basedir the store the build filled passes, and a changed
# or removed object is an error naming it and every path using it.
. "$(dirname "$0")/../lib/common.sh"

composefs_assets || true # the vectors below only when present

# clean [OPTIONS] IMAGE: exit 0 and no problem, but that objects sit where
# fs-verity is missing (it depends on the filesystem the test runs on)
clean() {
	expect_exit 0 "$CFSCTL" verify "$@"
	grep -E '^(error|warning):' "$T/out" | grep -qv '^warning: no-verity: basedir' &&
		{ cat "$T/out"; fail "problems reported on $*"; }
	assert_contains "$T/out" "^verify: OK: 0 errors, [0-9]+ warnings?$"
}

n=0
if [ -d "$A" ]; then
	for sum in "$A"/*.sha256; do
		name=$(basename "$sum" .sha256)
		src=$A/$name
		[ -f "$src" ] || continue
		case $name in *.gz) gzip -dc "$src" >"$T/in.dump" ;; *) cp "$src" "$T/in.dump" ;; esac
		v=()
		[ -f "$A/$name.version" ] && v=(--min-version="$(cat "$A/$name.version")" --max-version="$(cat "$A/$name.version")")
		case $name in no-newline.dump | longlink.dump | honggfuzz-longlink-unterminated.dump) v+=(--lax-dump) ;; esac
		"$CFSCTL" build --format=erofs "${v[@]}" --from-dump "$T/in.dump" "$T/vec.img" 2>"$T/err" ||
			fail "building $name: $(cat "$T/err")"
		clean "$T/vec.img"
		n=$((n + 1))
	done
	[ $n -ge 10 ] || fail "only $n reference vectors found in $A"
else
	echo "no composefs test assets at $A: the reference vectors are not checked"
fi

# A directory tree: regular (inline and external), empty, hardlink, symlink,
# fifo, xattrs in several namespaces, nested directories.
S=$T/src
mkdir -p "$S/d/e/f"
printf 'small' >"$S/small"
head -c 70000 /dev/urandom >"$S/big"
head -c 65 /dev/urandom >"$S/d/just-over"
: >"$S/empty"
ln "$S/big" "$S/d/e/link"
ln -s ../small "$S/d/sym"
mkfifo "$S/d/fifo"
setfattr -n user.note -v hello "$S/big" 2>/dev/null || true
setfattr -n user.note -v hello "$S/d" 2>/dev/null || true
"$CFSCTL" build --format=erofs --digest-store "$T/store" "$S" "$T/dir.img" || fail "build failed"
clean "$T/dir.img"
clean --basedir "$T/store" "$T/dir.img"
assert_contains "$T/out" "^verify: 2 objects in 1 basedir: 2 ok, 0 with problems"
expect_exit 0 "$CFSCTL" verify --json --basedir "$T/store" "$T/dir.img"
python3 - "$T/out" <<'PY' || fail "JSON of a clean EROFS image"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["ok"] and d["errors"] == 0 and d["objects"]["ok"] == 2, d
assert all(p["kind"] == "no-verity" for p in d["problems"]), d
PY

# The object behind /big and /d/e/link: changed, then gone.
obj=$("$CFSCTL" inspect stat "$T/dir.img" /big | sed -n 's/^backing: *//p')
[ -n "$obj" ] || obj=$("$CFSCTL" inspect objects "$T/dir.img" | while read -r o; do
	[ "$(stat -c %s "$T/store/$o")" = 70000 ] && echo "$o"; done)
[ -f "$T/store/$obj" ] || fail "no object for /big in the store ($obj)"
chmod u+w "$T/store/$obj"
printf 'X' | dd of="$T/store/$obj" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_exit 1 "$CFSCTL" verify --basedir "$T/store" "$T/dir.img"
assert_contains "$T/out" "^error: digest: object '$obj' in basedir '$T/store' has fs-verity digest [0-9a-f]{64} \(computed\), the image records [0-9a-f]{64}; used by '/big', '/d/e/link'$"
rm -f "$T/store/$obj"
expect_exit 1 "$CFSCTL" verify --basedir "$T/store" "$T/dir.img"
assert_contains "$T/out" "^error: missing: object '$obj' in none of the 1 basedirs; used by '/big', '/d/e/link'$"
exit 0
