#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Limits, and failures that publish nothing. A build or pull that fails
# once its input is read (the image cannot hold an entry, or cannot be
# written) publishes no object in the digest store, in either format, in
# one batch or in several: a v1 image cannot hold a symlink target of 4096
# bytes, a composefs 1.0 one cannot hold 8 KiB of xattrs on one file, and
# no image goes to a directory that is not there. The message names the
# archive or layer and the entry. Hostile archives end within 10 s and
# under 256 MiB: a sparse file of 2^62 bytes in 10 KiB of tar is refused by
# --max-size, and without the cap its holes are hashed at once; a gzip bomb
# is refused at --max-size or at the free space --reserve keeps. Objects
# with holes are written sparse.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
umask 022

python3 - "$T" <<'PY' || fail "writing the archives"
import io, sys, tarfile
d = sys.argv[1]
def archive(path, extra):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        for k in range(3):
            i = tarfile.TarInfo("f%d" % k)
            data = (b"content of file %d\n" % k) * 1000
            i.size = len(data)
            t.addfile(i, io.BytesIO(data))
        extra(t)
def long_link(t):
    i = tarfile.TarInfo("bin/ls")
    i.type = tarfile.SYMTYPE
    i.linkname = "a/" * 2048
    t.addfile(i)
def big_xattrs(t):
    i = tarfile.TarInfo("etc/x")
    i.pax_headers = {"SCHILY.xattr.user.a": "a" * 3000, "SCHILY.xattr.user.b": "b" * 3000,
                     "SCHILY.xattr.user.c": "c" * 3000}
    t.addfile(i)
archive(d + "/link.tar", long_link)
archive(d + "/xattrs.tar", big_xattrs)
archive(d + "/ok.tar", lambda t: None)
PY

# no_objects STORE: the store holds no file, not even a temporary
no_objects() {
	[ -z "$(find "$1" -type f 2>/dev/null)" ] || {
		find "$1" -type f; fail "a failed build left files in the store '$1'"
	}
}
# fails FORMAT ARCHIVE IMAGE PATTERN: build --from-tar fails saying PATTERN, leaving nothing
fails() {
	rm -rf "$T/s"
	expect_exit 1 "$CFSCTL" build --from-tar --format="$1" --digest-store="$T/s" "$2" "$3"
	assert_contains "$T/err" "$4"
	no_objects "$T/s"
	[ ! -e "$3" ] || fail "a failed build left an image"
}
fails v1 "$T/link.tar" "$T/x.img" "'$T/link.tar', entry '/bin/ls': payload path too long"
fails erofs "$T/xattrs.tar" "$T/x.img" "'$T/xattrs.tar', entry '/etc/x': xattr"
fails v1 "$T/ok.tar" "$T/nodir/x.img" "'$T/nodir/x.img'"
fails erofs "$T/ok.tar" "$T/nodir/x.img" "'$T/nodir/x.img'"
# The archives but the bad entry build, and do fill the store.
expect_exit 0 "$CFSCTL" build --from-tar --digest-store="$T/s" "$T/ok.tar" "$T/ok.img"
check_store "$T/s"
assert_eq 3 "$n_objects" "objects of a build that works"

# More new objects than the open files a batch may hold: still none.
mkdir "$T/many"
for i in $(seq 400); do echo "file $i" >"$T/many/$i"; done
rm -rf "$T/s"
expect_exit 1 few_fds "$CFSCTL" build --digest-store="$T/s" "$T/many" "$T/nodir/x.img"
no_objects "$T/s"
expect_exit 0 few_fds "$CFSCTL" build --digest-store="$T/s" "$T/many" "$T/many.img"
check_store "$T/s"
assert_eq 400 "$n_objects" "objects of a build in batches"

