#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount --fuse on a store without fs-verity (the test's TMPDIR), both formats:
# each backing file's digest is computed at its first open (its first read,
# where the kernel opens files without asking) and its blocks' hashes kept
# for the mount's life, so an object changed after that reads
# EIO where it changed (one line on stderr naming the path and the object),
# in that open and in the next, while its other blocks still read;
# --verity-check=0 serves it unchecked, and 2 refuses a
# file whose digest the image does not record. An image changed by one
# byte is refused with the --digest it had.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fuse.sh"

mkdir -p "$T/src" "$T/m"
head -c 1000000 /dev/urandom >"$T/src/big"
printf 'one\n' >"$T/src/one"
head -c 10000 /dev/urandom >"$T/src/nodigest"

for fmt in v1 erofs; do
	"$CFSCTL" build --format="$fmt" --digest-store "$T/store-$fmt" "$T/src" "$T/$fmt.cfs" >/dev/null ||
		fail "build --format=$fmt"
	obj=$("$CFSCTL" inspect stat "$T/$fmt.cfs" /big | awk '/^backing/ { print $2 }')
	[ -n "$obj" ] || fail "$fmt: no backing path of /big"
	S=$T/store-$fmt

	"$CFSCTL" mount --fuse --basedir "$S" "$T/$fmt.cfs" "$T/m" 2>"$T/daemon.err" || fail "$fmt: mount"
	pid=$(fuse_pid "$T/m")
	# opened and read (the digest is computed at the first read where the
	# kernel opens files without asking, else at the open), then the object
	# changes at byte 900000: that block reads EIO, the first one reads
	python3 - "$T/m/big" "$S/$obj" "$T/src/big" >"$T/py.out" 2>&1 <<'PY' || { cat "$T/py.out"; fail "$fmt: a changed object read"; }
import os, sys
mnt, obj, src = sys.argv[1:4]
fd = os.open(mnt, os.O_RDONLY)
os.pread(fd, 1, 0)
with open(obj, "r+b") as f:
    f.seek(900000)
    b = f.read(1)
    f.seek(900000)
    f.write(bytes([b[0] ^ 1]))
want = open(src, "rb").read()
assert os.pread(fd, 4096, 0) == want[:4096], "the first block differs"
try:
    got = os.pread(fd, 4096, 900000 // 4096 * 4096)
except OSError as e:
    assert e.errno == 5, "errno %d" % e.errno
    sys.exit(0)
sys.exit("the changed block read: %s" % ("its old bytes" if got == want[900000 // 4096 * 4096:][:4096] else "other bytes"))
PY
	assert_contains "$T/daemon.err" "^cfsctl: mount: '$T/$fmt.cfs': '/big': object '$obj': its content changed since it was verified: a block does not verify$"
	assert_eq 1 "$(grep -c "'/big'" "$T/daemon.err")" "$fmt: lines said of /big"
	# opened again, it is checked against the hashes kept at the first open:
	# the changed block reads EIO again (blocks 1 and 2 were never read, so
	# the kernel has no page of them), the others read
	python3 - "$T/m/big" "$T/src/big" >"$T/py.out" 2>&1 <<'PY' || { cat "$T/py.out"; fail "$fmt: the changed object opened again"; }
import os, sys
mnt, src = sys.argv[1:3]
want = open(src, "rb").read()
fd = os.open(mnt, os.O_RDONLY)
assert os.pread(fd, 8192, 4096) == want[4096:12288], "blocks 1 and 2 differ"
try:
    os.pread(fd, 4096, 900000 // 4096 * 4096)
except OSError as e:
    assert e.errno == 5, "errno %d" % e.errno
    sys.exit(0)
sys.exit("the changed block read in a second open")
PY
	cat "$T/m/big" >/dev/null 2>&1 && fail "$fmt: all of the changed object read"
	assert_eq one "$(cat "$T/m/one")" "$fmt: the rest reads"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m" "$pid"

	# --verity-check=0: served unchecked, changed bytes and all
	expect_exit 0 "$CFSCTL" mount --fuse --verity-check=0 --basedir "$S" "$T/$fmt.cfs" "$T/m"
	cmp -s "$T/m/big" "$S/$obj" || fail "$fmt: --verity-check=0 did not serve the object as it is"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m"

	# --verity-check=2: a file whose digest the image does not record is refused
	"$CFSCTL" inspect dump "$T/$fmt.cfs" >"$T/dump"
	nd=$(awk '$1 == "/nodigest" { print $9 }' "$T/dump")
	mkdir -p "$S/plain"
	cp "$S/$nd" "$S/plain/nodigest"
	awk '$1 == "/nodigest" { $9 = "plain/nodigest"; $11 = "-" } { print }' "$T/dump" >"$T/dump2"
	"$CFSCTL" build --format="$fmt" --from-dump "$T/dump2" "$T/nd-$fmt.cfs" >/dev/null ||
		fail "$fmt: build from the dump without a digest"
	"$CFSCTL" inspect stat "$T/nd-$fmt.cfs" /nodigest | grep -qi '^digest' &&
		fail "$fmt: the image still records a digest for /nodigest"
	expect_exit 0 "$CFSCTL" mount --fuse --verity-check=1 --basedir "$S" "$T/nd-$fmt.cfs" "$T/m"
	cmp "$T/m/nodigest" "$T/src/nodigest" || fail "$fmt: --verity-check=1: a file without a digest"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m"
	"$CFSCTL" mount --fuse --verity-check=2 --basedir "$S" "$T/nd-$fmt.cfs" "$T/m" 2>"$T/daemon.err" ||
		fail "$fmt: mount --verity-check=2"
	cat "$T/m/nodigest" >/dev/null 2>&1 && fail "$fmt: --verity-check=2 served a file without a digest"
	assert_contains "$T/daemon.err" "'/nodigest': the image records no fs-verity digest for it \(verity-check=2\)$"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m"

	# an image changed by one byte is refused with its --digest
	digest=$(fsverity digest --compact "$T/$fmt.cfs")
	cp "$T/$fmt.cfs" "$T/changed.cfs"
	printf '\001' | dd of="$T/changed.cfs" bs=1 seek=$(($(stat -c %s "$T/changed.cfs") - 1)) conv=notrunc status=none
	cmp -s "$T/$fmt.cfs" "$T/changed.cfs" && fail "the image did not change"
	expect_exit 1 "$CFSCTL" mount --fuse --digest "$digest" --basedir "$S" "$T/changed.cfs" "$T/m"
	assert_contains "$T/err" "its fs-verity digest is [0-9a-f]{64}, not the one given$"
	if grep -q " $T/m " /proc/mounts; then fail "$fmt: a changed image was mounted"; fi
done
