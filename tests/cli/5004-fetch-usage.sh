#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl fetch: usage errors exit 2, a bad image or store exits 1 with a
# message naming it, an object of the wrong size already in the store is
# reported (not silently kept or replaced), and a failed write of the
# --json summary is an error. Many missing objects are summed up on stderr.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

expect_exit 0 "$CFSCTL" fetch --help
assert_contains "$T/out" "^Usage: cfsctl fetch \[OPTIONS\] --basedir DIR\[:DIR...\] --url URL"
assert_contains "$T/out" "--retries N"

make_source "$T/src" 5 0 0
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"
U="file://$T/served"

expect_exit 2 "$CFSCTL" fetch --url "$U" "$T/a.img"
assert_contains "$T/err" "--basedir DIR is required"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" "$T/a.img"
assert_contains "$T/err" "--url URL is required"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "$U"
assert_contains "$T/err" "no IMAGE"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "ftp://example.org/" "$T/a.img"
assert_contains "$T/err" "ftp://example.org/"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "$U" --jobs 0 "$T/a.img"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "$U" --jobs 1000 "$T/a.img"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "$U" --retries -1 "$T/a.img"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "$U" --timeout 0 "$T/a.img"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s" --url "$U" --bogus "$T/a.img"
[ ! -e "$T/s" ] || fail "a usage error created the store"

# images that cannot be read
expect_exit 1 "$CFSCTL" fetch --basedir "$T/s" --url "$U" "$T/nonexistent.img"
assert_contains "$T/err" "^cfsctl: fetch: opening image: '$T/nonexistent.img': "
head -c 100 /dev/urandom >"$T/junk.img"
expect_exit 1 "$CFSCTL" fetch --basedir "$T/s" --url "$U" "$T/junk.img"
assert_contains "$T/err" "junk.img"
# a store whose parent does not exist
expect_exit 1 "$CFSCTL" fetch --basedir "$T/no/such/dir" --url "$U" "$T/a.img"
assert_contains "$T/err" "^cfsctl: cannot create digest store '$T/no/such/dir': "

# an object of the wrong size in the store: reported, left alone
mkdir -p "$T/s"
bad=$(sed -n 1p "$T/all")
mkdir -p "$T/s/${bad%%/*}"
echo "not the object" >"$T/s/$bad"
expect_exit 1 "$CFSCTL" fetch --json --basedir "$T/s" --url "$U" "$T/a.img"
assert_contains "$T/err" "missing object: '$bad'.*has 15 bytes, the image says"
assert_eq 1 "$(json_get "$T/out" failed)" "objects still missing"
assert_eq "not the object" "$(cat "$T/s/$bad")" "the wrong object"
rm "$T/s/$bad"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/s" --url "$U" "$T/a.img"
assert_store "$T/s" "$T/all"

# stdout that cannot be written
if [ -w /dev/full ]; then
	expect_exit 1 sh -c '"$0" fetch --json --basedir "$1" --url "$2" "$3" >/dev/full' \
		"$CFSCTL" "$T/s" "$U" "$T/a.img"
	assert_contains "$T/err" "write error"
fi

# Many objects missing (a mirror that has none): stderr lists the first 20
# and says how many in all; --json still lists every one.
make_source "$T/src30" 30 0 0
make_image "$T/src30" "$T/b.img" "$T/served30"
mkdir "$T/empty"
expect_exit 1 "$CFSCTL" fetch --json --basedir "$T/s30" --url "file://$T/empty" "$T/b.img"
assert_eq 20 "$(grep -c "missing object: .*not found on any mirror" "$T/err")" "missing objects listed on stderr"
assert_contains "$T/err" "fetch: 30 objects missing in all; the first 20 are listed above \(--json lists every one\)"
assert_eq 30 "$(json_get "$T/out" failed)" "objects missing in the summary"
assert_eq 30 "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["missing"]))' "$T/out")" \
	"objects listed in the JSON"