# A pull: the message names the reference, the layer (by its digest and number) and the entry.
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/ok.tar", "gzip"], ["$T/link.tar", "gzip"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
start_server reg "$T/fake" ok
R=${SERVER_URL#http://}
rm -rf "$T/s"
expect_exit 1 "$CFSCTL" pull --plain-http --digest-store="$T/s" "$R/img:v1" "$T/p.img"
assert_contains "$T/err" "'$R/img@sha256:[0-9a-f]{64}' \(layer 2 of '$R/img:v1'\), entry '/bin/ls': payload path too long"
no_objects "$T/s"
[ ! -e "$T/p.img" ] || fail "a failed pull left an image"
stop_servers

# --- limits ---
python3 - "$T" <<'PY' || fail "writing the hostile archives"
import gzip, io, sys, tarfile
d = sys.argv[1]
def sparse(path, size, at):
    # a pax 1.0 sparse entry of @size bytes holding 4 KiB of data at @at
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as t:
        data = b"D" * 4096
        mp = b"1\n%d\n%d\n" % (at, len(data))
        mp += b"\0" * (-len(mp) % 512)
        i = tarfile.TarInfo("GNUSparseFile.0/big")
        i.size = len(mp) + len(data)
        i.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0",
                         "GNU.sparse.name": "big", "GNU.sparse.realsize": str(size)}
        t.addfile(i, io.BytesIO(mp + data))
sparse(d + "/s62.tar", 1 << 62, 1 << 40)
sparse(d + "/s1g.tar", 1 << 30, (300 << 20) + 17)
# 256 MiB of 'A' in a few hundred KiB of gzip
class A(io.RawIOBase):
    left = 256 << 20
    def readable(self):
        return True
    def readinto(self, b):
        n = min(len(b), self.left)
        b[:n] = b"A" * n
        self.left -= n
        return n
with gzip.open(d + "/bomb.tar.gz", "wb", compresslevel=1) as g:
    with tarfile.open(fileobj=g, mode="w|", format=tarfile.PAX_FORMAT) as t:
        i = tarfile.TarInfo("bomb")
        i.size = 256 << 20
        t.addfile(i, A())
PY
[ "$(stat -c %s "$T/s62.tar")" -le 20480 ] || fail "the sparse archive is not small"
[ "$(stat -c %s "$T/bomb.tar.gz")" -le 4194304 ] || fail "the gzip bomb is not small"


rm -rf "$T/s"
bounded 1 "$CFSCTL" build --from-tar --digest-store="$T/s" "$T/s62.tar" "$T/x.img"
assert_contains "$T/err" "^cfsctl: '$T/s62\.tar': entry 'big': 4611686018427387904 bytes.*: more than --max-size 274877906944$"
no_objects "$T/s"
# Without the cap its holes cost nothing: hashed at once.
bounded 0 "$CFSCTL" build --from-tar --max-size=0 "$T/s62.tar" "$T/x.img"
# A store cannot hold 2^62 bytes (most filesystems end at 2^44): an error, quick.
bounded 1 "$CFSCTL" build --from-tar --max-size=0 --digest-store="$T/s" "$T/s62.tar" "$T/x.img"
no_objects "$T/s"
# A sparse object is written sparse, under the digest of its content.
expect_exit 0 "$CFSCTL" build --from-tar --digest-store="$T/s" "$T/s1g.tar" "$T/x.img"
check_store "$T/s"
obj=$(find "$T/s" -type f -size +1000M)
[ -n "$obj" ] || fail "no object of 1 GiB"
[ "$(du -k "$obj" | cut -f1)" -lt 1024 ] || fail "the object of a sparse file is not sparse: $(du -k "$obj")"

# The gzip bomb: refused at --max-size, before reading its content.
rm -rf "$T/s"
bounded 1 "$CFSCTL" build --from-tar --max-size=64M --digest-store="$T/s" "$T/bomb.tar.gz" "$T/x.img"
assert_contains "$T/err" "entry 'bomb': 268435456 bytes.*more than --max-size 67108864$"
no_objects "$T/s"
# ... or at the free space --reserve keeps.
bounded 1 "$CFSCTL" build --from-tar --reserve=1E --digest-store="$T/s" "$T/bomb.tar.gz" "$T/x.img"
assert_contains "$T/err" "^cfsctl: the digest store's filesystem has [0-9]+ bytes free, and 1152921504606846976 are kept free \(--reserve\)$"
no_objects "$T/s"
# A directory's files count as well.
mkdir "$T/dir"
head -c 5000 /dev/zero >"$T/dir/a"
head -c 5000 /dev/zero >"$T/dir/b"
expect_exit 1 "$CFSCTL" build --max-size=9K "$T/dir" "$T/x.img"
assert_contains "$T/err" "the files add up to 10000 bytes, more than --max-size 9216$"
expect_exit 0 "$CFSCTL" build --max-size=10000 "$T/dir" "$T/x.img"
expect_exit 2 "$CFSCTL" build --max-size=10Q "$T/dir" "$T/x.img"
