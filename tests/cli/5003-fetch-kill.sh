#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# kill -9 during cfsctl fetch: the small objects have arrived, the large
# ones are half received (the server stalls them) and held in temporary
# files. After the kill the store holds exactly the complete, verified
# objects and nothing partial or temporary; a rerun completes it.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

make_source "$T/src" 20 3 4096
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"
(cd "$T/served" && find . -type f -size -1048576c | sed 's|^\./||' | LC_ALL=C sort) >"$T/small"
assert_eq 20 "$(wc -l <"$T/small")" "small objects"

start_server stall "$T/served" stall --min-size 1048576
"$CFSCTL" fetch --timeout 600 --basedir "$T/store" --url "$SERVER_URL" "$T/a.img" \
	>"$T/fetch.out" 2>&1 &
pid=$!
for i in $(seq 200); do
	[ "$(grep -c '^stall ' "$T/stall.log" 2>/dev/null)" -ge 3 ] &&
		[ "$(store_files "$T/store" 2>/dev/null | wc -l)" -ge 20 ] && break
	kill -0 $pid 2>/dev/null || { cat "$T/fetch.out"; fail "fetch ended before the kill"; }
	sleep 0.1
done
[ "$(grep -c '^stall ' "$T/stall.log")" -ge 3 ] || fail "the large objects were not requested"
sleep 0.5 # let the first halves land in the temporary files
# the half objects live in temporary files the store does not show
partial=$(ls -l "/proc/$pid/fd" 2>/dev/null | grep -c "$T/store/.*(deleted)\|$T/store/\.cfs-fetch\.")
[ "$partial" -ge 1 ] || { ls -l "/proc/$pid/fd"; fail "no temporary file open at the time of the kill"; }
kill -9 $pid
wait $pid 2>/dev/null
assert_store "$T/store" "$T/small"

# a rerun with a working server completes the store
stop_servers
start_server ok "$T/served" ok
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq 3 "$(json_get "$T/out" fetched)" "objects fetched by the rerun"
assert_eq 20 "$(json_get "$T/out" already_present)" "objects kept from the killed run"
assert_store "$T/store" "$T/all"
