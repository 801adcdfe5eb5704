#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl push --sign-by-sigstore-private-key: a cosign signature of the
# manifest (ECDSA P-256, SHA-256, over a simple-signing payload), attached
# as cosign attaches it, the manifest tagged sha256-<hex>.sig. openssl
# verifies it; pull --policy with sigstoreSigned (use-sigstore-attachments)
# accepts the image with the key, and refuses it with another. A second
# push by the same key adds nothing, one by another key appends a layer,
# and both keys are then accepted. A key that is missing, not P-256,
# encrypted or in cosign's encrypted format fails the push with exit 1
# before anything is sent.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"
command -v openssl >/dev/null || fail "openssl is not installed (make deps)"

openssl ecparam -genkey -name prime256v1 -noout -out "$T/key.pem" 2>/dev/null &&
	openssl ec -in "$T/key.pem" -pubout -out "$T/key.pub" 2>/dev/null || fail "making the key"
# the other key as PKCS#8, as cosign's import and most tools write it
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$T/other.pem" 2>/dev/null &&
	openssl pkey -in "$T/other.pem" -pubout -out "$T/other.pub" 2>/dev/null || fail "making the other key"

mkdir "$T/rd"
printf 'docker:\n  %s/s:\n    use-sigstore-attachments: true\n' "$REG" >"$T/rd/s.yaml"
policy() { # KEY.pub: sigstoreSigned by it for $REG/s, reject elsewhere
	printf '{"default": [{"type": "reject"}], "transports": {"docker": {"%s/s": [{"type": "sigstoreSigned", "keyPath": "%s"}]}}}\n' \
		"$REG" "$1" >"$T/policy.json"
}
P=(--plain-http --policy "$T/policy.json" --registries.d "$T/rd")

expect_exit 0 "$CFSCTL" push --plain-http --json --sign-by-sigstore-private-key "$T/key.pem" \
	"$T/tree" "$REG/s/img:v1"
digest=$(sed -n 's/^Digest: //p' "$T/err")
sigtag=sha256-${digest#sha256:}.sig
grep -qF "push: sigstore signature attached in $REG/s/img:$sigtag" "$T/err" || fail "no signature line: $(cat "$T/err")"
grep -qF "\"sigstore_signature\":\"$REG/s/img:$sigtag\"" "$T/out" || fail "--json: $(cat "$T/out")"

# check_sigs N KEY.pub...: the .sig manifest has N layers, and the signature
# of each verifies, by openssl, with the key given in its place
check_sigs() {
	local n=$1 i=0 layer
	shift
	manifest s/img "$sigtag" >"$T/sigman" || fail "no manifest tagged $sigtag"
	assert_eq "$n" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["layers"]))' "$T/sigman")" \
		"layers of the .sig manifest"
	for key in "$@"; do
		layer=$(python3 -c '
import json, sys
l = json.load(open(sys.argv[1]))["layers"][int(sys.argv[2])]
assert l["mediaType"] == "application/vnd.dev.cosign.simplesigning.v1+json", l
print(l["digest"], l["annotations"]["dev.cosignproject.cosign/signature"])' "$T/sigman" "$i") ||
			fail "layer $i of the .sig manifest: $(cat "$T/sigman")"
		blob s/img "${layer%% *}" >"$T/payload" || fail "fetching payload $i"
		base64 -d <<<"${layer#* }" >"$T/sig.der" || fail "signature $i is not base64"
		openssl dgst -sha256 -verify "$key" -signature "$T/sig.der" "$T/payload" >/dev/null ||
			fail "openssl does not verify signature $i with $key"
		i=$((i + 1))
	done
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
assert set(p) == {"critical", "optional"}, p
c = p["critical"]
assert c["type"] == "cosign container image signature", c
assert c["identity"]["docker-reference"] == sys.argv[2], c
assert c["image"]["docker-manifest-digest"] == sys.argv[3], c
' "$T/payload" "$REG/s/img:v1" "$digest" || fail "the payload: $(cat "$T/payload")"
}
check_sigs 1 "$T/key.pub"

