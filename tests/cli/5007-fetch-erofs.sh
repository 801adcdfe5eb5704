#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl fetch of a composefs 1.0 (EROFS) image: nginx serves the digest
# store its build filled; fetch fills an empty store with exactly the
# objects of the files over 64 bytes (the smaller ones live in the image),
# named by the fs-verity digests fsverity(1) computes from the source; a
# rerun fetches nothing; a v1 and an EROFS image of the same tree fetched
# together share their objects; verify --basedir then passes.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

make_source "$T/src" 200 2 1024
"$CFSCTL" build --format=erofs --digest-store="$T/served" "$T/src" "$T/e.img" >"$T/build.out" 2>&1 ||
	{ cat "$T/build.out"; fail "cfsctl build --format=erofs failed"; }
"$CFSCTL" build --digest-store="$T/served" "$T/src" "$T/v1.img" >"$T/build.out" 2>&1 ||
	{ cat "$T/build.out"; fail "cfsctl build failed"; }

# What each image needs, from the source: every distinct non-empty content
# for v1, those over 64 bytes for EROFS.
(cd "$T/src" && find . -type f -size +0c -printf '%s %p\n') | while read -r size path; do
	d=$(fsverity digest --compact "$T/src/$path") || exit 1
	echo "${d:0:2}/${d:2}" >>"$T/want-v1.all"
	[ "$size" -gt 64 ] && echo "${d:0:2}/${d:2}" >>"$T/want-e.all"
done || fail "fsverity digest failed"
LC_ALL=C sort -u "$T/want-v1.all" >"$T/want-v1"
LC_ALL=C sort -u "$T/want-e.all" >"$T/want-e"
ne=$(wc -l <"$T/want-e")
nv=$(wc -l <"$T/want-v1")
[ "$ne" -gt 50 ] && [ "$ne" -lt "$nv" ] || fail "$ne EROFS and $nv v1 objects: the source does not test inlining"
LC_ALL=C "$CFSCTL" inspect objects "$T/e.img" | diff - "$T/want-e" >/dev/null ||
	fail "inspect objects of the EROFS image is not the set of files over 64 bytes"
start_nginx "$T/served"

expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "$NGINX_URL" "$T/e.img"
assert_store "$T/store" "$T/want-e"
assert_eq "$ne" "$(json_get "$T/out" objects)" "objects of the EROFS image"
assert_eq "$ne" "$(json_get "$T/out" fetched)" "objects fetched"
assert_eq 0 "$(json_get "$T/out" failed)" "failed"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "a successful fetch printed to stderr"; }
expect_exit 0 "$CFSCTL" verify --basedir "$T/store" "$T/e.img"
assert_contains "$T/out" "^verify: OK: 0 errors"

expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "$NGINX_URL" "$T/e.img"
assert_eq 0 "$(json_get "$T/out" fetched)" "fetched on rerun"
assert_eq "$ne" "$(json_get "$T/out" already_present)" "present on rerun"

# both formats at once, into an empty store: the union, each object once
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/both" --url "$NGINX_URL" "$T/v1.img" "$T/e.img"
assert_store "$T/both" "$T/want-v1"
assert_eq "$nv" "$(json_get "$T/out" fetched)" "objects fetched for both images"

# one object lost: only it is fetched again
rm -f "$T/store/$(sed -n 3p "$T/want-e")"
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "$NGINX_URL" "$T/e.img"
assert_eq 1 "$(json_get "$T/out" fetched)" "objects fetched after one was lost"
assert_store "$T/store" "$T/want-e"
exit 0
