# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount, on the host: argument checking only. Every case here fails
# before mount(2) is called (the module is never loaded on this machine;
# the VM tests in vm/ exercise real mounts).
. "$(dirname "$0")/../lib/common.sh"

expect_exit 0 "$CFSCTL" mount --help
assert_contains "$T/out" '^Usage: cfsctl mount '
assert_contains "$T/out" 'verity-check'
assert_contains "$T/out" 'Default 1'
assert_contains "$T/out" 'verity_check= means 0'
assert_contains "$T/out" '^  --idmap=USERNS'

expect_exit 2 "$CFSCTL" mount
assert_contains "$T/err" 'need IMAGE and MOUNTPOINT'
expect_exit 2 "$CFSCTL" mount only-one-arg
expect_exit 2 "$CFSCTL" mount --verity-check 3 img mnt
assert_contains "$T/err" 'verity-check must be 0, 1 or 2'
expect_exit 2 "$CFSCTL" mount --verity-check 11 img mnt
expect_exit 2 "$CFSCTL" mount --digest abc img mnt
assert_contains "$T/err" "digest must be 'auto' or 64 hex digits"
expect_exit 2 "$CFSCTL" mount --digest "$(printf 'z%.0s' $(seq 64))" img mnt
expect_exit 2 "$CFSCTL" mount --basedir a,b img mnt
assert_contains "$T/err" "no ','"
expect_exit 2 "$CFSCTL" mount --bogus img mnt

# --idmap takes a user namespace, checked before anything is mounted.
expect_exit 1 "$CFSCTL" mount --idmap "$T/missing-ns" img mnt
assert_contains "$T/err" "^cfsctl: mount: opening '$T/missing-ns': No such file"
expect_exit 1 "$CFSCTL" mount --idmap /dev/null img mnt
assert_contains "$T/err" "^cfsctl: mount: '/dev/null': not a user namespace"

# --digest auto reads the image's fs-verity digest before mounting: a
# missing image, or one without fs-verity, fails there.
expect_exit 1 "$CFSCTL" mount --digest auto "$T/missing.cfs" "$T"
assert_contains "$T/err" "^cfsctl: mount: opening '$T/missing.cfs': No such file"
printf 'not verity' > "$T/plain.cfs"
expect_exit 1 "$CFSCTL" mount --digest auto "$T/plain.cfs" "$T"
assert_contains "$T/err" "^cfsctl: mount: measuring '$T/plain.cfs': "

# EROFS images: --upperdir needs --workdir; a wrong --digest is refused
# before anything is mounted.
expect_exit 2 "$CFSCTL" mount --upperdir "$T/u" img mnt
assert_contains "$T/err" "upperdir and --workdir go together"
mkdir -p "$T/etree" && printf 'x\n' > "$T/etree/f"
"$CFSCTL" build --format=erofs "$T/etree" "$T/e.erofs" > /dev/null
expect_exit 1 "$CFSCTL" mount --basedir "$T" --digest "$(printf '0%.0s' $(seq 64))" "$T/e.erofs" "$T"
assert_contains "$T/err" "^cfsctl: mount: measuring '$T/e.erofs': "
expect_exit 2 "$CFSCTL" mount --verity-check 1 "$T/e.erofs" "$T"
assert_contains "$T/err" "verity-check is not for EROFS images"

# mount.composefs turns mount(8)'s -o options into cfsctl mount options.
mkdir -p "$T/helper"
cp "$(dirname "$0")/../../cmd/mount.composefs" "$T/helper/"
printf '#!/bin/sh\necho "$@"\n' > "$T/helper/cfsctl"
chmod +x "$T/helper/cfsctl"
expect_exit 0 "$T/helper/mount.composefs" img mnt -o ro,basedir=/s:/t,digest=auto,verity_check=2
assert_contains "$T/out" '^mount --basedir=/s:/t --digest=auto --verity-check=2 img mnt$'
expect_exit 0 "$T/helper/mount.composefs" img mnt -n -o upperdir=/u -o workdir=/w
assert_contains "$T/out" '^mount --upperdir=/u --workdir=/w img mnt$'
expect_exit 0 "$T/helper/mount.composefs" img mnt -o idmap=/proc/1/ns/user
assert_contains "$T/out" '^mount --idmap=/proc/1/ns/user img mnt$'
expect_exit 2 "$T/helper/mount.composefs" img mnt -o bogus
assert_contains "$T/err" "unknown option 'bogus'"
