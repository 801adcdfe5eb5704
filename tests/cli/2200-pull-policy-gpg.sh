#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull --policy: containers-policy.json(5) with signedBy GPGKeys.
# skopeo copy --sign-by signs an image into a lookaside (file://, then
# served over http); cfsctl pull accepts it (keyPath, keyPaths, keyData,
# each signedIdentity form), and refuses, with exit 1, a message naming the
# reference and the reason, no name, no object and no layer fetched: an
# image with no signature, a key not in the policy, another identity,
# a signature of another manifest, a garbage or truncated OpenPGP blob, a
# payload with an extra critical member, a reject scope; and a policy file
# that is not one (exit 1, the file named).
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
command -v skopeo >/dev/null || skip "skopeo is not installed (make deps)"
command -v gpg >/dev/null || skip "gpg is not installed (make deps)"
umask 022

mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
L=$T/L
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"]]},
 {"tag": "v2", "layers": [["$L/1.tar", "gzip"], ["$L/3.tar", "none"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay:v1" "$T/want.v1"

# A throwaway keyring: the signing key, and another one.
export GNUPGHOME=$T/gnupg
mkdir -m 700 "$GNUPGHOME"
for who in signer other; do
	gpg --batch --passphrase '' --quick-gen-key "cfs $who <$who@example.org>" ed25519 sign never \
		>/dev/null 2>&1 || fail "making the $who key"
	gpg --batch --export "$who@example.org" >"$T/$who.gpg" || fail "exporting the $who key"
done
fpr=$(gpg --batch --with-colons --list-keys signer@example.org | awk -F: '$1 == "fpr" { print $10; exit }')
[ ${#fpr} -eq 40 ] || fail "no fingerprint for the signing key"

start_registry --accesslog reg
# skopeo writes the signatures to the lookaside staging
mkdir "$T/skopeo-rd" "$T/sigs"
printf 'default-docker:\n  lookaside-staging: file://%s\n' "$T/sigs" >"$T/skopeo-rd/d.yaml"
SK=(skopeo --insecure-policy --registries.d "$T/skopeo-rd")
"${SK[@]}" copy -q --dest-tls-verify=false --sign-by "$fpr" "oci:$T/lay:v1" \
	"docker://$REG/cfs/signed:v1" >"$T/sk.out" 2>&1 || { cat "$T/sk.out"; fail "skopeo copy --sign-by"; }
d1=sha256:$(skopeo inspect --raw --tls-verify=false "docker://$REG/cfs/signed:v1" | sha256sum | cut -c1-64)
[ -s "$T/sigs/cfs/signed@sha256=${d1#sha256:}/signature-1" ] || fail "skopeo wrote no signature"
# the same manifest unsigned under other names, and v2
for dst in cfs/signed:other cfs/unsigned:v1 cfs/mirror:v1 other/img:v1; do
	"${SK[@]}" copy -q --src-tls-verify=false --dest-tls-verify=false --remove-signatures \
		"docker://$REG/cfs/signed:v1" "docker://$REG/$dst" >/dev/null 2>&1 || fail "copying to $dst"
done
d=sha256:$(skopeo inspect --raw --tls-verify=false "docker://$REG/cfs/signed:other" | sha256sum | cut -c1-64)
assert_eq "$d1" "$d" "the copy's manifest digest"
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v2 "http://$REG" cfs/signed v2 >"$T/d2" || fail "pushing v2"
d2=$(cat "$T/d2")
# cfs/mirror's lookaside has the signature made for cfs/signed:v1
mkdir -p "$T/sigs/cfs/mirror@sha256=${d1#sha256:}"
cp "$T/sigs/cfs/signed@sha256=${d1#sha256:}/signature-1" "$T/sigs/cfs/mirror@sha256=${d1#sha256:}/"

mkdir "$T/rd"
printf 'docker:\n  %s:\n    lookaside: file://%s\n' "$REG" "$T/sigs" >"$T/rd/cfs.yaml"

# policy IDENTITY [KEYS]: a policy that rejects by default and wants, for
# $REG/cfs, a signature by KEYS (default: keyPath of the signer's key).
policy() {
	local id=$1 keys=${2:-"\"keyPath\": \"$T/signer.gpg\""}
	cat >"$T/policy.json" <<EOF
{"default": [{"type": "reject"}],
 "transports": {"docker": {
   "$REG/cfs": [{"type": "signedBy", "keyType": "GPGKeys", $keys${id:+, \"signedIdentity\": $id}}],
   "$REG/cfs/open": [{"type": "insecureAcceptAnything"}]}}}
EOF
}
R=$T/repo
P=(--plain-http --policy "$T/policy.json" --registries.d "$T/rd")
blob_gets() { grep -c 'GET /v2/[^ ]*/blobs/' "$T/reg/log" || true; }

# accepted: an image file byte for byte build --from-oci's, and the requirement in --json
policy ""
expect_exit 0 "$CFSCTL" pull "${P[@]}" --json "$REG/cfs/signed:v1" "$T/img"
cmp -s "$T/want.v1" "$T/img" || fail "the signed pull differs from build --from-oci"
# the count of blob requests below means something: the log has them
[ "$(blob_gets)" -gt 0 ] || fail "the registry's log shows no blob requests"
assert_eq "signedBy GPGKeys $fpr" "$(json_get "$T/out" policy)" "the requirement passed"
# gpg runs for the key and the signature, but starts no gpg-agent (a
# daemon for each pull, which outlived its keyring), and no more programs
# than it needs (each costs a start); the keyring is gone
if command -v strace >/dev/null; then
	mkdir "$T/gtmp"
	TMPDIR=$T/gtmp ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 expect_exit 0 \
		strace -f -qq -e trace=execve -o "$T/exec.log" "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed@$d1" "$T/img"
	grep -q 'execve("[^"]*/gpg"' "$T/exec.log" || fail "the signed pull ran no gpg: nothing checked"
	if grep 'execve("[^"]*gpg-agent"' "$T/exec.log"; then fail "the signed pull started a gpg-agent"; fi
	# nor asks gpgconf where gpg is, and each check reuses the keyring's context
	if grep 'execve("[^"]*gpgconf"' "$T/exec.log"; then fail "the signed pull ran gpgconf"; fi
	[ "$(grep -c 'execve("[^"]*/gpg", \[[^]]*"--version"' "$T/exec.log")" -le 2 ] ||
		fail "the signed pull asked gpg its version more than twice"
	[ -z "$(ls -A "$T/gtmp")" ] || fail "the pull left its keyring: $(ls -A "$T/gtmp")"
else
	echo "the gpg-agent check skipped: no strace (make deps)"
fi
expect_exit 0 "$CFSCTL" pull "${P[@]}" --repo "$R" "$REG/cfs/signed:v1" signed
[ -e "$R/images/refs/signed" ] || fail "the accepted pull named nothing"
# images --json: the name's manifest digest and the requirement it passed
expect_exit 0 "$CFSCTL" images --repo "$R" --json
python3 -c 'import json,sys; n=json.load(open(sys.argv[1]))["names"][0]; print(n["name"], n["source"], n["manifest"], n["policy"])' \
	"$T/out" >"$T/origin" || fail "reading images --json"
assert_eq "signed $REG/cfs/signed:v1 $d1 signedBy GPGKeys $fpr" "$(cat "$T/origin")" "the name's origin"
# named again by images --tag: the record no longer holds
expect_exit 0 "$CFSCTL" images --repo "$R" --tag signed2 signed
expect_exit 0 "$CFSCTL" images --repo "$R" --json
python3 -c 'import json,sys; print([(n["name"], n["manifest"]) for n in json.load(open(sys.argv[1]))["names"]])' \
	"$T/out" >"$T/origin" || fail "reading images --json"
assert_eq "[('signed', '$d1'), ('signed2', None)]" "$(cat "$T/origin")" "origins after --tag"

# refused TEST REFERENCE REASON: exit 1, the reference and REASON said,
# no name, no new object, no blob fetched
refused() {
	local what=$1 ref=$2 reason=$3 gets objs
	gets=$(blob_gets)
	objs=$(find "$R/objects" -type f | wc -l)
	expect_exit 1 "$CFSCTL" pull "${P[@]}" --repo "$R" "$ref" refused
	assert_contains "$T/err" "'$(printf '%s' "$ref" | sed 's/[.[\*^$]/\\&/g')"
	assert_contains "$T/err" "$reason"
	[ ! -e "$R/images/refs/refused" ] || fail "$what: a refused pull named its image"
	assert_eq "$objs" "$(find "$R/objects" -type f | wc -l)" "$what: objects after the refusal"
	assert_eq "$gets" "$(blob_gets)" "$what: blob requests during the refusal"
}
refused "no signature" "$REG/cfs/unsigned:v1" "no signature"
refused "reject" "$REG/other/img:v1" "rejects"
refused "another identity" "$REG/cfs/signed:other" "another identity, '$REG/cfs/signed:v1'"
# a signature of v1 in v2's place: another manifest
mkdir -p "$T/sigs/cfs/signed@sha256=${d2#sha256:}"
cp "$T/sigs/cfs/signed@sha256=${d1#sha256:}/signature-1" "$T/sigs/cfs/signed@sha256=${d2#sha256:}/"
refused "another manifest" "$REG/cfs/signed:v2" "another manifest, $d1"
head -c 40 "$T/sigs/cfs/signed@sha256=${d1#sha256:}/signature-1" \
	>"$T/sigs/cfs/signed@sha256=${d2#sha256:}/signature-1"
refused "truncated" "$REG/cfs/signed:v2" "not an OpenPGP signed message"
head -c 300 /dev/urandom >"$T/sigs/cfs/signed@sha256=${d2#sha256:}/signature-1"
refused "garbage" "$REG/cfs/signed:v2" "not an OpenPGP signed message"
# a payload with an extra critical member, signed by the signer: verified, then refused
printf '{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": "%s"}, "identity": {"docker-reference": "%s"}, "extra": 1}, "optional": {}}' \
	"$d2" "$REG/cfs/signed:v2" >"$T/payload"
gpg --batch -u "$fpr" --output "$T/sigs/cfs/signed@sha256=${d2#sha256:}/signature-1" --yes \
	--sign "$T/payload" 2>"$T/gpg.err" || { cat "$T/gpg.err"; fail "signing the payload"; }
refused "extra critical member" "$REG/cfs/signed:v2" "unknown member 'extra'"
# the same, well formed: accepted (the check above is of the member, not the signature)
printf '{"critical": {"type": "atomic container signature", "image": {"docker-manifest-digest": "%s"}, "identity": {"docker-reference": "%s"}}, "optional": {}}' \
	"$d2" "$REG/cfs/signed:v2" >"$T/payload"
gpg --batch -u "$fpr" --output "$T/sigs/cfs/signed@sha256=${d2#sha256:}/signature-1" --yes \
	--sign "$T/payload" 2>"$T/gpg.err" || { cat "$T/gpg.err"; fail "signing the payload"; }
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:v2" "$T/img"

# another key
policy "" "\"keyPath\": \"$T/other.gpg\""
refused "unknown key" "$REG/cfs/signed:v1" "unknown key"
# keyPaths, keyData
policy "" "\"keyPaths\": [\"$T/other.gpg\", \"$T/signer.gpg\"]"
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:v1" "$T/img"
policy "" "\"keyData\": \"$(base64 -w0 <"$T/signer.gpg")\""
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:v1" "$T/img"

# the signedIdentity forms; the signature names $REG/cfs/signed:v1
policy '{"type": "matchExact"}'
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:v1" "$T/img"
refused "matchExact by digest" "$REG/cfs/signed@$d1" "another identity"
policy '{"type": "matchRepoDigestOrExact"}'
refused "matchRepoDigestOrExact" "$REG/cfs/signed:other" "another identity"
policy '{"type": "matchRepository"}'
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:other" "$T/img"
refused "matchRepository" "$REG/cfs/mirror:v1" "another identity"
policy "{\"type\": \"exactReference\", \"dockerReference\": \"$REG/cfs/signed:v1\"}"
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:other" "$T/img"
policy "{\"type\": \"exactReference\", \"dockerReference\": \"$REG/cfs/signed:v9\"}"
refused "exactReference" "$REG/cfs/signed:v1" "another identity"
policy "{\"type\": \"exactRepository\", \"dockerRepository\": \"$REG/cfs/signed\"}"
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/mirror:v1" "$T/img"
policy "{\"type\": \"remapIdentity\", \"prefix\": \"$REG/cfs/mirror\", \"signedPrefix\": \"$REG/cfs/signed\"}"
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/mirror:v1" "$T/img"
refused "remapIdentity" "$REG/cfs/signed:other" "another identity"

# the lookaside over http
start_server sigs "$T/sigs" ok
printf 'docker:\n  %s/cfs:\n    lookaside: %s\n' "$REG" "$SERVER_URL" >"$T/rd/cfs.yaml"
policy ""
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/signed:v1" "$T/img"
cmp -s "$T/want.v1" "$T/img" || fail "the pull with an http lookaside differs"
grep -q "signed@sha256=${d1#sha256:}/signature-1" "$T/sigs.log" || fail "the http lookaside was not read"

# the default locations: ~/.config/containers/policy.json and registries.d
mkdir -p "$T/home/.config/containers/registries.d"
printf 'docker:\n  %s:\n    lookaside: file://%s\n' "$REG" "$T/sigs" \
	>"$T/home/.config/containers/registries.d/cfs.yaml"
policy ""
cp "$T/policy.json" "$T/home/.config/containers/policy.json"
HOME=$T/home expect_exit 0 "$CFSCTL" pull --plain-http --json "$REG/cfs/signed:v1" "$T/img"
assert_eq "signedBy GPGKeys $fpr" "$(json_get "$T/out" policy)" "the default policy's requirement"
HOME=$T/home expect_exit 1 "$CFSCTL" pull --plain-http "$REG/cfs/unsigned:v1" "$T/img"
assert_contains "$T/err" "no signature"

# policies that are not ones: the file and the reason said
echo '{"default": [{"type": "signedBy", "keyType": "GPGKeys"}]}' >"$T/bad.json"
expect_exit 1 "$CFSCTL" pull --plain-http --policy "$T/bad.json" "$REG/cfs/signed:v1" "$T/img"
assert_contains "$T/err" "bad\.json.*exactly one of keyPath"
echo '{"default": [{"type": "insecureAcceptAnything", "x": 1}]}' >"$T/bad.json"
expect_exit 1 "$CFSCTL" pull --plain-http --policy "$T/bad.json" "$REG/cfs/signed:v1" "$T/img"
assert_contains "$T/err" "bad\.json.*unknown member 'x'"
echo '{"default": []}' >"$T/bad.json"
expect_exit 1 "$CFSCTL" pull --plain-http --policy "$T/bad.json" "$REG/cfs/signed:v1" "$T/img"
assert_contains "$T/err" "bad\.json.*1 to"
expect_exit 1 "$CFSCTL" pull --plain-http --policy "$T/missing.json" "$REG/cfs/signed:v1" "$T/img"
assert_contains "$T/err" "missing\.json.*No such file"
[ ! -e "$T/img.tmp" ] || fail "a temporary was left"
echo "PASS"
