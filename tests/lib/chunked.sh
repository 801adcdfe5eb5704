# SPDX-License-Identifier: GPL-2.0 OR MIT
# What the zstd:chunked tests (2100, 2101-2103, 2104, 2105) share: two versions A and
# B of a one-layer image (tests/lib/chunked-tree.py) pushed by skopeo as
# zstd:chunked (REG/t/chunked:A, :B) and as gzip (REG/t/gzip:A, :B) to a
# docker-registry logging each request (lib/fetch.sh's start_registry
# --accesslog reg), and chunked-proxy.py in front of it.
# Source after lib/common.sh; it sources lib/fetch.sh.
. "$TESTS_DIR/lib/fetch.sh"
command -v skopeo >/dev/null || fail "skopeo is not installed (make deps)"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022

# sent_since OFFSET: the body bytes of the blob GETs the access log has
# recorded past byte OFFSET of $T/reg/log
sent_since() {
	tail -c +$(($1 + 1)) "$T/reg/log" |
		awk '$0 ~ /"GET \/v2\/[^ ]*\/blobs\// && $9 ~ /^20[06]$/ { s += $10 } END { print s + 0 }'
}

# push_images: a registry started (start_registry --accesslog reg), and the
# layout $T/lay (A and B, gzip) pushed to it as zstd:chunked and as gzip
push_images() {
	start_registry --accesslog reg
	mkdir -p "$T/trees"
	python3 "$TESTS_DIR/lib/chunked-tree.py" "$T/trees" || fail "writing the layers"
	cat >"$T/spec.json" <<SPEC
[{"tag": "A", "layers": [["$T/trees/A.tar", "gzip"]]},
 {"tag": "B", "layers": [["$T/trees/B.tar", "gzip"]]}]
SPEC
	python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
	echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/policy.json"
	local v
	for v in A B; do
		skopeo --policy "$T/policy.json" copy -q --dest-tls-verify=false \
			--dest-compress-format zstd:chunked "oci:$T/lay:$v" \
			"docker://$REG/t/chunked:$v" >"$T/skopeo.log" 2>&1 ||
			{ cat "$T/skopeo.log"; fail "skopeo copy $v as zstd:chunked"; }
		skopeo --policy "$T/policy.json" copy -q --dest-tls-verify=false \
			"oci:$T/lay:$v" "docker://$REG/t/gzip:$v" >"$T/skopeo.log" 2>&1 ||
			{ cat "$T/skopeo.log"; fail "skopeo copy $v as gzip"; }
	done
}

# layer_json TAG KEY: a field of the only layer of REG/t/chunked:TAG's manifest
layer_json() {
	curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"http://$REG/v2/t/chunked/manifests/$1" |
		python3 -c 'import json,sys; l=json.load(sys.stdin)["layers"][0]; k=sys.argv[1]
print(l[k] if k in l else l["annotations"][k])' "$2"
}

# get_toc TAG FILE: the TOC of REG/t/chunked:TAG, uncompressed, into FILE
get_toc() {
	local pos off len
	pos=$(layer_json "$1" io.containers.zstd-chunked.manifest-position) || fail "no TOC position"
	off=${pos%%:*}
	len=${pos#*:}
	len=${len%%:*}
	curl -sf -r "$off-$((off + len - 1))" "http://$REG/v2/t/chunked/blobs/$(layer_json "$1" digest)" |
		zstd -dcq >"$2" || fail "fetching the TOC of $1"
}

# start_proxy MODE [TOC.json [raw]]: chunked-proxy.py in front of $REG, at
# $PROXY; with TOC.json, the TOC it serves, compressed here (with raw: as it is)
start_proxy() {
	local i
	rm -f "$T/proxy.port"
	if [ "${3:-}" = raw ]; then
		cp "$2" "$2.zst"
	elif [ -n "${2:-}" ]; then
		zstd -qf "$2" -o "$2.zst" || fail "compressing $2"
	fi
	python3 "$TESTS_DIR/lib/chunked-proxy.py" --upstream "$REG" --port-file "$T/proxy.port" \
		--mode "$1" ${2:+--toc "$2.zst" --toc-size $(stat -c %s "$2")} 2>"$T/proxy.err" &
	FETCH_PIDS+=($!)
	PROXY_PID=$!
	for i in $(seq 100); do
		[ -s "$T/proxy.port" ] && break
		sleep 0.1
	done
	[ -s "$T/proxy.port" ] || { cat "$T/proxy.err"; fail "chunked-proxy.py did not start"; }
	PROXY=127.0.0.1:$(cat "$T/proxy.port")
}

stop_proxy() {
	kill "$PROXY_PID" 2>/dev/null
	wait "$PROXY_PID" 2>/dev/null
	:
}
