#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl push over https with Basic auth: a docker-registry with its own
# certificate (--cacert) and htpasswd credentials takes a push with
# --creds, and with an auth file; without credentials the push fails with
# exit 1 saying so, and leaves no tag; an http registry pushed to without
# --plain-http is refused with a hint.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"
command -v htpasswd >/dev/null || fail "htpasswd is not installed (make deps: apache2-utils)"

expect_exit 1 "$CFSCTL" push --retries=0 "$T/tree" "$REG/t/x:v1"
grep -q "the registry answers in plain http, not https .*: use --plain-http" "$T/err" ||
	fail "https to an http registry: $(cat "$T/err")"

htpasswd -Bbn cfs 's3cret:x' >"$T/htpasswd" || fail "htpasswd"
start_registry auth tls "$T/htpasswd"
expect_exit 1 "$CFSCTL" push --cacert "$T/auth/cert.pem" "$T/tree" "$REG/t/auth:v1"
grep -q "HTTP 401: the registry wants credentials" "$T/err" || fail "no credentials: $(cat "$T/err")"
expect_exit 1 "$CFSCTL" push --cacert "$T/auth/cert.pem" --creds 'cfs:wrong' "$T/tree" "$REG/t/auth:v1"
grep -q "HTTP 401: the registry refused the credentials" "$T/err" || fail "wrong credentials: $(cat "$T/err")"
[ "$(curl -s -o /dev/null -w '%{http_code}' --cacert "$T/auth/cert.pem" -u 'cfs:s3cret:x' \
	"https://$REG/v2/t/auth/manifests/v1")" = 404 ] || fail "a failed push left a tag"
expect_exit 0 "$CFSCTL" push --cacert "$T/auth/cert.pem" --creds 'cfs:s3cret:x' "$T/tree" "$REG/t/auth:v1"
digest=$(sed -n 's/^Digest: //p' "$T/err")
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$REG" "$(printf 'cfs:s3cret:x' | base64)" >"$T/auth.json"
expect_exit 0 "$CFSCTL" push --cacert "$T/auth/cert.pem" --authfile "$T/auth.json" --json "$T/tree" "$REG/t/auth:v2"
grep -q '"bytes_uploaded":0,' "$T/out" || fail "the second push uploaded: $(cat "$T/out")"
assert_eq "$digest" "$(sed -n 's/^Digest: //p' "$T/err")" "the digest pushed with the auth file"
expect_exit 0 "$CFSCTL" pull --cacert "$T/auth/cert.pem" --authfile "$T/auth.json" "$REG/t/auth:v2" "$T/pulled.img"
cmp -s "$T/want.img" "$T/pulled.img" || fail "pull over https: not build's image"
echo ok
