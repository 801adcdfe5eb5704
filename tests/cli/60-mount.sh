# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount, on the host: argument checking only. Every case here fails
# before mount(2) is called (the module is never loaded on this machine;
# the VM tests in vm/ exercise real mounts).
. "$(dirname "$0")/../lib.sh"

expect_exit 0 "$CFSCTL" mount --help
assert_contains "$T/out" '^Usage: cfsctl mount '
assert_contains "$T/out" 'verity-check'
assert_contains "$T/out" 'Default 1'
assert_contains "$T/out" 'verity_check= means 0'

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

# --digest auto reads the image's fs-verity digest before mounting: a
# missing image, or one without fs-verity, fails there.
expect_exit 1 "$CFSCTL" mount --digest auto "$T/missing.cfs" "$T"
assert_contains "$T/err" "^cfsctl: mount: opening '$T/missing.cfs': No such file"
printf 'not verity' > "$T/plain.cfs"
expect_exit 1 "$CFSCTL" mount --digest auto "$T/plain.cfs" "$T"
assert_contains "$T/err" "^cfsctl: mount: measuring '$T/plain.cfs': "
