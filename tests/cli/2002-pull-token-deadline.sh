#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# --document-timeout covers the bearer token too: a registry whose 401
# challenge names a token realm that sends its answer a byte a second (so
# --timeout never fires) fails the pull once the deadline has passed, with
# a message naming the token request, exit 1 and nothing left; the same
# realm at full speed gives the image.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
. "$TESTS_DIR/lib/pull.sh"

start_server slow-token "$T/fake" ok --bearer tok --token-rate 1
u=${SERVER_URL#http://}
start=$SECONDS
expect_exit 1 "$CFSCTL" pull --plain-http --retries=3 --document-timeout=3 \
	--digest-store="$T/s" "$u/img:v1" "$T/bad.img"
took=$(elapsed_since $start)
assert_contains "$T/err" "^cfsctl: '$u/img:v1': getting a token from 'http://$u/token': not received within 3 s, the time a manifest, a config or a token may take \(--document-timeout\)$"
[ "$took" -le 8 ] || fail "a trickled token took $took s to fail with --document-timeout=3"
assert_eq 1 "$(grep -c '^token ' "$T/slow-token.log")" "token requests (the deadline covers the retries)"
grep -q '^ok ' "$T/slow-token.log" && fail "the registry served something without a token"
[ ! -e "$T/bad.img" ] || fail "a failed pull left an image"
[ -z "$(find "$T/s" -type f 2>/dev/null)" ] || fail "a failed pull left files in the store"
stop_servers

# The same token at full speed.
start_server token "$T/fake" ok --bearer tok
u=${SERVER_URL#http://}
expect_exit 0 "$CFSCTL" pull --plain-http --document-timeout=3 "$u/img:v1" "$T/ok.img"
cmp -s "$T/want.v1" "$T/ok.img" || fail "the image pulled with a token differs"
stop_servers
echo ok
