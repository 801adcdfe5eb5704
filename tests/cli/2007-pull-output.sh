#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What cfsctl pull says. When stderr is not a terminal: a line for each
# layer as it is applied (from the layers cache or not), then the digest of
# the manifest the reference resolved to, which pulls the same image again
# by digest; --json gives the same on stdout. Without --repo or
# --digest-store, a line before the digest says the files' contents were
# kept nowhere. A 404 for a reference without
# a tag says 'latest' was tried; a platform that an index lacks lists the
# platforms it has.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
. "$TESTS_DIR/lib/pull.sh"

manifest_layers() { # the digests of v1's layers, one a line
	python3 -c 'import json,sys
for l in json.load(open(sys.argv[1]))["layers"]: print(l["digest"], l["size"])' "$F/manifests/v1"
}
manifest_layers >"$T/layers" || fail "reading the manifest"
start_server reg "$T/fake" ok
u=${SERVER_URL#http://}

expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" "$u/img:v1" "$T/a.img"
cmp -s "$T/want.v1" "$T/a.img" || fail "the pulled image differs"
[ ! -s "$T/out" ] || fail "pull printed on stdout: $(cat "$T/out")"
i=0
while read -r d size; do
	i=$((i + 1))
	assert_contains "$T/err" "^pull: layer $i/3 $d: $size bytes\$"
done <"$T/layers"
# and, for each of these layers, none of them zstd:chunked, that it was pulled whole
assert_eq 3 "$(grep -c "^pull: '.*': not zstd:chunked: pulled whole\$" "$T/err")" \
	"lines on stderr that say a layer was pulled whole, as notices (no 'cfsctl:')"
# no store: a line says the files' contents were kept nowhere
assert_contains "$T/err" "^cfsctl: pull: no --repo or --digest-store: the files' contents were kept nowhere, and '$T/a.img' cannot be mounted until they are in a basedir; pull with --repo DIR to keep them\$"
assert_eq 8 "$(wc -l <"$T/err")" "lines on stderr: three layers, three pulled whole, no store, and the digest"
assert_eq "Digest: $v1_digest" "$(tail -n 1 "$T/err")" "the last line"
# With a store, the contents are kept: nothing is said of them.
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/store" "$u/img:v1" "$T/s.img"
! grep -q 'kept nowhere' "$T/err" || fail "a pull with --digest-store said: $(cat "$T/err")"
# The digest pulls the same image; from the cache, the lines say so.
expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" "$u/img@$v1_digest" "$T/b.img"
cmp -s "$T/want.v1" "$T/b.img" || fail "the image pulled by the digest printed differs"
assert_eq 3 "$(grep -c '^pull: layer [1-3]/3 sha256:[0-9a-f]*: [0-9]* bytes, from the layers cache$' "$T/err")" \
	"layers from the cache"
assert_eq "Digest: $v1_digest" "$(tail -n 1 "$T/err")" "the last line of a pull by digest"

# --json
expect_exit 0 "$CFSCTL" pull --plain-http --json --layers-cache="$T/lc2" "$u/img:v1" "$T/c.img"
python3 - "$T/out" "$T/layers" "$u" "$v1_digest" "$T/c.img" <<'EOF' || fail "--json: $(cat "$T/out")"
import json, sys
out, layers, u, digest, image = sys.argv[1:]
j = json.load(open(out))
assert j["reference"] == u + "/img:v1", j
assert j["name"] == u + "/img:v1", j
assert j["digest"] == digest, j
assert j["image"] == image, j
want = [l.split() for l in open(layers)]
assert [[l["digest"], str(l["size"])] for l in j["layers"]] == want, j
assert not any(l["cached"] for l in j["layers"]), j
EOF
expect_exit 2 "$CFSCTL" pull --plain-http --json --print-digest "$u/img:v1" "$T/c.img"

# A 404 for the default tag says so; one for a tag given does not.
expect_exit 1 "$CFSCTL" pull --plain-http "$u/img" "$T/bad.img"
assert_contains "$T/err" "'$u/img': HTTP 404: not found \(no tag was given, so 'latest' was tried\)"
expect_exit 1 "$CFSCTL" pull --plain-http "$u/img:latest" "$T/bad.img"
assert_contains "$T/err" "'$u/img:latest': HTTP 404: not found\$"

# A platform the index lacks: the ones it has.
expect_exit 1 "$CFSCTL" pull --plain-http --platform=linux/s390x "$u/img:multi" "$T/bad.img"
assert_contains "$T/err" "'$u/img:multi': no manifest for platform linux/s390x \(choose another with --platform; it has: linux/amd64, linux/arm64/v8\)"
[ ! -e "$T/bad.img" ] || fail "a failed pull left an image"
stop_servers
echo ok
