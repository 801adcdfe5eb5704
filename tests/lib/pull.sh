# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the cfsctl pull tests (tests/cli/2004-*.sh to 2008-*.sh) after
# lib/common.sh and lib/fetch.sh: a small container image in an OCI layout
# ($T/lay, tags v1 and multi, a two-platform index), the image build
# --from-oci makes of v1 ($T/want.v1), the files of a fake registry serving
# both as repository "img" ($T/fake/v2/img), and tests/lib/fetch-server.py
# over https (start_tls_server); the docker-registry is lib/fetch.sh's
# start_registry.
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022

mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/2.tar", "zstd"], ["$T/L/3.tar", "none"]]},
 {"tag": "multi", "platforms": [
   {"arch": "amd64", "layers": [["$T/L/1.tar", "gzip"]]},
   {"arch": "arm64", "variant": "v8", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/arm.tar", "zstd"]]}]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
"$CFSCTL" build --from-oci "oci:$T/lay:v1" "$T/want.v1" >"$T/build.out" 2>&1 || {
	cat "$T/build.out"; fail "build --from-oci of the layout"
}
for tag in v1 multi; do
	python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" $tag "dir:$T/fake" img $tag >/dev/null ||
		fail "writing the fake registry's files"
done
# the manifest of v1 and its layers, as the fake registry serves them
F=$T/fake/v2/img
v1_digest=sha256:$(sha256sum <"$F/manifests/v1" | cut -c1-64)

# start_tls_server NAME ROOT MODE [ARGS...]: start_server over https, with
# the certificate $T/tls-cert/cert.pem; its URL in $SERVER_URL.
start_tls_server() {
	local name=$1 root=$2 mode=$3
	shift 3
	mkdir -p "$T/tls-cert"
	[ -f "$T/tls-cert/cert.pem" ] || make_cert "$T/tls-cert"
	start_server "$name" "$root" "$mode" --tls "$T/tls-cert/cert.pem" "$T/tls-cert/key.pem" "$@"
	SERVER_URL=https://${SERVER_URL#http://}
}

# elapsed_since START: whole seconds since START (a $SECONDS value)
elapsed_since() { echo $((SECONDS - $1)); }
