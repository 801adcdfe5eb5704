#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# An image written to a path shows no one the content of a file they could
# not read in the tree (docs/security.md). An EROFS image keeps a file of up
# to 64 bytes inline, as mkcomposefs does, byte for byte: so an image that
# holds such a file, unreadable by others (its mode, or a directory above
# it they cannot search), is written 0600, and any other image 0644, less
# the umask. A composefs 1.0 image holds no content: 0644.
. "$(dirname "$0")/../lib/common.sh"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody "$CFSCTL" --version >/dev/null 2>&1 || skip "cfsctl cannot be run as user nobody here"
chmod 0755 "$T"
umask 022

secret='cfs-secret-0123456789abcdef-token!!'  # 35 bytes and a newline: 36
mkdir -p "$T/tree/etc" "$T/tree/pub"
echo "$secret" >"$T/tree/etc/token"
assert_eq 36 "$(stat -c %s "$T/tree/etc/token")" "size of the secret file"
echo "hello" >"$T/tree/pub/hello"
head -c 5000 /dev/urandom >"$T/tree/pub/big"

# build FORMAT NAME: the image of $T/tree to $T/NAME; its mode
build() {
	expect_exit 0 "$CFSCTL" build --format="$1" --digest-store="$T/store" "$T/tree" "$T/$2"
	stat -c %a "$T/$2"
}

# the secret, 0600: the image holds its bytes (inline, as mkcomposefs's
# does), and only its owner can read the image
chmod 0600 "$T/tree/etc/token"
assert_eq 600 "$(build erofs a.erofs)" "mode of an image holding a 0600 file inline"
grep -qF "$secret" "$T/a.erofs" || fail "the 36-byte file is not inline in the image"
! nobody cat "$T/a.erofs" >/dev/null 2>&1 || fail "nobody read the image"
expect_exit 0 "$CFSCTL" inspect dump "$T/a.erofs"
cp "$T/out" "$T/a.dump"

# the same bytes whatever the image's mode: rebuilt from the dump, the image
# is identical
expect_exit 0 "$CFSCTL" build --from-dump --format=erofs --digest-store="$T/store" "$T/a.dump" "$T/a2.erofs"
cmp -s "$T/a.erofs" "$T/a2.erofs" || fail "the image of the dump differs from the tree's"
assert_eq 600 "$(stat -c %a "$T/a2.erofs")" "mode of the image of the dump"

# readable by all, below a directory all can search: 0644, nobody reads it
chmod 0644 "$T/tree/etc/token"
assert_eq 644 "$(build erofs b.erofs)" "mode of an image whose files all can read"
nobody cat "$T/b.erofs" >/dev/null || fail "nobody could not read an image that hides nothing"

# readable by all, below a directory others cannot search: 0600
chmod 0750 "$T/tree/etc"
assert_eq 600 "$(build erofs c.erofs)" "mode of an image with a file below a 0750 directory"
chmod 0755 "$T/tree/etc"

# a large 0600 file is not in the image (its object is in the store): 0644
chmod 0600 "$T/tree/pub/big"
assert_eq 644 "$(build erofs d.erofs)" "mode of an image whose private file is an object"
chmod 0644 "$T/tree/pub/big"

# composefs 1.0 holds no content: 0644 with the secret 0600
chmod 0600 "$T/tree/etc/token"
assert_eq 644 "$(build v1 e.img)" "mode of a composefs 1.0 image"
! grep -qF "$secret" "$T/e.img" || fail "the composefs 1.0 image holds the secret"

# the umask still takes bits away
(umask 077 && chmod 0644 "$T/tree/etc/token" &&
	"$CFSCTL" build --format=erofs "$T/tree" "$T/f.erofs") || fail "build under umask 077"
assert_eq 600 "$(stat -c %a "$T/f.erofs")" "mode of an image under umask 077"
echo "ok"
