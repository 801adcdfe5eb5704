#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# When cfsctl pull does not pull a layer in part: a registry that ignores
# Range requests (chunked-proxy.py answering 200 with the whole blob) gets
# the zstd:chunked layer pulled whole, checked against its digest, and
# stderr says so; one that takes one range per request but not several
# still gets a partial pull; a gzip layer is pulled whole and said to be
# no zstd:chunked layer; --full-pull fetches every layer whole and checks
# its diff_id, which skopeo 1.9's zstd:chunked layers fail (their config
# keeps the diff_id of the layer before it was recompressed). Every image
# made is the one the full pull of the gzip image makes.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"

push_images
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/want" "$REG/t/gzip:B" b
want=$(readlink "$T/want/images/refs/b")
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/chunked:A" a
digest=$(layer_json B digest)

# A registry that ignores Range.
start_proxy ignore-range
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$PROXY/t/chunked:B" b
stop_proxy
assert_contains "$T/err" "^pull: '$PROXY/t/chunked@$digest': the registry ignores Range requests: pulled whole, checked against its digest$"
grep -q '"layers_partial":0,"layers_full":1' "$T/out" || fail "not pulled whole: $(cat "$T/out")"
assert_eq "$want" "$(readlink "$T/repo/images/refs/b")" "B pulled whole from a registry that ignores Range"

# One that ignores a Range of several ranges only: one range per request.
start_proxy single-only
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo2" "$PROXY/t/chunked:B" b
stop_proxy
grep -q '"layers_partial":1,"layers_full":0' "$T/out" || fail "not pulled in part: $(cat "$T/out")"
! grep -q 'pulled whole' "$T/err" || fail "a partial pull said it pulled whole: $(cat "$T/err")"
assert_eq "$want" "$(readlink "$T/repo2/images/refs/b")" "B pulled by one range per request"

# A layer that is not zstd:chunked.
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/gzip:B" gz
gzdigest=$(curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
	"http://$REG/v2/t/gzip/manifests/B" | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
assert_contains "$T/err" "^pull: '$REG/t/gzip@$gzdigest': not zstd:chunked: pulled whole$"
grep -q '"layers_partial":0,"layers_full":1' "$T/out" || fail "not pulled whole: $(cat "$T/out")"

# --full-pull: whole, with the diff_id checked, and nothing said of it:
# only the layer's line and the digest.
expect_exit 0 "$CFSCTL" pull --plain-http --full-pull --repo "$T/repo" "$REG/t/gzip:B" gz2
! grep -q 'pulled whole' "$T/err" || fail "--full-pull said a layer was pulled whole: $(cat "$T/err")"
assert_eq 2 "$(wc -l <"$T/err")" "lines on stderr of --full-pull: the layer's and the digest"
assert_eq "$want" "$(readlink "$T/repo/images/refs/gz2")" "B by --full-pull"
ls "$T/repo/images" >"$T/images.0"
expect_exit 1 "$CFSCTL" pull --plain-http --full-pull --repo "$T/repo" "$REG/t/chunked:B" b
assert_contains "$T/err" "'$REG/t/chunked@$digest': uncompressed, its content has the digest sha256:[0-9a-f]{64}, not the config's diff_id sha256:[0-9a-f]{64}"
# ... and says why, and what to do
assert_contains "$T/err" "as skopeo 1\.9 writes them; pull it without --full-pull"
assert_eq "$want" "$(readlink "$T/repo/images/refs/b")" "the name after a refused --full-pull"
ls "$T/repo/images" | cmp -s - "$T/images.0" || fail "a refused --full-pull added an image"
expect_exit 2 "$CFSCTL" pull --plain-http --json --print-digest --repo "$T/repo" "$REG/t/chunked:B" b
echo ok