R=$T/repo
policy "$T/key.pub"
expect_exit 0 "$CFSCTL" pull "${P[@]}" --json --repo "$R" "$REG/s/img:v1" signed
assert_eq "sigstoreSigned $T/key.pub" "$(json_get "$T/out" policy)" "the requirement passed"
cmp -s "$T/want.img" "$R/images/refs/signed" || fail "the signed pull is not build's image"
policy "$T/other.pub"
objs=$(find "$R/objects" -type f | wc -l)
expect_exit 1 "$CFSCTL" pull "${P[@]}" --repo "$R" "$REG/s/img:v1" refused
assert_contains "$T/err" "does not verify"
[ ! -e "$R/images/refs/refused" ] || fail "a refused pull named its image"
assert_eq "$objs" "$(find "$R/objects" -type f | wc -l)" "objects after the refusal"

# again with the same key: the signature is there already, nothing is added
expect_exit 0 "$CFSCTL" push --plain-http --sign-by-sigstore-private-key "$T/key.pem" "$T/tree" "$REG/s/img:v1"
grep -qF "push: sigstore signature already in $REG/s/img:$sigtag" "$T/err" || fail "a second signature: $(cat "$T/err")"
check_sigs 1 "$T/key.pub"
# with another key: appended, as cosign appends, the first kept
expect_exit 0 "$CFSCTL" push --plain-http --sign-by-sigstore-private-key "$T/other.pem" "$T/tree" "$REG/s/img:v1"
grep -qF "push: sigstore signature attached in $REG/s/img:$sigtag" "$T/err" || fail "another key: $(cat "$T/err")"
check_sigs 2 "$T/key.pub" "$T/other.pub"
for k in key other; do
	policy "$T/$k.pub"
	expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/s/img:v1" "$T/img.$k"
done

# keys refused before anything is sent: exit 1, the file and the reason said
bad_key() { # FILE REASON
	local log0
	log0=$(stat -c %s "$T/reg/log")
	expect_exit 1 "$CFSCTL" push --plain-http --sign-by-sigstore-private-key "$1" "$T/tree" "$REG/s/bad:v1"
	grep -qF -- "--sign-by-sigstore-private-key '$1': $2" "$T/err" || fail "the key $1: $(cat "$T/err")"
	assert_eq 0 "$(tail -c +$((log0 + 1)) "$T/reg/log" | grep -c '/v2/s/bad/' || true)" "requests after the key $1"
}
bad_key "$T/missing.pem" "No such file or directory"
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$T/rsa.pem" 2>/dev/null || fail "making an RSA key"
bad_key "$T/rsa.pem" "not an ECDSA P-256 key"
openssl ecparam -genkey -name secp384r1 -noout -out "$T/p384.pem" 2>/dev/null || fail "making a P-384 key"
bad_key "$T/p384.pem" "not an ECDSA P-256 key"
openssl ec -in "$T/key.pem" -aes256 -passout pass:secret -out "$T/enc.pem" 2>/dev/null || fail "encrypting the key"
bad_key "$T/enc.pem" "not an unencrypted PEM private key"
printf '%s\n' '-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----' 'eyJrZGYiOnt9fQ==' \
	'-----END ENCRYPTED SIGSTORE PRIVATE KEY-----' >"$T/cosign.key"
bad_key "$T/cosign.key" "cosign's encrypted key format is not supported"
bad_key "$T/key.pub" "not an unencrypted PEM private key"
curl -sf -o /dev/null "http://$REG/v2/s/bad/tags/list" && fail "a refused push made the repository"
expect_exit 2 "$CFSCTL" push --plain-http --sign-by-sigstore-private-key= "$T/tree" "$REG/s/x:v1"
echo ok
