#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull against a registry that trickles: a manifest sent at 1 byte
# a second fails once --document-timeout has passed (a deadline for the
# whole document, retries included), a layer slower than --speed-limit for
# --speed-time seconds fails (libcurl's low-speed limit), and a registry at
# full speed passes the same limits. --help gives the defaults.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
. "$TESTS_DIR/lib/pull.sh"

"$CFSCTL" pull --help >"$T/help" || fail "pull --help"
for p in '--speed-limit=BYTES' '--speed-time=SECONDS' '--document-timeout=SECONDS' \
	'(default 1024; 0: no limit)' 'retries included (default 60)'; do
	grep -qe "$p" "$T/help" || fail "pull --help does not say '$p'"
done

# A manifest at 1 byte a second: the document deadline ends it, though
# bytes keep coming (so --timeout never fires) and retries are left.
start_server slow-manifest "$T/fake" trickle --rate 1
u=${SERVER_URL#http://}
start=$SECONDS
expect_exit 1 "$CFSCTL" pull --plain-http --retries=3 --document-timeout=3 "$u/img:v1" \
	"$T/bad.img"
took=$(elapsed_since $start)
assert_contains "$T/err" "'$u/img:v1': not received within 3 s, the time a manifest, a config or a token may take \(--document-timeout\)"
[ "$took" -le 8 ] || fail "a trickled manifest took $took s to fail with --document-timeout=3"
[ ! -e "$T/bad.img" ] || fail "a failed pull left an image"
assert_eq 1 "$(grep -c '^trickle /v2/img/manifests/v1$' "$T/slow-manifest.log")" \
	"requests for the manifest (its deadline covers the retries)"
stop_servers

# A layer below the low-speed limit: 4000 bytes a second against 16000.
start_server slow-layer "$T/fake" trickle --rate 4000 --min-size 1000
u=${SERVER_URL#http://}
start=$SECONDS
expect_exit 1 "$CFSCTL" pull --plain-http --retries=0 --speed-limit=16000 --speed-time=2 \
	"$u/img:v1" "$T/bad.img"
took=$(elapsed_since $start)
assert_contains "$T/err" "'$u/img@sha256:[0-9a-f]{64}': Operation too slow. Less than 16000 bytes/sec transferred the last 2 seconds"
[ "$took" -le 8 ] || fail "a layer at 4000 bytes/s took $took s to fail with --speed-time=2"
# above the limit, the same slow layers come through
expect_exit 0 "$CFSCTL" pull --plain-http --speed-limit=1000 --speed-time=2 "$u/img:v1" \
	"$T/slow.img"
cmp -s "$T/want.v1" "$T/slow.img" || fail "the image of a slow registry differs"
stop_servers

# At full speed the same limits hold nothing up.
start_server fast "$T/fake" ok
u=${SERVER_URL#http://}
expect_exit 0 "$CFSCTL" pull --plain-http --speed-limit=2000 --speed-time=1 --document-timeout=2 \
	"$u/img:v1" "$T/fast.img"
cmp -s "$T/want.v1" "$T/fast.img" || fail "the image pulled under tight limits differs"
stop_servers

for bad in --speed-limit=x --speed-time=0 --document-timeout=0 --document-timeout=86401; do
	expect_exit 2 "$CFSCTL" pull --plain-http $bad "$u/img:v1" "$T/bad.img"
done
echo ok
