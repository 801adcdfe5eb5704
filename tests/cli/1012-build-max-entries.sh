#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# --max-entries: a tar archive or image layer of more entries than the cap
# (empty files, hardlinks, the directories of one deep path), or whose
# xattrs and symlink targets add up to more than 256 bytes per entry the
# cap allows, is refused while it is read, with a message naming the
# archive or layer (and the image), the entry and the cap: exit 1, no
# image, no object in the digest store. At the default cap an archive of
# more entries ends within 10 s and under 256 MiB, as does a pull of such
# a layer, and one that names 140000 files or hardlinks twice, or replaces
# each holder of an inode of 140000 links in turn; an archive
# within the cap builds. An image of more than 1000 layers is refused.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
umask 022

# hostile.py OUT N KIND [ROUNDS]: an uncompressed tar written fast, header
# by header: a file with content, then N entries of KIND: "files" (empty
# files), "hardlinks" (to the first file), "deep" (one empty file N
# directories deep), "xattrs" (one file whose N xattrs hold 100 bytes
# each), "symlinks" (N symlinks, targets of 300 bytes), "holders" (N
# hardlinks, then the file and each link replaced by a file, the link
# that holds the inode by then first); files and hardlinks ROUNDS times,
# each round replacing the one before
cat >"$T/hostile.py" <<'PY'
import sys
out, n, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 1
def header(name, typeflag=b"0", size=0, link=b""):
    h = bytearray(512)
    h[0:len(name)] = name
    h[100:108] = b"0000644\0"; h[108:116] = b"0000000\0"; h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[148:156] = b"        "
    h[156:157] = typeflag
    h[157:157 + len(link)] = link
    h[257:265] = b"ustar\x0000"
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)
def padded(data):
    return data + b"\0" * (-len(data) % 512)
def pax(records):
    body = b""
    for k, v in records:
        r = b" " + k + b"=" + v + b"\n"
        l = len(r) + 1
        while len(b"%d" % l) + len(r) != l:
            l += 1
        body += b"%d" % l + r
    return header(b"pax", b"x", len(body)) + padded(body)
with open(out, "wb") as f:
    data = b"content of the first file\n" * 100
    f.write(header(b"first", size=len(data)) + padded(data))
    if kind == "deep":
        path = b"d/" * n + b"f"
        f.write(header(b"././@LongLink", b"L", len(path) + 1) + padded(path + b"\0"))
        f.write(header(path[:100]))
    elif kind == "holders":
        f.write(b"".join(header(b"e%07d" % k, b"1", link=b"first") for k in range(n)))
        f.write(header(b"first"))
        f.write(b"".join(header(b"e%07d" % k) for k in reversed(range(n))))
    elif kind == "xattrs":
        f.write(pax([(b"SCHILY.xattr.user.%d" % i, b"v" * 100) for i in range(n)]))
        f.write(header(b"x"))
    else:
        buf = []
        for k in list(range(n)) * rounds:
            name = b"e%07d" % k
            if kind == "files":
                buf.append(header(name))
            elif kind == "hardlinks":
                buf.append(header(name, b"1", link=b"first"))
            else:
                buf.append(pax([(b"linkpath", b"t" * 300)]) + header(name, b"2", link=b"t"))
            if len(buf) >= 4096:
                f.write(b"".join(buf))
                buf = []
        f.write(b"".join(buf))
    f.write(b"\0" * 1024)
PY
# no_objects STORE: the store holds no file, not even a temporary
no_objects() {
	[ -z "$(find "$1" -type f 2>/dev/null)" ] || {
		find "$1" -type f; fail "a failed build left files in the store '$1'"
	}
}
# refused MAX TAR PATTERN: build --from-tar --max-entries=MAX fails saying PATTERN, leaving nothing
refused() {
	rm -rf "$T/s"
	bounded 1 "$CFSCTL" build --from-tar --max-entries="$1" --digest-store="$T/s" "$2" "$T/x.img"
	assert_contains "$T/err" "$3"
	no_objects "$T/s"
	[ ! -e "$T/x.img" ] || fail "a refused build left an image"
}

for k in files hardlinks deep symlinks; do
	python3 "$T/hostile.py" "$T/$k.tar" 3000 $k || fail "writing the archive of $k"
done
python3 "$T/hostile.py" "$T/xattrs.tar" 30 xattrs || fail "writing the archive of xattrs"
cap="the tree would hold more than 1000 entries \(--max-entries\)$"
refused 1000 "$T/files.tar" "^cfsctl: '$T/files\.tar', entry 'e0000999': $cap"
refused 1000 "$T/hardlinks.tar" "^cfsctl: '$T/hardlinks\.tar', entry 'e0000999': $cap"
refused 1000 "$T/deep.tar" "^cfsctl: '$T/deep\.tar', entry 'd/d/d/.*/f': $cap"
# 300-byte targets: the budget of 256 bytes an entry ends at the 854th
refused 1000 "$T/symlinks.tar" "^cfsctl: '$T/symlinks\.tar', entry 'e0000853': xattrs and symlink targets add up to 256200 bytes, more than 256 per entry --max-entries 1000 allows$"
# 30 xattrs of 100 bytes on one file, with the cost of each: 10 entries allow 2560 bytes
refused 10 "$T/xattrs.tar" "^cfsctl: '$T/xattrs\.tar', entry 'x': xattrs and symlink targets add up to [0-9]+ bytes, more than 256 per entry --max-entries 10 allows$"

