#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount in a user namespace an ordinary user made (unshare -Urm as
# nobody), as a rootless container runtime does: mount uses FUSE by itself,
# the image's root-owned tree shows as the namespace's root's, and
# overlayfs with userxattr stacked on top makes a writable root: a write,
# a delete and a read there change nothing in the store or the image.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "needs root: setpriv to become nobody"
. "$TESTS_DIR/lib/fuse.sh"
"${NOBODY[@]}" unshare -Urm true 2>/dev/null || skip "an ordinary user cannot make a user namespace here"

# A container's tree: owned by root, readable by all; no devices
# (a user namespace's mount has none)
S=$T/src
mkdir -p "$S/etc" "$S/usr/bin" "$S/var/empty"
printf 'root:x:0:0::/root:/bin/sh\n' >"$S/etc/passwd"
head -c 200000 /dev/urandom >"$S/usr/bin/tool"
chmod 755 "$S/usr/bin/tool"
ln "$S/usr/bin/tool" "$S/usr/bin/tool2"
ln -s ../usr/bin/tool "$S/etc/link"
printf 'x' >"$S/etc/small"
setfattr -n user.tag -v t "$S/etc/passwd"
touch -d '2001-02-03 04:05:06.123456789 UTC' "$S/etc/passwd"
chmod 755 "$T"
for fmt in v1 erofs; do
	"$CFSCTL" build --format="$fmt" --digest-store "$T/store" "$S" "$T/$fmt.cfs" >/dev/null ||
		fail "build --format=$fmt"
done
chmod -R a+rX "$T/store"
(cd "$T/store" && find . -type f -exec sha256sum {} + | LC_ALL=C sort) >"$T/store.before"
sha256sum "$T"/*.cfs >"$T/images.before"
mkdir "$T/ns"
chown 65534:65534 "$T/ns"

for fmt in v1 erofs; do
	W=$T/ns/$fmt
	"${NOBODY[@]}" unshare -Urm bash -c '
		set -u
		W=$1 CFSCTL=$2 img=$3 store=$4 walk=$5 src=$6
		mkdir -p "$W/lower" "$W/upper" "$W/work" "$W/root"
		"$CFSCTL" mount --basedir "$store" "$img" "$W/lower" 2>"$W/mount.err" || exit 11
		python3 "$walk" --no-owners "$src" >"$W/walk.src" || exit 12
		python3 "$walk" --no-owners "$W/lower" >"$W/walk.mnt" || exit 13
		find "$W/lower" -printf "%U:%G\n" | sort -u >"$W/owners"
		mount -t overlay overlay -o "lowerdir=$W/lower,upperdir=$W/upper,workdir=$W/work,userxattr" \
			"$W/root" || exit 14
		echo new >"$W/root/etc/new" || exit 15
		rm "$W/root/usr/bin/tool2" || exit 16
		echo more >>"$W/root/etc/passwd" || exit 17
		cat "$W/root/etc/passwd" "$W/root/etc/new" >"$W/read" || exit 18
		cmp "$W/root/usr/bin/tool" "$src/usr/bin/tool" || exit 19
		[ ! -e "$W/root/usr/bin/tool2" ] || exit 20
		ls "$W/lower/usr/bin" >"$W/lower.ls"
		umount "$W/root" || exit 21
		umount "$W/lower" || exit 22
	' _ "$W" "$CFSCTL" "$T/$fmt.cfs" "$T/store" "$WALK" "$S"
	rc=$?
	[ "$rc" = 0 ] || { cat "$W/mount.err" 2>/dev/null; fail "$fmt: step $rc in the user namespace failed"; }
	assert_contains "$W/mount.err" "^cfsctl: mount: not root: serving '$T/$fmt.cfs' with FUSE \(as --fuse\)$"
	diff -u "$W/walk.src" "$W/walk.mnt" || fail "$fmt: in the user namespace the mount shows another tree"
	assert_eq "0:0" "$(cat "$W/owners")" "$fmt: owners in the namespace"
	printf 'root:x:0:0::/root:/bin/sh\nmore\nnew\n' | cmp - "$W/read" || fail "$fmt: what the overlay read back"
	printf 'tool\ntool2\n' | cmp - "$W/lower.ls" || fail "$fmt: the delete reached the lower layer"
	[ -f "$W/upper/etc/new" ] || fail "$fmt: the write is not in the upper layer"
	# the namespace is gone: so is the daemon, and nothing stays mounted
	fuse_gone "$W/lower"
done
(cd "$T/store" && find . -type f -exec sha256sum {} + | LC_ALL=C sort) | cmp - "$T/store.before" ||
	fail "the store changed"
sha256sum "$T"/*.cfs | cmp - "$T/images.before" || fail "an image changed"
