#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# inspect objects and inspect missing on the EROFS images the reference
# vectors make list what composefs-info objects and missing-objects list:
# the backing path of every regular file the image keeps outside (content
# not inlined, a payload given), once each, sorted; expected sets are
# derived from the dumpfiles here, not written down. missing with half of
# the objects put in a basedir (at their recorded size) lists the other
# half. And diff sees no difference between a v1 and an EROFS image of a
# tree whose small files the EROFS image inlines.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3"

composefs_assets || skip "skip: no composefs test assets at $A"

# expected DUMP OUT-OBJECTS OUT-SIZES: from the dumpfile, the objects the
# image needs (unescaped, one per line, sorted) and "size path" of each
expected() {
	python3 - "$1" "$2" "$3" <<'PY'
import re, sys
def unesc(s):
    return re.sub(rb"\\(x[0-9a-fA-F]{2}|.)", lambda m: bytes([int(m.group(1)[1:], 16)])
                  if m.group(1)[:1] == b"x" else {b"n": b"\n", b"r": b"\r", b"t": b"\t"}.get(m.group(1), m.group(1)), s)
objs = {}
for line in open(sys.argv[1], "rb"):
    f = line.rstrip(b"\n").split(b" ")
    if len(f) < 11 or f[0].startswith(b"#") or f[2].startswith(b"@"):
        continue
    mode, size, payload, content = int(f[2], 8), int(f[1]), f[8], f[9]
    if mode & 0o170000 == 0o100000 and size > 0 and content == b"-" and payload != b"-":
        objs[unesc(payload)] = size
with open(sys.argv[2], "wb") as o, open(sys.argv[3], "wb") as s:
    for p in sorted(objs):
        o.write(p + b"\n")
        s.write(b"%d " % objs[p] + p + b"\n")
PY
}
unescape() { python3 -c '
import re, sys
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(re.sub(rb"\\(x[0-9a-fA-F]{2}|.)", lambda m: bytes([int(m.group(1)[1:], 16)])
        if m.group(1)[:1] == b"x" else {b"n": b"\n", b"r": b"\r", b"t": b"\t"}.get(m.group(1), m.group(1)), line))'
}

n=0 with=0
for sum in "$A"/*.sha256; do
	name=$(basename "$sum" .sha256)
	src=$A/$name
	[ -f "$src" ] || continue
	case $name in *.gz) gzip -dc "$src" >"$T/in.dump" ;; *) cp "$src" "$T/in.dump" ;; esac
	v=()
	[ -f "$A/$name.version" ] && v=(--min-version="$(cat "$A/$name.version")" --max-version="$(cat "$A/$name.version")")
	case $name in no-newline.dump | longlink.dump | honggfuzz-longlink-unterminated.dump) v+=(--lax-dump) ;; esac
	"$CFSCTL" build --format=erofs "${v[@]}" --from-dump "$T/in.dump" "$T/img" 2>"$T/err" ||
		fail "building $name: $(cat "$T/err")"
	expected "$T/in.dump" "$T/want" "$T/sizes" || fail "$name: reading the dumpfile"
	"$CFSCTL" inspect objects "$T/img" >"$T/got.esc" || fail "$name: inspect objects failed"
	unescape <"$T/got.esc" >"$T/got"
	cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got" | head; fail "$name: inspect objects differs from the dumpfile's objects"; }
	rm -rf "$T/base" && mkdir "$T/base"
	"$CFSCTL" inspect missing --basedir "$T/base" "$T/img" | unescape >"$T/got" || fail "$name: inspect missing failed"
	cmp -s "$T/want" "$T/got" || fail "$name: inspect missing with an empty basedir is not every object"
	# every other object present, at its recorded size
	python3 - "$T/sizes" "$T/base" "$T/want-missing" <<'PY' || fail "$name: making the basedir"
import os, sys
out = open(sys.argv[3], "wb")
for i, line in enumerate(open(sys.argv[1], "rb")):
    size, path = line.rstrip(b"\n").split(b" ", 1)
    if i % 2:
        out.write(path + b"\n")
        continue
    full = os.path.join(sys.argv[2].encode(), path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.truncate(int(size))
PY
	"$CFSCTL" inspect missing --basedir "$T/base" "$T/img" | unescape >"$T/got" || fail "$name: inspect missing failed"
	cmp -s "$T/want-missing" "$T/got" || { diff "$T/want-missing" "$T/got" | head; fail "$name: inspect missing with half the objects"; }
	n=$((n + 1))
	[ -s "$T/want" ] && with=$((with + 1))
done
[ $n -ge 10 ] && [ $with -ge 3 ] || fail "$n vectors, $with with objects: too few to test"
echo "$n reference vectors, $with with objects"

# diff: inlined small files against v1 objects, no difference
mkdir -p "$T/tree/d"
printf 'x' >"$T/tree/one"
head -c 64 /dev/urandom >"$T/tree/d/sixty-four"
head -c 65 /dev/urandom >"$T/tree/d/sixty-five"
: >"$T/tree/empty"
"$CFSCTL" build "$T/tree" "$T/v1.img" && "$CFSCTL" build --format=erofs "$T/tree" "$T/e.img" || fail "builds failed"
[ "$("$CFSCTL" inspect objects "$T/e.img" | wc -l)" = 1 ] || fail "the EROFS image does not inline the files of up to 64 bytes"
expect_exit 0 "$CFSCTL" diff "$T/v1.img" "$T/e.img"
[ -s "$T/out" ] && { cat "$T/out"; fail "diff of a v1 and an EROFS image of one tree is not empty"; }
printf 'y' >"$T/tree/one"
"$CFSCTL" build --format=erofs "$T/tree" "$T/e2.img" || fail "build failed"
expect_exit 1 "$CFSCTL" diff "$T/v1.img" "$T/e2.img"
assert_contains "$T/out" "/one"
exit 0
