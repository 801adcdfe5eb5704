#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl push --sign-by: a GPG simple signing signature of the manifest,
# written to the lookaside staging a registries.d file names; skopeo 1.9
# with a signedBy policy accepts the image, and refuses an unsigned one
# and one signed by another key. An unknown key fails the push before
# anything is sent.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"
command -v gpg >/dev/null || fail "gpg is not installed (make deps)"
export GNUPGHOME=$T/gnupg
trap 'gpgconf --kill all 2>/dev/null; stop_servers; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
mkdir -m 700 "$GNUPGHOME"
for who in signer other; do
	gpg --batch --passphrase '' --quick-gen-key "cfs $who <$who@example.org>" ed25519 sign never \
		>/dev/null 2>&1 || fail "gpg: making the key of $who"
done
fpr() { gpg --with-colons --list-secret-keys "$1@example.org" | awk -F: '/^fpr/ { print $10; exit }'; }
signer=$(fpr signer) other=$(fpr other)
gpg --export "$signer" >"$T/signer.gpg"

mkdir "$T/registries.d"
printf '%s\n' "default-docker:" "  lookaside-staging: file://$T/elsewhere" "docker:" "  $REG/t:" \
	"    lookaside: file://$T/sigstore" "    lookaside-staging: file://$T/sigstore" \
	>"$T/registries.d/test.yaml"
printf '%s\n' '{"default": [{"type": "reject"}], "transports": {' \
	"\"docker\": {\"$REG/t\": [{\"type\": \"signedBy\", \"keyType\": \"GPGKeys\", \"keyPath\": \"$T/signer.gpg\"}]}," \
	'"oci": {"": [{"type": "insecureAcceptAnything"}]}}}' >"$T/policy.json"
peer() { # REPO:TAG: skopeo copy under the policy, its output in $T/skopeo.out
	rm -rf "$T/lay"
	skopeo --policy "$T/policy.json" --registries.d "$T/registries.d" copy -q --remove-signatures \
		--src-tls-verify=false "docker://$REG/$1" "oci:$T/lay:x" >"$T/skopeo.out" 2>&1
}

expect_exit 0 "$CFSCTL" push --plain-http --json --sign-by "$signer" --registries.d "$T/registries.d" \
	"$T/tree" "$REG/t/signed:v1"
digest=$(sed -n 's/^Digest: //p' "$T/err")
sig=$T/sigstore/t/signed@sha256=${digest#sha256:}/signature-1
[ -s "$sig" ] || fail "no signature at $sig: $(cat "$T/err")"
grep -q "\"signature\":\"$sig\"" "$T/out" || fail "--json names not the signature: $(cat "$T/out")"
gpg --decrypt "$sig" 2>/dev/null >"$T/payload" || fail "gpg cannot verify the signature"
python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["critical"]
assert c["type"] == "atomic container signature"
assert c["identity"]["docker-reference"] == sys.argv[2]
assert c["image"]["docker-manifest-digest"] == sys.argv[3]
' "$T/payload" "$REG/t/signed:v1" "$digest" || fail "the payload: $(cat "$T/payload")"
peer t/signed:v1 || { cat "$T/skopeo.out"; fail "skopeo refuses what cfsctl signed"; }

expect_exit 0 "$CFSCTL" push --plain-http "$T/tree" "$REG/t/unsigned:v1"
peer t/unsigned:v1 && fail "skopeo accepts an unsigned image"
grep -q "A signature was required, but no signature exists" "$T/skopeo.out" || fail "unsigned: $(cat "$T/skopeo.out")"

expect_exit 0 "$CFSCTL" push --plain-http --sign-by "$other" --registries.d "$T/registries.d" \
	"$T/tree" "$REG/t/other:v1"
peer t/other:v1 && fail "skopeo accepts an image signed by another key"

log0=$(stat -c %s "$T/reg/log")
expect_exit 1 "$CFSCTL" push --plain-http --sign-by 0123456789ABCDEF0123456789ABCDEF01234567 \
	--registries.d "$T/registries.d" "$T/tree" "$REG/t/nokey:v1"
grep -q "sign-by '0123456789ABCDEF0123456789ABCDEF01234567'" "$T/err" || fail "an unknown key: $(cat "$T/err")"
assert_eq 0 "$(tail -c +$((log0 + 1)) "$T/reg/log" | grep -c '/v2/t/nokey/' || true)" "requests after an unknown key"
expect_exit 2 "$CFSCTL" push --plain-http --gpg-homedir "$GNUPGHOME" "$T/tree" "$REG/t/x:v1"
echo ok
