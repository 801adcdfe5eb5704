#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull with credentials. A docker-registry behind TLS (a certificate
# made here, --cacert) with htpasswd auth (bcrypt) answers Basic
# challenges: refused without credentials and with wrong ones, pulled with
# --creds USER:PASSWORD, with the password on stdin, with --authfile, and
# with podman's ($XDG_RUNTIME_DIR/containers/auth.json) and docker's
# (~/.docker/config.json) files. Fake registries (tests/lib/fetch-server.py)
# that redirect their blobs to another host show that neither the
# credentials nor a token got with them follow the redirect, and that the
# token realm gets the credentials.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
. "$TESTS_DIR/lib/pull.sh"
command -v htpasswd >/dev/null || fail "htpasswd is not installed (make deps: apache2-utils)"
command -v base64 >/dev/null || fail "base64 is not installed (coreutils)"

# The image is pushed while the registry asks for nothing, then it is
# started again on the same storage with htpasswd auth.
start_registry auth tls
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "https://$REG" cfs/test v1 "$T/auth/cert.pem" \
	>/dev/null || fail "pushing to the registry"
stop_servers
htpasswd -Bbn cfs 's3cret:x' >"$T/htpasswd" || fail "htpasswd"
start_registry auth tls "$T/htpasswd"
CA=--cacert=$T/auth/cert.pem
ref=$REG/cfs/test:v1
pulled() { # WHAT: the image just pulled is v1's
	cmp -s "$T/want.v1" "$T/ok.img" || fail "the image pulled $1 differs"
	rm -f "$T/ok.img"
}

expect_exit 1 "$CFSCTL" pull "$CA" "$ref" "$T/bad.img"
assert_contains "$T/err" "'$ref': HTTP 401: the registry wants credentials \(--creds or an auth file\)"
expect_exit 1 "$CFSCTL" pull "$CA" --creds=cfs:wrong "$ref" "$T/bad.img"
assert_contains "$T/err" "'$ref': HTTP 401: the registry refused the credentials"
[ ! -e "$T/bad.img" ] || fail "a refused pull left an image"
# (the password holds a ':')
expect_exit 0 "$CFSCTL" pull "$CA" --creds='cfs:s3cret:x' "$ref" "$T/ok.img"
pulled "with --creds"
printf 's3cret:x\n' >"$T/password"
expect_exit 0 "$CFSCTL" pull "$CA" --creds=cfs "$ref" "$T/ok.img" <"$T/password"
pulled "with the password on stdin"
expect_exit 1 "$CFSCTL" pull "$CA" --creds=cfs "$ref" "$T/bad.img" </dev/null
assert_contains "$T/err" "--creds cfs: no password on standard input"

# Auth files: the registry's entry; an entry of a namespace before it.
b64() { printf %s "$1" | base64 -w0; }
cat >"$T/auth.json" <<EOF
{"auths": {"$REG": {"auth": "$(b64 'cfs:s3cret:x')"},
           "$REG/cfs/other": {"auth": "$(b64 'cfs:wrong')"},
           "elsewhere.example": {"auth": "$(b64 'x:y')"}}}
EOF
expect_exit 0 "$CFSCTL" pull "$CA" --authfile="$T/auth.json" "$ref" "$T/ok.img"
pulled "with --authfile"
cat >"$T/ns.json" <<EOF
{"auths": {"$REG": {"auth": "$(b64 'cfs:s3cret:x')"},
           "$REG/cfs": {"auth": "$(b64 'cfs:wrong')"}}}
EOF
expect_exit 1 "$CFSCTL" pull "$CA" --authfile="$T/ns.json" "$ref" "$T/bad.img"
assert_contains "$T/err" "refused the credentials"
expect_exit 1 "$CFSCTL" pull "$CA" --authfile="$T/nope.json" "$ref" "$T/bad.img"
assert_contains "$T/err" "auth file '$T/nope.json': No such file or directory"
printf '{"auths": {"%s": {"auth": "%%%%"}}}' "$REG" >"$T/bad.json"
expect_exit 1 "$CFSCTL" pull "$CA" --authfile="$T/bad.json" "$ref" "$T/bad.img"
assert_contains "$T/err" "auth file '$T/bad.json': the \"auth\" of '$REG' is not base64 of USER:PASSWORD"
expect_exit 2 "$CFSCTL" pull "$CA" --authfile="$T/auth.json" --creds=a:b "$ref" "$T/bad.img"

