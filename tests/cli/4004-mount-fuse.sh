#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount --fuse, both formats, on this machine's kernel: as root and
# as an ordinary user (nobody, through fusermount3), a walk of the mount
# equals a walk of the source tree as that user sees it: owners, modes,
# nanosecond times, sizes, devices, fifos, symlinks, hardlinks with their
# nlink and one inode number, every xattr under its own name (for EROFS
# images, composefs's own hidden and escaped ones unescaped), ACLs, and
# every byte of content; the image's modes refuse what they forbid. It
# returns once mounted; umount, SIGTERM and fusermount3 -u unmount it and
# the daemon is gone. Without root, mount uses FUSE and says so. A
# directory of 1500 entries is listed across several readdirs.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "needs root: the tree has devices and trusted.* xattrs, and the test runs setpriv"
. "$TESTS_DIR/lib/fuse.sh"

fuse_tree "$T/src"
# a directory listed in several readdirs (each goes on where the last stopped)
mkdir "$T/src/many"
for i in $(seq 1500); do
	: >"$T/src/many/an-entry-with-a-name-long-enough-to-fill-the-kernel-buffer-soon-$i"
done
chmod 755 "$T"
mkdir -p "$T/m" "$T/um"
chown 65534:65534 "$T/um"

for fmt in v1 erofs; do
	"$CFSCTL" build --format="$fmt" --digest-store "$T/store-$fmt" "$T/src" "$T/$fmt.cfs" >/dev/null ||
		fail "build --format=$fmt"

	# root: returns once mounted, says nothing, and shows the tree exactly
	expect_exit 0 "$CFSCTL" mount --fuse --basedir "$T/store-$fmt" "$T/$fmt.cfs" "$T/m"
	[ -s "$T/err" ] && fail "mount --fuse as root said: $(cat "$T/err")"
	opts=$(awk -v m="$T/m" '$2 == m { print $3, $4 }' /proc/mounts)
	case "$opts" in
	"fuse.cfs ro,"*default_permissions*) ;;
	*) fail "$fmt: the mount's type and options are '$opts'" ;;
	esac
	case "$opts" in *nosuid* | *nodev*) fail "$fmt: root's mount is '$opts', not suid,dev as the kernel's" ;; esac
	pid=$(fuse_pid "$T/m")
	[ -n "$pid" ] || fail "$fmt: no daemon serves '$T/m'"
	walk_eq "$T/src" "$T/m"
	# hardlinks: one inode number, nlink 3 as in the tree
	assert_eq "$(stat -c '%i %h' "$T/m/file")" "$(stat -c '%i %h' "$T/m/sticky/hardlink2")" "$fmt: hardlinks' inode"
	assert_eq 3 "$(stat -c %h "$T/m/hardlink")" "$fmt: nlink of a hardlink"
	# a 0/0 character device shows as itself, the escaped overlay xattr unescaped
	assert_eq "character special file 0:0" "$(stat -c '%F %t:%T' "$T/m/whiteout")" "$fmt: whiteout"
	assert_eq y "$(getfattr --only-values -n trusted.overlay.opaque "$T/m/sticky")" "$fmt: trusted.overlay.opaque"
	getfattr -d -m - --absolute-names "$T/m/file" "$T/m/blocks" | grep -q 'overlay\.\(metacopy\|redirect\)' &&
		fail "$fmt: composefs's own overlay xattrs show"
	# read-only
	(echo x >"$T/m/new") 2>/dev/null && fail "$fmt: the mount took a new file"
	if [ "$fmt" = v1 ]; then
		umount "$T/m" || fail "umount '$T/m'"
	else
		kill -TERM "$pid"
	fi
	fuse_gone "$T/m" "$pid"

	# nobody: FUSE by itself, said in one line; their own copy of the
	# store and image, as they would have
	cp -a "$T/store-$fmt" "$T/ustore-$fmt"
	cp "$T/$fmt.cfs" "$T/u-$fmt.cfs"
	chown -R 65534:65534 "$T/ustore-$fmt" "$T/u-$fmt.cfs"
	expect_exit 0 "${NOBODY[@]}" "$CFSCTL" mount --basedir "$T/ustore-$fmt" "$T/u-$fmt.cfs" "$T/um"
	assert_eq 1 "$(wc -l <"$T/err")" "lines on stderr from an ordinary user's mount"
	assert_contains "$T/err" "^cfsctl: mount: not root: serving '$T/u-$fmt.cfs' with FUSE \(as --fuse\)$"
	opts=$(awk -v m="$T/um" '$2 == m { print $4 }' /proc/mounts)
	case "$opts" in
	ro,nosuid,nodev,*user_id=65534*default_permissions*) ;;
	*) fail "$fmt: an ordinary user's mount has the options '$opts'" ;;
	esac
	pid=$(fuse_pid "$T/um")
	walk_eq "$T/src" "$T/um" "${NOBODY[@]}"
	# what the image's modes forbid is refused, as in the tree; root may not enter either
	"${NOBODY[@]}" cat "$T/um/secret" >/dev/null 2>&1 && fail "$fmt: nobody read a 0600 file of uid 1234"
	"${NOBODY[@]}" cat "$T/um/acl" >/dev/null 2>&1 && fail "$fmt: nobody read a file its ACL forbids them"
	"${NOBODY[@]}" cat "$T/um/file" >/dev/null || fail "$fmt: nobody cannot read a 0644 file"
	"${NOBODY[@]}" fusermount3 -u "$T/um" || fail "fusermount3 -u '$T/um'"
	fuse_gone "$T/um" "$pid"
done
