#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Bytes from input never reach the terminal raw: names with ESC, a newline
# or invalid UTF-8 in an archive's entries and a layer's media type are
# escaped (\x1b, \n, \xff) in messages, inspect and diff, so an image
# cannot clear the screen, set the window title or print a line of its own.
# A message about a 5000-byte name is shortened in the middle, and keeps
# its reason.
. "$(dirname "$0")/../lib/common.sh"
umask 022

# raw_free FILE WHAT: FILE holds no control byte but newlines, no invalid UTF-8
raw_free() {
	python3 - "$1" "$2" <<'PY' || fail "$2 holds raw bytes from input"
import sys
b = open(sys.argv[1], "rb").read()
bad = [c for c in b if (c < 0x20 and c != 0x0a) or c == 0x7f]
try:
    b.decode("utf-8")
except UnicodeDecodeError as e:
    bad.append(e)
if bad:
    print(sys.argv[2] + ":", repr(b[:300]), bad[:5])
    sys.exit(1)
PY
}
# lines FILE: how many lines it has
lines() { wc -l <"$1" | tr -d ' '; }

python3 - "$T" <<'PY' || fail "writing the archives"
import io, os, sys, tarfile
d = sys.argv[1]
evil = "\x1b]0;pwned\x07\x1b[2J\ncfsctl: all layers verified"
def tar(path, names):
    with tarfile.open(path, "w", format=tarfile.GNU_FORMAT, encoding="utf-8",
                      errors="surrogateescape") as t:
        for name in names:
            i = tarfile.TarInfo(name)
            data = name.encode("utf-8", "surrogateescape")
            i.size = len(data)
            t.addfile(i, io.BytesIO(data))
tar(d + "/dotdot.tar", ["a/" + evil + "\udcff/../../x"])
tar(d + "/long.tar", ["d/" + "n" * 5000 + "/x"])
tar(d + "/names.tar", ["e" + evil, "bad\udcffname", "tab\there"])
tar(d + "/names2.tar", ["e" + evil, "other\x1b[31m"])
PY

# A refused entry: one line, escaped.
expect_exit 1 "$CFSCTL" build --from-tar "$T/dotdot.tar" "$T/x.img"
raw_free "$T/err" "the message about '..'"
assert_eq 1 "$(lines "$T/err")" "lines of the message about '..'"
assert_contains "$T/err" "entry 'a/\\\\x1b\]0;pwned\\\\x07\\\\x1b\[2J\\\\ncfsctl: all layers verified\\\\xff/\.\./\.\./x'"
assert_contains "$T/err" "would reach outside the tree$"

# A 5000-byte name: shortened in the middle, the reason kept.
expect_exit 1 "$CFSCTL" build --from-tar "$T/long.tar" "$T/x.img"
assert_eq 1 "$(lines "$T/err")" "lines of the message about a long name"
assert_contains "$T/err" "^cfsctl: '$T/long\.tar': entry 'd/n+\.\.\.n+/x': a name is longer than 255 bytes$"
len=$(wc -c <"$T/err")
[ "$len" -le 1100 ] || fail "the message about a 5000-byte name has $len bytes"

# inspect and diff escape the names of an image.
expect_exit 0 "$CFSCTL" build --from-tar "$T/names.tar" "$T/a.img"
expect_exit 0 "$CFSCTL" build --from-tar "$T/names2.tar" "$T/b.img"
for cmd in "inspect ls $T/a.img /" "inspect dump $T/a.img" "inspect objects $T/a.img" \
	"diff $T/a.img $T/b.img"; do
	# shellcheck disable=SC2086
	"$CFSCTL" $cmd >"$T/out" 2>"$T/err"
	[ $? -le 1 ] || fail "'cfsctl $cmd' failed"
	raw_free "$T/out" "the output of 'cfsctl $cmd'"
	raw_free "$T/err" "the errors of 'cfsctl $cmd'"
done
"$CFSCTL" inspect ls "$T/a.img" / >"$T/out"
assert_contains "$T/out" 'e\\x1b\]0;pwned\\x07\\x1b\[2J\\ncfsctl:\\x20all\\x20layers\\x20verified$'
assert_contains "$T/out" 'bad\\xffname$'
"$CFSCTL" diff "$T/a.img" "$T/b.img" >"$T/out"
assert_contains "$T/out" 'other\\x1b\[31m'

# A name given on the command line is escaped in the message about it.
expect_exit 1 "$CFSCTL" inspect "$T/no"$'\x1b[2J\n'"such"
raw_free "$T/err" "the message about a missing image"
assert_contains "$T/err" "no\\\\x1b\[2J\\\\nsuch"
expect_exit 2 "$CFSCTL" inspect "$T/no" $'\x1b[2J\n'"such"
raw_free "$T/err" "the usage message about an argument"
assert_contains "$T/err" "unexpected argument '\\\\x1b\[2J\\\\nsuch'"

# A layer's media type from the image.
python3 - "$T" <<'PY' || fail "writing the layer"
import io, sys, tarfile
with tarfile.open(sys.argv[1] + "/l.tar", "w") as t:
    i = tarfile.TarInfo("f"); i.size = 1; t.addfile(i, io.BytesIO(b"x"))
PY
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layer_type": "application/x\u001b[2J\u001b]0;title\u0007\nfake", "layers": [["$T/l.tar", "none"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:v1" "$T/x.img"
raw_free "$T/err" "the message about a media type"
assert_eq 1 "$(lines "$T/err")" "lines of the message about a media type"
assert_contains "$T/err" "media type 'application/x\\\\x1b\[2J\\\\x1b\]0;title\\\\x07\\\\nfake', which is not supported"
