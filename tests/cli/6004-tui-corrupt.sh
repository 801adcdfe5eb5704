#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui on corrupt images: a directory whose chunk is corrupt shows an
# "<error: ...>" row where its entries would be, and the rest of the image
# stays browsable; a corrupt root directory still opens; an entry whose
# inode is corrupt shows the error in its details. q still exits 0.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

mkdir -p "$T/src/d" "$T/src/ok"
: >"$T/src/d/corruptme"
: >"$T/src/ok/fine"
"$CFSCTL" build "$T/src" "$T/img" >/dev/null || fail "build failed"

# The entry "corruptme": its 12-byte dirent precedes the names of its chunk
# (u64 inode, u8 d_type, u8 name_len, u16 name_offset); a zero name_len is
# corrupt. Changing its inode to an offset past the inode section is too.
python3 - "$T/img" "$T" <<'PY'
import struct, sys
img, out = sys.argv[1], sys.argv[2]
data = open(img, "rb").read()
assert data.count(b"corruptme") == 1
at = data.index(b"corruptme") - 12
bad = bytearray(data); bad[at + 9] = 0
open(out + "/bad-name", "wb").write(bad)
bad = bytearray(data); bad[at:at + 8] = struct.pack("<Q", 0x7fffffff)
open(out + "/bad-inode", "wb").write(bad)
PY
# a root holding only "corruptroot", with its name_len zeroed
mkdir -p "$T/src2/corruptroot"
"$CFSCTL" build "$T/src2" "$T/img2" >/dev/null || fail "build failed"
python3 - "$T/img2" "$T/bad-root" <<'PY'
import sys
data = bytearray(open(sys.argv[1], "rb").read())
assert data.count(b"corruptroot") == 1
data[data.index(b"corruptroot") - 12 + 9] = 0
open(sys.argv[2], "wb").write(data)
PY
"$CFSCTL" inspect ls "$T/bad-name" /d >/dev/null 2>&1 && fail "the corruption is not one"

start_shell 80 24
tui "$T/bad-name"
keys j Enter
wait_for '^  - d/ +│'
assert_screen '^      <error: directory inode [0-9]*>?│'
keys j
wait_for '│ error    reading /d:$'
# (the message's lines may come with a later refresh: wait for each)
wait_for '│          directory inode [0-9]+: entry 0 of'
wait_for '│          .*invalid name$'
# the rest reads
keys j Enter j
wait_for '^/ok/fine +[0-9]+/[0-9]+$'
assert_screen '^      fine +│'
# search goes past the error row
keys Home / f i n Enter
wait_for '^/ok/fine +[0-9]+/[0-9]+$'
quit_tui

tui "$T/bad-inode"
keys j Enter j
wait_for '^/d/corruptme +3/4$'
assert_screen '│ error    inode [0-9]+'
quit_tui

tui "$T/bad-root"
assert_screen '^    <error: directory inode [0-9]*.*│'
assert_screen '^- / +│ path     /$'
quit_tui
exit 0
