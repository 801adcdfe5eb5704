#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull and plain http: an https registry that redirects its blobs
# to an http:// URL is refused unless --plain-http (and the http server
# is never asked), while a redirect to another https server is followed;
# an http registry asked over https says to use --plain-http, and is not
# retried, since no retry can help.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
. "$TESTS_DIR/lib/pull.sh"

start_server plain "$T/fake" ok
plain=$SERVER_URL
start_tls_server down "$T/fake" ok --redirect-blobs "$plain"
u=${SERVER_URL#https://}
expect_exit 1 "$CFSCTL" pull --cacert="$T/tls-cert/cert.pem" --retries=0 "$u/img:v1" \
	"$T/bad.img"
assert_contains "$T/err" "'$u/img@sha256:[0-9a-f]{64}': the registry redirects to plain http://, which is refused without --plain-http"
[ ! -e "$T/bad.img" ] || fail "a refused pull left an image"
grep -q '^redirect /v2/img/blobs/' "$T/down.log" || fail "the blobs were not redirected"
[ ! -s "$T/plain.log" ] || fail "the http server was asked: $(head -n 3 "$T/plain.log")"

# to https, the redirect is followed
start_tls_server secure "$T/fake" ok
start_tls_server up "$T/fake" ok --redirect-blobs "$SERVER_URL"
u=${SERVER_URL#https://}
expect_exit 0 "$CFSCTL" pull --cacert="$T/tls-cert/cert.pem" "$u/img:v1" "$T/up.img"
cmp -s "$T/want.v1" "$T/up.img" || fail "the image pulled through a redirect differs"
grep -q '^ok /v2/img/blobs/' "$T/secure.log" || fail "the redirect was not followed"
stop_servers

# --plain-http allows the redirect from an http registry to http
start_server plain2 "$T/fake" ok
start_server down2 "$T/fake" ok --redirect-blobs "$SERVER_URL"
expect_exit 0 "$CFSCTL" pull --plain-http "${SERVER_URL#http://}/img:v1" "$T/plain.img"
cmp -s "$T/want.v1" "$T/plain.img" || fail "the image pulled through an http redirect differs"

# An http registry over https: a hint, not "wrong version number" alone,
# and no retry: three would back off 0.25 + 0.5 + 1 s at least.
u=${SERVER_URL#http://}
start=$(date +%s%N)
expect_exit 1 "$CFSCTL" pull --retries=3 "$u/img:v1" "$T/bad.img"
took=$((($(date +%s%N) - start) / 1000000))
[ "$took" -lt 1700 ] || fail "an http registry over https took $took ms to fail: retried?"
assert_contains "$T/err" "'$u/img:v1': the registry answers in plain http, not https \(.*\): use --plain-http if it is meant to"
[ "$(wc -l <"$T/err")" = 1 ] || fail "more than one line of error: $(cat "$T/err")"
stop_servers
echo ok
