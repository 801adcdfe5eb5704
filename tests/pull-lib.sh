# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the cfsctl pull tests (tests/cli/55-*.sh to 59-*.sh) after
# lib.sh and fetch-lib.sh: a small container image in an OCI layout
# ($T/lay, tags v1 and multi, a two-platform index), the image build
# --from-oci makes of v1 ($T/want.v1), the files of a fake registry serving
# both as repository "img" ($T/fake/v2/img), and servers for them:
# docker-registry (start_registry) and tests/fetch-server.py over https
# (start_tls_server).
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022

mkdir "$T/L"
python3 "$TESTS_DIR/oci-layers.py" "$T/L" || fail "writing the layers"
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/2.tar", "zstd"], ["$T/L/3.tar", "none"]]},
 {"tag": "multi", "platforms": [
   {"arch": "amd64", "layers": [["$T/L/1.tar", "gzip"]]},
   {"arch": "arm64", "variant": "v8", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/arm.tar", "zstd"]]}]}]
EOF
python3 "$TESTS_DIR/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
"$CFSCTL" build --from-oci "oci:$T/lay:v1" "$T/want.v1" >"$T/build.out" 2>&1 || {
	cat "$T/build.out"; fail "build --from-oci of the layout"
}
for tag in v1 multi; do
	python3 "$TESTS_DIR/oci-push.py" "$T/lay" $tag "dir:$T/fake" img $tag >/dev/null ||
		fail "writing the fake registry's files"
done
# the manifest of v1 and its layers, as the fake registry serves them
F=$T/fake/v2/img
v1_digest=sha256:$(sha256sum <"$F/manifests/v1" | cut -c1-64)

# start_registry NAME [tls [HTPASSWD]]: a docker-registry with its config and
# storage in $T/NAME, on a free port, at $REG; with tls, https with the
# self-signed certificate $T/NAME/cert.pem (made once); with HTPASSWD, it
# wants the Basic credentials of that htpasswd file. Its storage outlives
# it: a registry started again with the same NAME serves what was pushed.
start_registry() {
	local r=$T/$1 tls=${2:-} htpasswd=${3:-} port tries i scheme=http
	command -v docker-registry >/dev/null || fail "docker-registry is not installed (make deps)"
	mkdir -p "$r"
	if [ -n "$tls" ]; then
		[ -f "$r/cert.pem" ] || make_cert "$r"
		scheme=https
	fi
	for tries in 1 2 3 4 5; do
		port=$(free_port)
		{
			echo "version: 0.1"
			echo "log: {level: error}"
			echo "storage: {filesystem: {rootdirectory: $r/data}}"
			echo "http:"
			echo "  addr: 127.0.0.1:$port"
			[ -n "$tls" ] && echo "  tls: {certificate: $r/cert.pem, key: $r/key.pem}"
			[ -n "$htpasswd" ] && echo "auth: {htpasswd: {realm: cfs-test, path: $htpasswd}}"
		} >"$r/config.yml"
		docker-registry serve "$r/config.yml" >>"$r/log" 2>&1 &
		FETCH_PIDS+=($!)
		for i in $(seq 100); do
			# 200, or 401 when it wants credentials: either way it answers
			case $(curl -s ${tls:+--cacert "$r/cert.pem"} -o /dev/null -w '%{http_code}' \
				"$scheme://127.0.0.1:$port/v2/") in
			200 | 401) break ;;
			esac
			kill -0 "${FETCH_PIDS[-1]}" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "${FETCH_PIDS[-1]}" 2>/dev/null; then
			REG=127.0.0.1:$port
			return 0
		fi
	done
	cat "$r/log"
	fail "docker-registry did not start"
}

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
