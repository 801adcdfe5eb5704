#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount --fuse: its options and refusals. --repo NAME serves the
# named image and its objects; --digest HEX must be the image's fs-verity
# digest (computed where the image has no fs-verity) and --digest auto
# with --repo must be its name, or nothing is mounted; a corrupt image is
# refused with nothing mounted; --foreground stays attached until SIGTERM,
# then exits 0 with nothing left. A backing file whose content is not what
# the image records reads EIO, with one line naming the path and the
# object, and the rest reads on. Where every backing file is there at
# mount, the kernel opens files without asking the daemon: one removed or
# replaced after the mount opens, and its first read fails with EIO (one
# line said, however often it is read); where one is missing at mount,
# each open asks the daemon, and the missing one fails its open.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fuse.sh"

expect_exit 0 "$CFSCTL" mount --help
assert_contains "$T/out" '^  --fuse '
assert_contains "$T/out" '^  --foreground '
expect_exit 2 "$CFSCTL" mount --foreground img "$T"
assert_contains "$T/err" "foreground and --allow-other are for --fuse"
expect_exit 2 "$CFSCTL" mount --fuse --upperdir "$T/u" --workdir "$T/w" img "$T"
assert_contains "$T/err" "fuse takes no --upperdir or --idmap"

mkdir -p "$T/src/d" "$T/m"
printf 'one\n' >"$T/src/one"
printf 'two\n' >"$T/src/d/two"
head -c 100000 /dev/urandom >"$T/src/three"
D0=$(printf '0%.0s' $(seq 64))

# opens_reads_eio FILE OFFSET...: FILE opens, and a read of 4 KiB at each
# OFFSET fails with EIO
opens_reads_eio() {
	python3 - "$@" >"$T/py.out" 2>&1 <<'PY' || { cat "$T/py.out"; return 1; }
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for off in sys.argv[2:]:
    try:
        os.pread(fd, 4096, int(off))
        sys.exit("it read")
    except OSError as e:
        assert e.errno == 5, "errno %d" % e.errno
PY
}

