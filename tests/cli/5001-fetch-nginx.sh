#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl fetch, the happy path: nginx on 127.0.0.1 serves a digest store
# made by cfsctl build (many small objects, a few large ones, a duplicate
# and an empty file); fetch fills an empty store with exactly those objects,
# a rerun fetches nothing, lost objects are fetched again, two images share
# their objects, and file:// URLs work too.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

make_source "$T/src" 300 3 2048
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/want"
n=$(wc -l <"$T/want")
[ "$n" -eq 303 ] || fail "the served store holds $n objects, expected 303"
start_nginx "$T/served"

# an empty store, filled over HTTP
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "$NGINX_URL" "$T/a.img"
assert_store "$T/store" "$T/want"
assert_eq 303 "$(json_get "$T/out" fetched)" "objects fetched"
assert_eq 0 "$(json_get "$T/out" already_present)" "already present"
assert_eq 0 "$(json_get "$T/out" failed)" "failed"
bytes=$(cd "$T/served" && find . -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
assert_eq "$bytes" "$(json_get "$T/out" bytes)" "bytes fetched"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "a successful fetch printed to stderr"; }

# a rerun has nothing to do
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "$NGINX_URL/" "$T/a.img"
assert_eq 0 "$(json_get "$T/out" fetched)" "fetched on rerun"
assert_eq 303 "$(json_get "$T/out" already_present)" "present on rerun"

# without --json nothing on stdout
expect_exit 0 "$CFSCTL" fetch --basedir "$T/store" --url "$NGINX_URL" "$T/a.img"
[ ! -s "$T/out" ] || fail "fetch without --json wrote to stdout"

# lost objects come back, and only they are fetched
rm -f "$T/store/$(sed -n 5p "$T/want")" "$T/store/$(sed -n 300p "$T/want")"
rm -rf "$T/store/$(sed -n 100p "$T/want" | cut -c1-2)"
gone=$(( 303 - $(store_files "$T/store" | wc -l) ))
expect_exit 0 "$CFSCTL" fetch --json -j 4 --basedir "$T/store" --url "$NGINX_URL" "$T/a.img"
assert_eq "$gone" "$(json_get "$T/out" fetched)" "refetched objects"
assert_store "$T/store" "$T/want"

# a second image sharing objects, and a second basedir that holds some
mkdir -p "$T/src2"
cp -r "$T/src/small" "$T/src2/"
echo "only in the second image" >"$T/src2/new"
make_image "$T/src2" "$T/b.img" "$T/served"
store_files "$T/served" >"$T/want2"
mkdir -p "$T/ro/$(sed -n 1p "$T/want" | cut -c1-2)"
cp "$T/served/$(sed -n 1p "$T/want")" "$T/ro/$(sed -n 1p "$T/want")"
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store2:$T/ro" \
	--url "$NGINX_URL" "$T/a.img" "$T/b.img"
assert_eq 304 "$(json_get "$T/out" objects)" "objects of both images"
assert_eq 303 "$(json_get "$T/out" fetched)" "fetched with a second basedir"
assert_eq 1 "$(json_get "$T/out" already_present)" "found in the second basedir"
grep -vxF "$(sed -n 1p "$T/want")" "$T/want2" >"$T/want2b"
assert_store "$T/store2" "$T/want2b"

# file:// mirrors
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store3" --url "file://$T/served" "$T/a.img"
assert_eq 303 "$(json_get "$T/out" fetched)" "objects fetched from file://"
assert_store "$T/store3" "$T/want"

# on a terminal, a progress line that is erased at the end
if command -v script >/dev/null; then
	rm -rf "$T/store4"
	script -qec "'$CFSCTL' fetch --basedir '$T/store4' --url '$NGINX_URL' '$T/a.img'" \
		/dev/null >"$T/tty" </dev/null || fail "fetch on a terminal failed"
	assert_contains "$T/tty" "fetch: 303/303 \(100%\)"
	assert_contains "$T/tty" $'\r\033\\[K$'
	assert_store "$T/store4" "$T/want"
fi