# The default files: podman's, then docker's (with docker's key for a URL).
mkdir -p "$T/run/containers" "$T/home/.docker" "$T/empty"
cp "$T/auth.json" "$T/run/containers/auth.json"
cat >"$T/home/.docker/config.json" <<EOF
{"auths": {"https://$REG/v1/": {"auth": "$(b64 'cfs:s3cret:x')"}}, "credsStore": "none"}
EOF
export -n REGISTRY_AUTH_FILE
XDG_RUNTIME_DIR=$T/run HOME=$T/empty expect_exit 0 "$CFSCTL" pull "$CA" "$ref" "$T/ok.img"
pulled "with \$XDG_RUNTIME_DIR/containers/auth.json"
XDG_RUNTIME_DIR=$T/empty HOME=$T/home expect_exit 0 "$CFSCTL" pull "$CA" "$ref" "$T/ok.img"
pulled "with ~/.docker/config.json"
# podman's file without an entry for the registry: docker's is next
echo '{"auths": {}}' >"$T/run/containers/auth.json"
XDG_RUNTIME_DIR=$T/run HOME=$T/home expect_exit 0 "$CFSCTL" pull "$CA" "$ref" "$T/ok.img"
pulled "with docker's file after podman's"
REGISTRY_AUTH_FILE=$T/ns.json XDG_RUNTIME_DIR=$T/run HOME=$T/home \
	expect_exit 1 "$CFSCTL" pull "$CA" "$ref" "$T/bad.img"
assert_contains "$T/err" "refused the credentials"
stop_servers

# Fake registries whose blobs are redirected to another host (localhost,
# on another port): the credentials and tokens go to the registry and its
# realm, never there.
start_server other "$T/fake" ok --auth-log "$T/other.auth"
other=http://localhost:${SERVER_URL##*:}
basic="Basic $(b64 'cfs:pw')"
start_server basic "$T/fake" ok --basic cfs:pw --redirect-blobs "$other" --auth-log "$T/basic.auth"
u=${SERVER_URL#http://}
expect_exit 1 "$CFSCTL" pull --plain-http "$u/img:v1" "$T/bad.img"
assert_contains "$T/err" "HTTP 401: the registry wants credentials"
expect_exit 0 "$CFSCTL" pull --plain-http --creds=cfs:pw "$u/img:v1" "$T/ok.img"
pulled "from a registry that redirects its blobs"
assert_contains "$T/basic.auth" "^/v2/img/manifests/v1 $basic\$"
assert_contains "$T/basic.auth" "^/v2/img/blobs/sha256:[0-9a-f]{64} $basic\$"
grep -q '^/v2/img/blobs/' "$T/other.auth" || fail "the blobs did not come from the other host"
[ -z "$(grep -v ' -$' "$T/other.auth")" ] ||
	fail "credentials went to another host: $(grep -v ' -$' "$T/other.auth" | head -n 1)"
stop_servers

start_server other2 "$T/fake" ok --auth-log "$T/other2.auth"
other=http://localhost:${SERVER_URL##*:}
start_server bearer "$T/fake" ok --bearer tok --basic cfs:pw --redirect-blobs "$other" \
	--auth-log "$T/bearer.auth"
u=${SERVER_URL#http://}
expect_exit 1 "$CFSCTL" pull --plain-http --creds=cfs:nope "$u/img:v1" "$T/bad.img"
assert_contains "$T/err" "'$u/img:v1': getting a token from 'http://127\.0\.0\.1:[0-9]+/token': HTTP 401: the credentials were refused"
: >"$T/bearer.auth"
expect_exit 0 "$CFSCTL" pull --plain-http --creds=cfs:pw "$u/img:v1" "$T/ok.img"
pulled "with a token got with credentials"
assert_contains "$T/bearer.auth" "^/token $basic\$"
assert_contains "$T/bearer.auth" "^/v2/img/manifests/v1 Bearer tok\$"
[ "$(grep -c "$basic" "$T/bearer.auth")" = 1 ] || fail "the credentials went to more than the realm"
grep -q '^/v2/img/blobs/' "$T/other2.auth" || fail "the blobs did not come from the other host"
[ -z "$(grep -v ' -$' "$T/other2.auth")" ] ||
	fail "a token or credentials went to another host: $(grep -v ' -$' "$T/other2.auth" | head -n 1)"
stop_servers
echo ok
