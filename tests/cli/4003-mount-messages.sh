#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount's refusals name what is wrong and say what to do, before
# mount(2) is called: an EROFS image without --basedir, a mount point that
# is missing or no directory (named, not the image), a caller without
# CAP_SYS_ADMIN, and --digest on a filesystem without fs-verity.
. "$(dirname "$0")/../lib/common.sh"

mkdir -p "$T/src" "$T/mnt"
echo hello >"$T/src/f"
head -c 5000 /dev/urandom >"$T/src/big"
expect_exit 0 "$CFSCTL" build --format=erofs --digest-store "$T/store" "$T/src" "$T/e.cfs"
expect_exit 0 "$CFSCTL" build --digest-store "$T/store" "$T/src" "$T/v1.cfs"

expect_exit 2 "$CFSCTL" mount "$T/e.cfs" "$T/mnt"
assert_contains "$T/err" "^cfsctl: mount: EROFS images need --basedir DIR \(or --repo DIR\)"
! grep -q 'lowerdir' "$T/err" || fail "the kernel's words, not ours: $(cat "$T/err")"

for img in e.cfs v1.cfs; do
	expect_exit 1 "$CFSCTL" mount --basedir "$T/store" "$T/$img" "$T/nosuch"
	assert_eq "cfsctl: mount: mount point '$T/nosuch': No such file or directory" "$(cat "$T/err")" \
		"a missing mount point for $img"
	expect_exit 1 "$CFSCTL" mount --basedir "$T/store" "$T/$img" "$T/src/f"
	assert_eq "cfsctl: mount: mount point '$T/src/f': Not a directory" "$(cat "$T/err")" \
		"a mount point that is a file, for $img"
done

# Not root: no CAP_SYS_ADMIN, said before anything is tried, for a mount
# that FUSE cannot make (an upper layer; without one, mount uses FUSE:
# tests/cli/4004-mount-fuse.sh).
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
	chmod 755 "$T"
	chmod -R a+rX "$T/src" "$T/store" "$T/e.cfs"
	expect_exit 1 setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$CFSCTL" mount --basedir "$T/store" --upperdir "$T/u" --workdir "$T/w" "$T/e.cfs" "$T/mnt"
	assert_eq "cfsctl: mount: mounting '$T/e.cfs' needs CAP_SYS_ADMIN: run it as root" \
		"$(cat "$T/err")" "the refusal of a caller without CAP_SYS_ADMIN"
else
	echo "not root, or no setpriv: the CAP_SYS_ADMIN case is not run"
fi

# --digest on a filesystem without fs-verity: tmpfs has none.
if [ "$(id -u)" = 0 ] && mkdir "$T/tmpfs" && mount -t tmpfs none "$T/tmpfs" 2>/dev/null; then
	trap 'umount "$T/tmpfs" 2>/dev/null; rm -rf "$T"' EXIT
	cp "$T/e.cfs" "$T/tmpfs/"
	expect_exit 1 "$CFSCTL" mount --digest auto --basedir "$T/store" "$T/tmpfs/e.cfs" "$T/mnt"
	msg="$(cat "$T/err")"
	expect_exit 1 "$CFSCTL" mount --digest "$(printf '0%.0s' $(seq 64))" --basedir "$T/store" \
		"$T/tmpfs/e.cfs" "$T/mnt"
	msg2="$(cat "$T/err")"
	umount "$T/tmpfs"
	want="cfsctl: mount: measuring '$T/tmpfs/e.cfs': its filesystem has no fs-verity, which --digest needs"
	assert_eq "$want (on ext4: tune2fs -O verity)" "$msg" "--digest auto without fs-verity"
	assert_eq "$want (on ext4: tune2fs -O verity)" "$msg2" "--digest HEX without fs-verity"
else
	skip "cannot mount a tmpfs (not root?): the fs-verity case is not run"
fi