# Within the cap they build: at most 3002 entries and the root, and
# 900000 bytes of symlink targets in the 1024000 of 4000 entries.
for k in files hardlinks deep symlinks xattrs; do
	rm -rf "$T/s"
	max=3002
	[ $k != symlinks ] || max=4000
	bounded 0 "$CFSCTL" build --from-tar --max-entries=$max --digest-store="$T/s" "$T/$k.tar" "$T/$k.img"
	check_store "$T/s"
	assert_eq 1 "$n_objects" "objects of the archive of $k"
done
expect_exit 0 "$CFSCTL" inspect ls "$T/files.img" /
assert_eq 3001 "$(wc -l <"$T/out")" "entries of the image of 3000 empty files and one more"
# 0: no limit
expect_exit 0 "$CFSCTL" build --from-tar --max-entries=0 "$T/xattrs.tar" "$T/x.img"
rm -f "$T/x.img"
for bad in x -1 4294967296 ''; do
	expect_exit 2 "$CFSCTL" build --from-tar --max-entries="$bad" "$T/files.tar" "$T/x.img"
done
"$CFSCTL" build --help >"$T/help" || fail "build --help"
grep -q -- '--max-entries=N' "$T/help" || fail "build --help does not say --max-entries"

# The default cap (150000): an archive of one more, read within 10 s and
# 256 MiB, and from stdin too.
python3 "$T/hostile.py" "$T/many.tar" 150000 files || fail "writing the archive of 150001 entries"
refused 150000 "$T/many.tar" "entry 'e0149999': the tree would hold more than 150000 entries"
rm -rf "$T/s"
bounded 1 sh -c 'exec "$0" build --from-tar --digest-store="$1" - "$2" <"$3"' "$CFSCTL" "$T/s" \
	"$T/x.img" "$T/many.tar"
assert_contains "$T/err" "^cfsctl: 'stdin', entry 'e0149999': the tree would hold more than 150000 entries \(--max-entries\)$"
no_objects "$T/s"

# An archive that names its entries again (each replacing the one before,
# a hardlink leaving the chain of its inode) takes time in proportion.
python3 "$T/hostile.py" "$T/again.tar" 140000 files 2 || fail "writing the archive named twice"
bounded 0 "$CFSCTL" build --from-tar "$T/again.tar" "$T/x.img"
python3 "$T/hostile.py" "$T/again.tar" 140000 hardlinks 2 || fail "writing the archive named twice"
bounded 0 "$CFSCTL" build --from-tar "$T/again.tar" "$T/x.img"
python3 "$T/hostile.py" "$T/again.tar" 140000 holders || fail "writing the archive of holders"
bounded 0 "$CFSCTL" build --from-tar "$T/again.tar" "$T/x.img"
rm -f "$T/again.tar" "$T/x.img"

# A pull: the layer of too many entries is named with its image.
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/files.tar", "gzip"], ["$T/many.tar", "gzip"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
start_server reg "$T/fake" ok
R=${SERVER_URL#http://}
rm -rf "$T/s"
bounded 1 "$CFSCTL" pull --plain-http --digest-store="$T/s" "$R/img:v1" "$T/p.img"
assert_contains "$T/err" "^cfsctl: '$R/img@sha256:[0-9a-f]{64}' \(layer 2 of '$R/img:v1'\), entry 'e0149999': the tree would hold more than 150000 entries \(--max-entries\)$"
no_objects "$T/s"
[ ! -e "$T/p.img" ] || fail "a refused pull left an image"
# 3001 entries of layer 1, which layer 2 names again up to e0002999
bounded 1 "$CFSCTL" pull --plain-http --max-entries=4000 --digest-store="$T/s" "$R/img:v1" "$T/p.img"
assert_contains "$T/err" "\(layer 2 of '$R/img:v1'\), entry 'e0003999': the tree would hold more than 4000 entries"
no_objects "$T/s"
# ... and the same layout, read by build --from-oci
bounded 1 "$CFSCTL" build --from-oci --digest-store="$T/s" "oci:$T/lay:v1" "$T/p.img"
assert_contains "$T/err" "/blobs/sha256/[0-9a-f]{64}' \(layer 2\), entry 'e0149999': the tree would hold more than 150000 entries"
no_objects "$T/s"
# with room for them, the pull works
bounded 0 "$CFSCTL" pull --plain-http --max-entries=160000 --digest-store="$T/s" "$R/img:v1" "$T/p.img"
check_store "$T/s"
assert_eq 1 "$n_objects" "objects of the pulled image"
stop_servers

# An image of more than 1000 layers (each a request in a pull) is refused
# before any is read.
python3 - "$T" <<'PY' || fail "writing the spec of 1001 layers"
import json, sys
json.dump([{"tag": "v1", "layers": [[sys.argv[1] + "/xattrs.tar", "none"]] * 1001},
           {"tag": "v2", "layers": [[sys.argv[1] + "/xattrs.tar", "none"]] * 1000}],
          open(sys.argv[1] + "/spec.json", "w"))
PY
rm -rf "$T/lay"
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:v1" "$T/x.img"
assert_contains "$T/err" "^cfsctl: '[^']+': 1001 layers, more than the 1000 an image may have$"
expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay:v2" "$T/x.img"
echo ok
