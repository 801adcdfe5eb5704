#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Bad input to cfsctl build gives exit 1, an error naming the path, and no
# image: an unreadable file or directory (run as an unprivileged user), an
# xattr set over 4096 bytes (tmpfs allows one), a file that grows while the
# build runs, and a failure while an older IMAGE exists, which must then be
# left as it was.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (to run a part as another user)"

# An image at IMAGE survives a failed build unchanged.
expect_exit 0 "$CFSCTL" build "$TOP/examples/tree" "$T/keep.img"
cp "$T/keep.img" "$T/keep.orig"
expect_exit 1 "$CFSCTL" build "$T/missing" "$T/keep.img"
cmp "$T/keep.img" "$T/keep.orig" || fail "failed build changed the existing image"

# A file that grows between the scan and the read: another process appends
# to it all the time, so its size differs (in at least one of three tries).
mkdir "$T/grow"
yes 0123456789abcdef >"$T/grow/log" &
writer=$!
changed=0
for try in 1 2 3; do
	rm -f "$T/grow.img"
	"$CFSCTL" build --digest-store="$T/gstore" "$T/grow" "$T/grow.img" 2>"$T/err" && continue
	assert_contains "$T/err" "'$T/grow/log': the file changed while it was read"
	[ ! -e "$T/grow.img" ] || fail "image written although a file changed"
	changed=1
	break
done
kill "$writer"
wait "$writer" 2>/dev/null
[ "$changed" = 1 ] || fail "a file growing all the time was never noticed"
[ -z "$(find "$T/gstore" -name '.*' 2>/dev/null)" ] || fail "temporary object left"

# Unreadable file / directory, as user nobody.
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
setpriv --reuid=65534 --regid=65534 --clear-groups "$CFSCTL" --version >/dev/null 2>&1 ||
	skip "cfsctl cannot be run as user nobody here"
chmod 0755 "$T"
mkdir -m 0755 "$T/u" "$T/u/sub"
mkdir -m 0777 "$T/o"
printf 'fine' >"$T/u/ok"
printf 'secret' >"$T/u/sub/secret"
chmod 0644 "$T/u/ok"
chmod 0000 "$T/u/sub/secret"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
expect_exit 1 nobody "$CFSCTL" build --digest-store="$T/o/store" "$T/u" "$T/o/img"
assert_contains "$T/err" "^cfsctl: .*'$T/u/sub/secret': Permission denied"
[ ! -e "$T/o/img" ] || fail "image written despite an unreadable file"
[ -z "$(find "$T/o" -name '.*')" ] || fail "temporary files left: $(find "$T/o" -name '.*')"
chmod 0644 "$T/u/sub/secret"
chmod 0000 "$T/u/sub"
expect_exit 1 nobody "$CFSCTL" build "$T/u" "$T/o/img"
assert_contains "$T/err" "^cfsctl: .*'$T/u/sub': Permission denied"
[ ! -e "$T/o/img" ] || fail "image written despite an unreadable directory"
chmod 0755 "$T/u/sub"
expect_exit 0 nobody "$CFSCTL" build "$T/u" "$T/o/img"

# An xattr set too large for the format, where the filesystem allows it.
shm=$(mktemp -d /dev/shm/cfs-test.XXXXXX 2>/dev/null) || skip "no /dev/shm"
trap 'rm -rf "$shm"; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
printf 'x' >"$shm/big-xattrs"
v=$(printf 'v%.0s' $(seq 3000))
if setfattr -n user.one -v "$v" "$shm/big-xattrs" 2>/dev/null &&
	setfattr -n user.two -v "$v" "$shm/big-xattrs" 2>/dev/null; then
	expect_exit 1 "$CFSCTL" build "$shm" "$T/x.img"
	assert_contains "$T/err" "'/big-xattrs': xattrs take more than 4096 bytes"
	[ ! -e "$T/x.img" ] || fail "image written despite oversized xattrs"
	expect_exit 0 "$CFSCTL" build --skip-xattrs "$shm" "$T/x.img"
else
	echo "note: tmpfs here does not take user.* xattrs of 3000 bytes"
fi
echo "ok"
