#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Uploads resume as pulls do (tests/lib/push-bad-registry.py, a registry
# that keeps what it was sent, as fetch-server.py truncates bodies for the
# pulls): an upload cut half-way is asked for its status (a GET of its
# Location, whose Range says how far it got) and goes on from there, so
# the registry receives the blob once and a little more, and the blob it
# ends with has its digest; one the registry lost after the cut starts
# again, under twice the blob. Retries are bounded: an upload cut each
# time, or answered 500 each time, fails with exit 1 and a message, after
# --retries tries, and names no manifest. Against docker-registry, whose
# PATCH takes a Content-Range, a push and a pull give build's image.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

bad_start() {
	rm -f "$T/bad.port" "$T/bad.log"
	python3 "$TESTS_DIR/lib/push-bad-registry.py" $1 "$T/bad.port" "$T/bad.log" 2>"$T/bad.err" &
	bad_pid=$!
	FETCH_PIDS+=($!)
	for i in $(seq 100); do [ -s "$T/bad.port" ] && break; sleep 0.1; done
	[ -s "$T/bad.port" ] || { cat "$T/bad.err"; fail "push-bad-registry.py did not start"; }
	bad=127.0.0.1:$(cat "$T/bad.port")
}
bad_stop() { kill "$bad_pid" 2>/dev/null; wait "$bad_pid" 2>/dev/null || true; }
# patched: the bytes the registry received in PATCH requests
patched() { awk '$1 == "PATCH" {n += $3} END {print n + 0}' "$T/bad.log"; }

for mode in ok cut cut-lose; do
	bad_start $mode
	expect_exit 0 "$CFSCTL" push --plain-http --json --retries=2 "$T/tree" "$bad/t:v1"
	grep -q '^PUT /v2/t/manifests/v1 ' "$T/bad.log" || fail "$mode: no manifest was written"
	size=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); print(j["layers"][0]["size"])' "$T/out")
	[ "$size" -gt 200000 ] || fail "the layer is too small ($size bytes) to be cut"
	got=$(patched)
	echo "$mode: layer $size bytes; the registry received $got in PATCHes"
	# the PUTs that ended the uploads were taken (201): each upload held its digest
	case $mode in
	ok)
		assert_eq 0 "$(grep -c '^GET ' "$T/bad.log")" "ok: status requests"
		# the layer and the config, once each
		[ "$got" -lt $((size + 4096)) ] || fail "ok: $got bytes sent for a $size-byte layer"
		;;
	cut)
		grep -q '^GET /v2/t/blobs/uploads/' "$T/bad.log" || fail "cut: the upload's status was not asked"
		# half the layer before the cut, the other half after: the layer once, and the config
		[ "$got" -lt $((size + 4096)) ] || fail "cut: $got bytes sent for a $size-byte layer: not resumed"
		;;
	cut-lose)
		# the half the registry lost is sent again: less than twice the layer
		[ "$got" -gt $((size + size / 4)) ] || fail "cut-lose: $got bytes: the lost half was not sent again"
		[ "$got" -lt $((2 * size)) ] || fail "cut-lose: $got bytes sent for a $size-byte layer"
		;;
	esac
	bad_stop
done
# one upload per blob in the cut case: the layer's is resumed, not begun again
bad_start cut
expect_exit 0 "$CFSCTL" push --plain-http --retries=2 "$T/tree" "$bad/t:v1"
assert_eq 2 "$(grep -c '^POST ' "$T/bad.log")" "cut: uploads started (the layer's and the config's)"
grep -q '^PATCH [^ ]* [0-9]*$' "$T/bad.log" || fail "cut: no PATCH"
bad_stop

# bounded: cut every time, or 500 every time
for mode in cut-always patch-500; do
	bad_start $mode
	expect_exit 1 "$CFSCTL" push --plain-http --retries=2 "$T/tree" "$bad/t:v1"
	case $mode in
	cut-always) want="cfsctl: 'layer': the upload broke off 3 times, last: " ;;
	patch-500) want="cfsctl: 'layer': HTTP 500" ;;
	esac
	grep -qF "$want" "$T/err" || fail "$mode: no '$want': $(cat "$T/err")"
	! grep -q '^PUT' "$T/bad.log" || fail "$mode: a PUT after the failure: $(cat "$T/bad.log")"
	assert_eq 3 "$(grep -c '^PATCH ' "$T/bad.log")" "$mode: PATCH requests with --retries=2"
	bad_stop
done

# docker-registry takes the PATCH with its Content-Range, and the image is build's
expect_exit 0 "$CFSCTL" push --plain-http "$T/tree" "$REG/t/resume:v1"
grep -q '"PATCH /v2/t/resume/blobs/uploads/' "$T/reg/log" || fail "no PATCH reached docker-registry"
expect_exit 0 "$CFSCTL" pull --plain-http "$REG/t/resume:v1" "$T/pulled.img"
cmp -s "$T/want.img" "$T/pulled.img" || fail "the image pulled is not build's"
echo ok