for fmt in v1 erofs; do
	R=$T/repo-$fmt
	"$CFSCTL" build --format="$fmt" --repo "$R" "$T/src" app >/dev/null || fail "build --repo, $fmt"
	digest=$(basename "$(readlink "$R/images/refs/app")")

	# --repo NAME, with its digest checked as its name (computed: no fs-verity here)
	expect_exit 0 "$CFSCTL" mount --fuse --repo "$R" --digest auto app "$T/m"
	cmp "$T/m/three" "$T/src/three" || fail "$fmt: --repo: a file differs"
	assert_eq two "$(cat "$T/m/d/two")" "$fmt: --repo: d/two"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m"

	# --digest: the right one mounts, a wrong one does not
	expect_exit 0 "$CFSCTL" mount --fuse --basedir "$R/objects" --digest "$digest" "$R/images/$digest" "$T/m"
	assert_eq one "$(cat "$T/m/one")" "$fmt: --digest: one"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m"
	expect_exit 1 "$CFSCTL" mount --fuse --basedir "$R/objects" --digest "$D0" "$R/images/$digest" "$T/m"
	assert_contains "$T/err" "^cfsctl: mount: '$R/images/$digest': its fs-verity digest is $digest, not the one given$"
	if grep -q " $T/m " /proc/mounts; then fail "$fmt: mounted with a wrong --digest"; fi

	# a corrupt image: refused, nothing mounted
	size=$(stat -c %s "$R/images/$digest")
	head -c $((size / 2)) "$R/images/$digest" >"$T/bad-$fmt.cfs"
	expect_exit 1 "$CFSCTL" mount --fuse --basedir "$R/objects" "$T/bad-$fmt.cfs" "$T/m"
	assert_contains "$T/err" "^cfsctl: mount: "
	if grep -q " $T/m " /proc/mounts; then fail "$fmt: a corrupt image was mounted"; fi

	# --foreground: attached until SIGTERM, which unmounts; exit 0
	"$CFSCTL" mount --fuse --foreground --basedir "$R/objects" "$R/images/$digest" "$T/m" \
		2>"$T/fg.err" &
	pid=$!
	for i in $(seq 100); do
		grep -q " $T/m fuse" /proc/mounts && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	grep -q " $T/m fuse" /proc/mounts || { cat "$T/fg.err"; fail "$fmt: --foreground did not mount"; }
	assert_eq one "$(cat "$T/m/one")" "$fmt: --foreground: one"
	kill -TERM "$pid"
	wait "$pid" || fail "$fmt: --foreground exited $? on SIGTERM"
	fuse_gone "$T/m" "$pid"

	# a changed object and one removed after the mount: each fails with one
	# line on stderr naming the path and the object; the rest reads
	cp -a "$R/objects" "$T/objs-$fmt"
	obj3=$("$CFSCTL" inspect stat --repo "$R" app /three | awk '/^backing/ { print $2 }')
	obj2=$("$CFSCTL" inspect stat --repo "$R" app /d/two | awk '/^backing/ { print $2 }')
	[ -n "$obj3" ] || fail "no backing path of /three"
	printf 'x' | dd of="$T/objs-$fmt/$obj3" bs=1 seek=5000 conv=notrunc status=none
	: >"$T/daemon.err"
	"$CFSCTL" mount --fuse --basedir "$T/objs-$fmt" "$R/images/$digest" "$T/m" 2>"$T/daemon.err" ||
		fail "$fmt: mount for the damaged objects"
	pid=$(fuse_pid "$T/m")
	cat "$T/m/three" >/dev/null 2>"$T/cat.err" && fail "$fmt: a changed object read"
	assert_contains "$T/cat.err" "Input/output error"
	assert_contains "$T/daemon.err" "^cfsctl: mount: '$R/images/$digest': '/three': object '$obj3': its fs-verity digest is not the one the image records$"
	if [ -n "$obj2" ]; then
		# EROFS keeps a file this small in the image: it has no object
		rm "$T/objs-$fmt/$obj2"
		# every object was there at mount: its open does not ask, its reads fail
		opens_reads_eio "$T/m/d/two" 0 0 || fail "$fmt: an object removed after the mount"
		assert_contains "$T/daemon.err" "^cfsctl: mount: '$R/images/$digest': '/d/two': object '$obj2': No such file or directory$"
		assert_eq 1 "$(grep -c "'/d/two'" "$T/daemon.err")" "$fmt: lines said of /d/two"
	fi
	assert_eq one "$(cat "$T/m/one")" "$fmt: the rest after a bad object"
	kill -TERM "$pid"
	fuse_gone "$T/m" "$pid"
	if [ -n "$obj2" ]; then
		# missing at mount: each open asks, and that one fails its open
		: >"$T/daemon.err"
		"$CFSCTL" mount --fuse --basedir "$T/objs-$fmt" "$R/images/$digest" "$T/m" 2>"$T/daemon.err" ||
			fail "$fmt: mount with an object missing"
		pid=$(fuse_pid "$T/m")
		python3 - "$T/m/d/two" >"$T/py.out" 2>&1 <<'PY' || { cat "$T/py.out"; fail "$fmt: an object missing at mount"; }
import errno, os, sys
try:
    os.open(sys.argv[1], os.O_RDONLY)
    sys.exit("it opened")
except OSError as e:
    assert e.errno == errno.ENOENT, "errno %d" % e.errno
PY
		assert_contains "$T/daemon.err" "^cfsctl: mount: '$R/images/$digest': '/d/two': object '$obj2': No such file or directory$"
		assert_eq one "$(cat "$T/m/one")" "$fmt: the rest with an object missing"
		kill -TERM "$pid"
		fuse_gone "$T/m" "$pid"
	fi

	# an object replaced after the mount, before its first read: it opens,
	# and its reads fail with one line
	rm -rf "$T/objs-$fmt"
	cp -a "$R/objects" "$T/objs-$fmt"
	: >"$T/daemon.err"
	"$CFSCTL" mount --fuse --basedir "$T/objs-$fmt" "$R/images/$digest" "$T/m" 2>"$T/daemon.err" ||
		fail "$fmt: mount for the replaced object"
	pid=$(fuse_pid "$T/m")
	head -c 100000 /dev/urandom >"$T/other"
	mv -f "$T/other" "$T/objs-$fmt/$obj3"
	opens_reads_eio "$T/m/three" 0 0 65536 || fail "$fmt: an object replaced after the mount"
	assert_contains "$T/daemon.err" "^cfsctl: mount: '$R/images/$digest': '/three': object '$obj3': its fs-verity digest is not the one the image records$"
	assert_eq 1 "$(grep -c "'/three'" "$T/daemon.err")" "$fmt: lines said of /three"
	assert_eq one "$(cat "$T/m/one")" "$fmt: the rest after a replaced object"
	kill -TERM "$pid"
	fuse_gone "$T/m" "$pid"
done
