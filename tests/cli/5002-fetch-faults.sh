#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl fetch against servers that fail: 404, 500 then success, a
# truncated body, wrong bytes of the right length, a body that stalls past
# --timeout, reset connections, and one good mirror behind a bad one. After
# each case the store holds exactly the objects that verified, nothing else.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

make_source "$T/src" 12 1 256
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"
n=$(wc -l <"$T/all")
: >"$T/none"
F=(fetch --json --retries 2 --timeout 2)

# run_case NAME MODE [SERVER ARGS...]: a fresh store, one server
run_case() {
	local name=$1 mode=$2
	shift 2
	stop_servers
	rm -rf "$T/store"
	start_server "$name" "$T/served" "$mode" "$@"
}

# 404 everywhere: unavailable, listed, exit 1, nothing stored
run_case s404 404
expect_exit 1 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" unavailable)" "unavailable objects"
assert_eq "$n" "$(json_get "$T/out" failed)" "missing objects"
assert_eq "$n" "$(grep -c "missing object: '[0-9a-f][0-9a-f]/[0-9a-f]\{62\}'.*not found on any mirror" "$T/err")" \
	"missing objects listed on stderr"
assert_eq "$n" "$(wc -l <"$T/s404.log")" "requests for missing objects (404 is not retried)"
assert_store "$T/store" "$T/none"

# 500 once per object, then success: retried, all there
run_case s500 500 --times 1
expect_exit 0 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" fetched)" "fetched after 500"
assert_eq "$n" "$(json_get "$T/out" retries)" "retries after 500"
assert_store "$T/store" "$T/all"

# 500 forever: given up after --retries, three requests per object
run_case s500b 500
expect_exit 1 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq $((3 * n)) "$(wc -l <"$T/s500b.log")" "requests with --retries 2"
assert_contains "$T/err" "HTTP 500"
assert_store "$T/store" "$T/none"

# truncated bodies: always (fails, nothing stored), then once (retried)
run_case strunc truncate
expect_exit 1 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" failed)" "truncated objects"
assert_store "$T/store" "$T/none"
run_case strunc1 truncate --times 1
expect_exit 0 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_store "$T/store" "$T/all"

# wrong bytes of the right length: rejected, not retried on that mirror
run_case scorrupt corrupt
expect_exit 1 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" rejected)" "rejected objects"
assert_eq "$n" "$(wc -l <"$T/scorrupt.log")" "requests for corrupt objects"
assert_contains "$T/err" "fs-verity digest"
assert_store "$T/store" "$T/none"

# a body that stalls past --timeout: given up on, nothing stored
run_case sstall stall
start=$(date +%s)
expect_exit 1 "$CFSCTL" fetch --json --retries 0 --timeout 1 --basedir "$T/store" \
	--url "$SERVER_URL" "$T/a.img"
[ $(( $(date +%s) - start )) -lt 30 ] || fail "a stalled fetch took too long"
assert_contains "$T/err" "no data received for 1 s"
assert_store "$T/store" "$T/none"

# reset connections: always (fails), then once (retried)
run_case sreset reset
expect_exit 1 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_store "$T/store" "$T/none"
run_case sreset1 reset --times 1
expect_exit 0 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" fetched)" "fetched after resets"
assert_store "$T/store" "$T/all"

# a good mirror behind a bad one (corrupt content), and behind a dead one
run_case sbad corrupt
bad=$SERVER_URL
start_server sgood "$T/served" ok
expect_exit 0 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$bad,$SERVER_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" fetched)" "fetched from the second mirror"
assert_eq "$n" "$(json_get "$T/out" rejected)" "rejected from the first mirror"
assert_store "$T/store" "$T/all"
rm -rf "$T/store"
dead="http://127.0.0.1:$(free_port)"
expect_exit 0 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$dead" --url "$SERVER_URL" "$T/a.img"
assert_store "$T/store" "$T/all"

# part of the objects missing on the only mirror: the rest is stored, a
# rerun against a complete mirror continues
stop_servers
rm -rf "$T/store" "$T/partial"
cp -a "$T/served" "$T/partial"
head -n 3 "$T/all" | while read -r f; do rm "$T/partial/$f"; done
start_server spart "$T/partial" ok
expect_exit 1 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq 3 "$(json_get "$T/out" unavailable)" "objects missing on the mirror"
tail -n +4 "$T/all" >"$T/some"
assert_store "$T/store" "$T/some"
start_server sfull "$T/served" ok
expect_exit 0 "$CFSCTL" "${F[@]}" --basedir "$T/store" --url "$SERVER_URL" "$T/a.img"
assert_eq 3 "$(json_get "$T/out" fetched)" "objects fetched by the rerun"
assert_store "$T/store" "$T/all"
