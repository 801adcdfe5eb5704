#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A build or pull that fails once its input is read (the image cannot hold
# an entry, or cannot be written) publishes no object in the digest store,
# in either format, in one batch or in several: a v1 image cannot hold a
# symlink target of 4096 bytes, a composefs 1.0 one cannot hold 8 KiB of
# xattrs on one file, and no image goes to a directory that is not there.
# The message names the archive or layer and the entry.
. "$(dirname "$0")/../lib.sh"
. "$TESTS_DIR/fetch-lib.sh"
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

# A pull: the message names the layer, by the reference's repository and digest.
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/ok.tar", "gzip"], ["$T/link.tar", "gzip"]]}]
EOF
python3 "$TESTS_DIR/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
python3 "$TESTS_DIR/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
start_server reg "$T/fake" ok
R=${SERVER_URL#http://}
rm -rf "$T/s"
expect_exit 1 "$CFSCTL" pull --plain-http --digest-store="$T/s" "$R/img:v1" "$T/p.img"
assert_contains "$T/err" "'$R/img@sha256:[0-9a-f]{64}' \(layer 2\), entry '/bin/ls': payload path too long"
no_objects "$T/s"
[ ! -e "$T/p.img" ] || fail "a failed pull left an image"
stop_servers
