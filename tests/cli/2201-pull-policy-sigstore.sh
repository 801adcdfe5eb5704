#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull --policy with sigstoreSigned and use-sigstore-attachments:
# cosign signatures made with openssl (ECDSA P-256, SHA-256, over the
# simple-signing payload) and attached as cosign attaches them (the
# sha256-<hex>.sig tag). Accepted with keyPath and keyData; refused, with
# exit 1, the reference and the reason said, and no name, object or layer
# fetched: another key, another identity, another manifest, no signature,
# attachments off, an extra critical member, a .sig manifest of a thousand
# layers, a payload that claims 1 GiB (refused unread), and a lookaside
# (signedBy) that redirects to another host.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
command -v openssl >/dev/null || skip "openssl is not installed (make deps)"
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

for k in key other; do
	openssl ecparam -genkey -name prime256v1 -noout -out "$T/$k.pem" 2>/dev/null &&
		openssl ec -in "$T/$k.pem" -pubout -out "$T/$k.pub" 2>/dev/null || fail "making the $k key"
done

start_registry --accesslog reg
push() { python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" "$1" "http://$REG" "$2" "$3" || fail "pushing $2:$3"; }
d1=$(push v1 cfs/img v1)
d2=$(push v2 cfs/img v2)
push v1 cfs/img other >/dev/null
push v2 cfs/bad v2 >/dev/null

# sign REPO DIGEST IDENTITY [KEY [EXTRA [LAYERS [SIZE]]]]: attach a signature
sign() {
	local repo=$1 digest=$2 id=$3 key=${4:-$T/key.pem} extra=${5:-} n=${6:-1} size=${7:-}
	printf '{"critical":{"identity":{"docker-reference":"%s"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"%s},"optional":null}' \
		"$id" "$digest" "$extra" >"$T/payload"
	openssl dgst -sha256 -sign "$key" -out "$T/sig" "$T/payload" || fail "signing"
	python3 "$TESTS_DIR/lib/cosign-push.py" "http://$REG" "$repo" "$digest" "$T/payload" \
		"$(base64 -w0 <"$T/sig")" "$n" $size >/dev/null || fail "attaching the signature"
}
sign cfs/img "$d1" "$REG/cfs/img:v1"

mkdir "$T/rd"
printf 'docker:\n  %s/cfs:\n    use-sigstore-attachments: true\n' "$REG" >"$T/rd/cfs.yaml"
# policy KEYS: sigstoreSigned by KEYS for $REG/cfs, reject elsewhere
policy() {
	cat >"$T/policy.json" <<EOF
{"default": [{"type": "reject"}],
 "transports": {"docker": {"$REG/cfs": [{"type": "sigstoreSigned", $1}]}}}
EOF
}
R=$T/repo
P=(--plain-http --policy "$T/policy.json" --registries.d "$T/rd")
blob_gets() { grep -c 'GET /v2/[^ ]*/blobs/' "$T/reg/log" || true; }

policy "\"keyPath\": \"$T/key.pub\""
expect_exit 0 "$CFSCTL" pull "${P[@]}" --json "$REG/cfs/img:v1" "$T/img"
cmp -s "$T/want.v1" "$T/img" || fail "the signed pull differs from build --from-oci"
# the count of blob requests below means something: the log has them
[ "$(blob_gets)" -gt 0 ] || fail "the registry's log shows no blob requests"
assert_eq "sigstoreSigned $T/key.pub" "$(json_get "$T/out" policy)" "the requirement passed"
expect_exit 0 "$CFSCTL" pull "${P[@]}" --repo "$R" "$REG/cfs/img@$d1" signed
policy "\"keyData\": \"$(base64 -w0 <"$T/key.pub")\""
expect_exit 0 "$CFSCTL" pull "${P[@]}" "$REG/cfs/img:v1" "$T/img"

# refused WHAT REFERENCE REASON: exit 1, the reference and REASON said, no
# name, no new object; no blob fetched but the .sig manifest's own
refused() {
	local what=$1 ref=$2 reason=$3 gets objs
	gets=$(blob_gets)
	objs=$(find "$R/objects" -type f | wc -l)
	expect_exit 1 "$CFSCTL" pull "${P[@]}" --repo "$R" "$ref" refused
	assert_contains "$T/err" "$reason"
	grep -qF "'$ref'" "$T/err" || { cat "$T/err"; fail "$what: the reference is not named"; }
	[ ! -e "$R/images/refs/refused" ] || fail "$what: a refused pull named its image"
	assert_eq "$objs" "$(find "$R/objects" -type f | wc -l)" "$what: objects after the refusal"
	grep 'GET /v2/[^ ]*/blobs/' "$T/reg/log" | tail -n +$((gets + 1)) >"$T/gets"
	# the payloads of the .sig manifest may be read; no config, no layer
	for b in $(grep -o 'blobs/sha256:[0-9a-f]*' "$T/gets" | sort -u); do
		[ ! -e "$T/lay/blobs/sha256/${b#blobs/sha256:}" ] ||
			fail "$what: blob ${b#blobs/} of the image fetched during the refusal"
	done
}
policy "\"keyPath\": \"$T/other.pub\""
refused "another key" "$REG/cfs/img:v1" "does not verify"
policy "\"keyPath\": \"$T/key.pub\""
refused "another identity" "$REG/cfs/img:other" "another identity, '$REG/cfs/img:v1'"
refused "no signature" "$REG/cfs/img:v2" "no sigstore signature"
sign cfs/img "$d2" "$REG/cfs/img:v2" "$T/key.pem" ',"extra":1'
refused "extra critical member" "$REG/cfs/img:v2" "unknown member 'extra'"
# another manifest: v1's payload attached to v2
printf '{"critical":{"identity":{"docker-reference":"%s"},"image":{"docker-manifest-digest":"%s"},"type":"cosign container image signature"},"optional":null}' \
	"$REG/cfs/img:v2" "$d1" >"$T/payload"
openssl dgst -sha256 -sign "$T/key.pem" -out "$T/sig" "$T/payload" || fail "signing"
python3 "$TESTS_DIR/lib/cosign-push.py" "http://$REG" cfs/img "$d2" "$T/payload" \
	"$(base64 -w0 <"$T/sig")" >/dev/null || fail "attaching the signature"
refused "another manifest" "$REG/cfs/img:v2" "another manifest, $d1"
# bounds: a thousand layers; a payload that claims 1 GiB
sign cfs/bad "$d2" "$REG/cfs/bad:v2" "$T/key.pem" "" 1000
refused "a thousand signatures" "$REG/cfs/bad:v2" "more than 128 signatures"
sign cfs/bad "$d2" "$REG/cfs/bad:v2" "$T/key.pem" "" 1 $((1 << 30))
refused "1 GiB payload" "$REG/cfs/bad:v2" "1073741824 bytes, more than"
# attachments off
printf 'docker:\n  %s/cfs:\n    use-sigstore-attachments: false\n' "$REG" >"$T/rd/cfs.yaml"
refused "attachments off" "$REG/cfs/img:v1" "use-sigstore-attachments is not on"

# a lookaside that redirects to another host (localhost is not 127.0.0.1)
port=$(free_port)
python3 - "$port" <<'EOF' >"$T/redir.log" 2>&1 &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", "http://localhost:%s%s" % (sys.argv[1], self.path))
        self.end_headers()
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
FETCH_PIDS+=($!)
for i in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.1; done
printf 'docker:\n  %s/cfs:\n    lookaside: http://127.0.0.1:%s\n' "$REG" "$port" >"$T/rd/cfs.yaml"
openssl rand 32 >"$T/k.gpg" # never read: the lookaside fails first
cat >"$T/policy.json" <<EOF
{"default": [{"type": "signedBy", "keyType": "GPGKeys", "keyPath": "$T/k.gpg"}]}
EOF
expect_exit 1 "$CFSCTL" pull "${P[@]}" --repo "$R" "$REG/cfs/img:v1" refused
assert_contains "$T/err" "redirected to another host"
[ ! -e "$R/images/refs/refused" ] || fail "a refused pull named its image"
echo "PASS"
