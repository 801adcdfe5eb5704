#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --from-oci applies containers-policy.json(5) to oci: (and
# oci-archive:) sources: the scopes of transport "oci" by the layout's
# resolved path, with ":TAG", then the path and the directories above it,
# then "", else "default". An OCI layout carries no signatures: reject,
# signedBy and sigstoreSigned refuse it (exit 1, the source and the reason
# said, no image, no name, no object), insecureAcceptAnything accepts it.
# Without --policy the default files are looked up (~/.config first); a
# policy file that does not parse, or a bad oci scope, is an error.
. "$(dirname "$0")/../lib/common.sh"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022

mkdir "$T/L" "$T/d"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
L=$T/L
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"]]},
 {"tag": "v2", "layers": [["$L/1.tar", "gzip"], ["$L/3.tar", "none"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/d/lay" "$T/spec.json" || fail "writing the image layout"
ln -s d/lay "$T/link"
D=$(realpath "$T/d/lay")
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/accept.json"
expect_exit 0 "$CFSCTL" build --from-oci --policy "$T/accept.json" "oci:$T/d/lay:v1" "$T/want.v1"

# policy DEFAULT OCI-SCOPES: the default requirement's type, and the oci transport's scopes
policy() {
	printf '{"default": [{"type": "%s"}], "transports": {"oci": {%s}}}\n' "$1" "$2" >"$T/policy.json"
}
R=$T/repo
# accepted SOURCE: the build passes, and makes build's image
accepted() {
	rm -f "$T/img"
	expect_exit 0 "$CFSCTL" build --from-oci --policy "$T/policy.json" "$1" "$T/img"
	cmp -s "$T/want.${1##*:}" "$T/img" 2>/dev/null || [ "${1##*:}" = v2 ] || fail "$1: not the image of the layout"
}
# refused SOURCE REASON: exit 1, the source and REASON said, nothing left
refused() {
	rm -f "$T/img"
	expect_exit 1 "$CFSCTL" build --from-oci --policy "$T/policy.json" "$1" "$T/img"
	grep -qF "'$1': refused by the policy: $2" "$T/err" || fail "$1: the reason: $(cat "$T/err")"
	[ ! -e "$T/img" ] || fail "$1: a refused build wrote its image"
	expect_exit 1 "$CFSCTL" build --from-oci --policy "$T/policy.json" --repo "$R" "$1" refused
	[ ! -e "$R/images/refs/refused" ] || fail "$1: a refused build named its image"
	[ -z "$(find "$R" -type f 2>/dev/null)" ] || fail "$1: a refused build left files in the repository"
}

policy reject ""
refused "oci:$T/d/lay:v1" "the policy rejects it (scope 'default')"
policy reject "\"$D\": [{\"type\": \"insecureAcceptAnything\"}]"
accepted "oci:$T/d/lay:v1"
accepted "oci:$T/link:v1" # the scope is the resolved path
accepted "oci:$T/d/lay:v2"
# DIR:TAG before DIR
policy reject "\"$D\": [{\"type\": \"reject\"}], \"$D:v1\": [{\"type\": \"insecureAcceptAnything\"}]"
accepted "oci:$T/d/lay:v1"
refused "oci:$T/d/lay:v2" "the policy rejects it (scope '$D')"
# a directory above it, then the transport's ""
policy reject "\"$(dirname "$D")\": [{\"type\": \"insecureAcceptAnything\"}]"
accepted "oci:$T/d/lay:v1"
policy reject "\"\": [{\"type\": \"insecureAcceptAnything\"}]"
accepted "oci:$T/d/lay:v1"
policy insecureAcceptAnything "\"\": [{\"type\": \"reject\"}]"
refused "oci:$T/d/lay:v1" "the policy rejects it (scope '')"
# a docker scope is not an oci one
printf '{"default": [{"type": "reject"}], "transports": {"docker": {"": [{"type": "insecureAcceptAnything"}]}}}\n' >"$T/policy.json"
refused "oci:$T/d/lay:v1" "the policy rejects it (scope 'default')"
# signatures: a layout has none
openssl rand 32 >"$T/k.gpg"
policy reject "\"$D\": [{\"type\": \"signedBy\", \"keyType\": \"GPGKeys\", \"keyPath\": \"$T/k.gpg\"}]"
refused "oci:$T/d/lay:v1" "signedBy needs a signature, and an image of transport oci carries none (scope '$D')"
policy reject "\"$D\": [{\"type\": \"sigstoreSigned\", \"keyPath\": \"$T/k.gpg\"}]"
refused "oci:$T/d/lay:v1" "sigstoreSigned needs a signature, and an image of transport oci carries none (scope '$D')"
# an oci-archive: its own transport, scoped by the file's path
tar -C "$T/d/lay" -cf "$T/d/lay.tar" . || fail "tar of the layout"
printf '{"default": [{"type": "reject"}], "transports": {"oci-archive": {"%s": [{"type": "insecureAcceptAnything"}]}}}\n' \
	"$(realpath "$T/d/lay.tar")" >"$T/policy.json"
accepted "oci-archive:$T/d/lay.tar:v1"
refused "oci:$T/d/lay:v1" "the policy rejects it (scope 'default')"

# scopes that are no absolute path in its clean form
for bad in "relative/lay" "/" "$D/" "$D/../lay" "$T//d/lay"; do
	policy reject "\"$bad\": [{\"type\": \"insecureAcceptAnything\"}]"
	expect_exit 1 "$CFSCTL" build --from-oci --policy "$T/policy.json" "oci:$T/d/lay:v1" "$T/img"
	grep -qF "oci scope '$bad' is not an absolute path in its clean form" "$T/err" ||
		fail "the scope '$bad': $(cat "$T/err")"
done
echo '{"default": [' >"$T/policy.json"
expect_exit 1 "$CFSCTL" build --from-oci --policy "$T/policy.json" "oci:$T/d/lay:v1" "$T/img"
grep -qF "$T/policy.json" "$T/err" || fail "a policy that does not parse: $(cat "$T/err")"
expect_exit 1 "$CFSCTL" build --from-oci --policy "$T/missing.json" "oci:$T/d/lay:v1" "$T/img"
grep -qF "$T/missing.json" "$T/err" || fail "a missing policy: $(cat "$T/err")"

# the default lookup: ~/.config/containers/policy.json comes first
mkdir -p "$T/home/.config/containers"
echo '{"default": [{"type": "reject"}]}' >"$T/home/.config/containers/policy.json"
HOME=$T/home expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/d/lay:v1" "$T/img"
grep -qF "refused by the policy: the policy rejects it (scope 'default')" "$T/err" ||
	fail "the default policy: $(cat "$T/err")"
[ ! -e "$T/img" ] || fail "a build the default policy refused wrote its image"
echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/home/.config/containers/policy.json"
HOME=$T/home expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/d/lay:v1" "$T/img"

expect_exit 2 "$CFSCTL" build --policy "$T/accept.json" "$T/d" "$T/img"
expect_exit 2 "$CFSCTL" build --from-oci --policy= "oci:$T/d/lay:v1" "$T/img"
echo ok
