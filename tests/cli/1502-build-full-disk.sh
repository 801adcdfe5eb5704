#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A full disk during cfsctl build: with the digest store on a small tmpfs,
# and with the image on one. Each gives a clear error naming what could not
# be written ("No space left on device"), exit 1, no IMAGE, no temporary
# left behind, and a store holding only complete objects with the right
# digests; with room again, the same command completes the store.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (mounts a tmpfs)"
command -v fsverity >/dev/null || skip "needs the fsverity tool (Debian package fsverity)"

# Every object in STORE is complete: its name is its fs-verity digest.
check_store() { # STORE
	local bad
	bad=$(find "$1" -type f -path "$1/??/*" -exec fsverity digest {} + |
		awk '{ sub("^sha256:", "", $1); n = split($2, p, "/");
		       if (p[n-1] p[n] != $1) print $2 }')
	[ -z "$bad" ] || fail "objects whose content does not match their name: $bad"
	[ -z "$(find "$1" -name '.tmp-*')" ] || fail "temporaries left in $1: $(find "$1" -name '.tmp-*')"
}

mkdir "$T/src" "$T/m"
for i in $(seq 1 24); do head -c $((i * 200000)) /dev/urandom >"$T/src/f$i"; done
for i in $(seq 1 300); do echo "small $i" >"$T/src/s$i"; done
mount -t tmpfs -o size=16m tmpfs "$T/m" || skip "cannot mount a tmpfs here"
trap 'umount "$T/m" 2>/dev/null; rm -rf "$T"' EXIT

# 1. The store fills up.
expect_exit 1 "$CFSCTL" build --digest-store="$T/m/store" "$T/src" "$T/img"
assert_contains "$T/err" "^cfsctl: writing the object of '.*' in the digest store '$T/m/store': No space left on device$"
[ ! -e "$T/img" ] || fail "IMAGE written although the build failed"
[ -z "$(find "$T" -maxdepth 1 -name '.img.tmp*')" ] || fail "temporary image left behind"
check_store "$T/m/store"

# With room again, the same build completes the store.
mount -o remount,size=64m "$T/m"
expect_exit 0 "$CFSCTL" build --digest-store="$T/m/store" "$T/src" "$T/img"
check_store "$T/m/store"
assert_eq 324 "$(find "$T/m/store" -type f | wc -l)" "objects after the second build"

# 2. The image does not fit: a tmpfs whose space a filler takes.
umount "$T/m"
mount -t tmpfs -o size=64k tmpfs "$T/m"
mkdir "$T/big"
for i in $(seq 1 2000); do : >"$T/big/empty-file-with-a-long-name-$i"; done
head -c 60k /dev/zero >"$T/m/filler" 2>/dev/null || :
expect_exit 1 "$CFSCTL" build "$T/big" "$T/m/img"
assert_contains "$T/err" "No space left on device"
assert_contains "$T/err" "$T/m/img"
[ ! -e "$T/m/img" ] || fail "IMAGE written although the build failed"
assert_eq "filler" "$(ls -A "$T/m")" "files on the full filesystem"
