#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl fetch over https from nginx with HTTP/2: a certificate the system
# CA store does not know is refused (nothing stored); trusted with --cacert,
# every object comes over HTTP/2, multiplexed on one connection.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

make_source "$T/src" 60 1 1024
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"
n=$(wc -l <"$T/all")
: >"$T/none"
start_nginx "$T/served" tls
# the requests for objects, not the readiness probes
requests() { grep -v ' /cfs-probe$' "$T/nginx/access.log"; }
case $NGINX_URL in https://*) ;; *) fail "nginx is not serving https" ;; esac

# the system CA store does not trust a self-signed certificate
expect_exit 1 "$CFSCTL" fetch --json --basedir "$T/store" --url "$NGINX_URL" "$T/a.img"
assert_contains "$T/err" "[Cc]ertificate"
assert_eq "$n" "$(json_get "$T/out" failed)" "objects refused"
assert_store "$T/store" "$T/none"
[ -z "$(requests)" ] || fail "a request got through an untrusted connection"

# trusted with --cacert: HTTP/2, multiplexed
expect_exit 0 "$CFSCTL" fetch --json --jobs 16 --cacert "$T/nginx/cert.pem" \
	--basedir "$T/store" --url "$NGINX_URL" "$T/a.img"
assert_eq "$n" "$(json_get "$T/out" fetched)" "objects fetched over https"
assert_store "$T/store" "$T/all"
assert_eq "$n" "$(requests | grep -c '^HTTP/2.0 ')" "requests over HTTP/2"
conns=$(requests | awk '{print $2}' | sort -u | wc -l)
[ "$conns" -le 2 ] || fail "$n requests used $conns connections; HTTP/2 should multiplex them"

expect_exit 1 "$CFSCTL" fetch --cacert "$T/no-such.pem" --basedir "$T/store" \
	--url "$NGINX_URL" "$T/a.img"
assert_contains "$T/err" "^cfsctl: fetch: CA certificates: '$T/no-such.pem': "
