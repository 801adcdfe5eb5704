#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull: images pushed to a docker-registry (the CNCF distribution
# registry) on 127.0.0.1, pulled by tag and by digest, in both formats,
# give the image build --from-oci makes of the same layout, byte for byte;
# an index's platforms, docker media types; a layer that is not its
# config's diff_id is refused. A fake registry (fetch-server.py
# serving the distribution API's paths) asks for a bearer token, serves a
# tampered blob or manifest, a truncated or stalled one, or refuses; each
# failure names the reference or blob, exits 1, and leaves no image and no
# object; a pull killed mid-way leaves nothing that the next one keeps.
# With --layers-cache a second pull fetches only the layers not seen yet,
# and again one whose object went from the store.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022

# Three layers: whiteouts, an opaque directory, a hardlink into the first
# layer, xattrs, devices, a file replaced by a directory and back.
mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
L=$T/L
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"], ["$L/3.tar", "none"]]},
 {"tag": "v2", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"], ["$L/arm.tar", "none"]]},
 {"tag": "docker", "docker": true, "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "gzip"]]},
 {"tag": "multi", "platforms": [
   {"arch": "amd64", "layers": [["$L/1.tar", "gzip"]]},
   {"arch": "arm64", "layers": [["$L/1.tar", "gzip"], ["$L/arm.tar", "zstd"]]}]},
 {"tag": "bzip2", "layer_type": "application/vnd.oci.image.layer.v1.tar+bzip2",
  "layers": [["$L/1.tar", "none"]]},
 {"tag": "baddiff", "layers": [["$L/1.tar", "gzip"], ["$L/2.tar", "zstd"], ["$L/3.tar", "none"]],
  "diff_ids": {"2": "sha256:$(printf '%064d' 0)"}}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"

start_registry reg
push() { # TAG URL REPO NEWTAG: the pushed manifest's digest on stdout
	python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" "$@" || fail "pushing $1 to $2"
}
v1_digest=$(push v1 "http://$REG" cfs/test v1)
push docker "http://$REG" cfs/test docker >/dev/null
multi_digest=$(push multi "http://$REG" cfs/test multi)
push bzip2 "http://$REG" cfs/test bzip2 >/dev/null
push baddiff "http://$REG" cfs/test baddiff >/dev/null
push v1 "http://$REG" cfs/test latest >/dev/null

# What the pulls must give: build --from-oci of the layout.
for f in v1 erofs; do
	fmt=v1 && [ $f = erofs ] && fmt=erofs
	expect_exit 0 "$CFSCTL" build --from-oci --format=$fmt --print-digest \
		--digest-store="$T/want-store.$f" "oci:$T/lay:v1" "$T/want.$f"
	cp "$T/out" "$T/want.$f.digest"
done
"$CFSCTL" inspect dump "$T/want.v1" >"$T/want.dump" || fail "inspect dump"
for p in '^/flip 12 100644 ' '^/flip/' '^/lib/new ' '^/lib/old ' '^/rm-me ' \
	'^/sh-link .* /bin/sh' '^/dev/zero 0 20666 ' 'user\.k=v'; do
	case $p in
	'^/flip/' | '^/lib/old ' | '^/rm-me ') ! grep -qE "$p" "$T/want.dump" ;;
	*) grep -qE "$p" "$T/want.dump" ;;
	esac || fail "the layers do not make the tree they should ($p)"
done

# By tag and by digest, both formats, with a digest store: the same image
# and the same objects; without a tag, 'latest'.
for ref in "$REG/cfs/test:v1" "$REG/cfs/test@$v1_digest" "$REG/cfs/test"; do
	for f in v1 erofs; do
		fmt=v1 && [ $f = erofs ] && fmt=erofs
		rm -rf "$T/store"
		expect_exit 0 "$CFSCTL" pull --plain-http --format=$fmt --print-digest \
			--digest-store="$T/store" "$ref" "$T/pulled.$f"
		cmp -s "$T/want.$f" "$T/pulled.$f" || fail "pull $ref ($f) differs from build --from-oci"
		assert_eq "$(cat "$T/want.$f.digest")" "$(cat "$T/out")" "--print-digest of pull $ref"
		check_store "$T/store"
		[ "$(store_files "$T/store")" = "$(store_files "$T/want-store.$f")" ] ||
			fail "pull $ref put other objects in the store than build"
	done
done
expect_exit 0 "$CFSCTL" pull --plain-http --threads=1 "$REG/cfs/test:v1" "$T/t1.img"
cmp -s "$T/want.v1" "$T/t1.img" || fail "--threads=1 changes the pulled image"

# Docker media types; an index with two platforms, by tag and by digest.
expect_exit 0 "$CFSCTL" build --from-oci "oci:$T/lay:docker" "$T/want.docker"
expect_exit 0 "$CFSCTL" pull --plain-http "$REG/cfs/test:docker" "$T/docker.img"
cmp -s "$T/want.docker" "$T/docker.img" || fail "the docker image differs"
for p in linux/amd64 linux/arm64; do
	expect_exit 0 "$CFSCTL" build --from-oci --platform=$p "oci:$T/lay:multi" "$T/want.multi"
	for ref in "$REG/cfs/test:multi" "$REG/cfs/test@$multi_digest"; do
		expect_exit 0 "$CFSCTL" pull --plain-http --platform=$p "$ref" "$T/multi.img"
		cmp -s "$T/want.multi" "$T/multi.img" || fail "pull --platform=$p $ref differs"
	done
done
"$CFSCTL" inspect dump "$T/multi.img" | grep -q '^/arm ' || fail "linux/arm64 was not chosen"
expect_exit 1 "$CFSCTL" pull --plain-http --platform=linux/s390x "$REG/cfs/test:multi" "$T/bad.img"
assert_contains "$T/err" "'$REG/cfs/test:multi': no manifest for platform linux/s390x"

# https, with --cacert naming the registry's CA.
plain=$REG
start_registry tls tls
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "https://$REG" cfs/test v1 "$T/tls/cert.pem" \
	>/dev/null || fail "pushing to the https registry"
expect_exit 0 "$CFSCTL" pull --cacert="$T/tls/cert.pem" "$REG/cfs/test:v1" "$T/tls.img"
cmp -s "$T/want.v1" "$T/tls.img" || fail "the image pulled over https differs"
expect_exit 1 "$CFSCTL" pull --retries=0 "$REG/cfs/test:v1" "$T/bad.img"
assert_contains "$T/err" "'$REG/cfs/test:v1': .*certificate"
expect_exit 1 "$CFSCTL" pull --cacert="$T/nope.pem" "$REG/cfs/test:v1" "$T/bad.img"
REG=$plain

# Failures: each exits 1 naming what, leaves no image and no object.
PH=--plain-http
refused() { # PATTERN PULL-ARGS...: pull fails saying PATTERN
	local pat=$1
	shift
	rm -rf "$T/st2" "$T/bad.img"
	expect_exit 1 "$CFSCTL" pull --digest-store="$T/st2" "$@" "$T/bad.img"
	assert_contains "$T/err" "$pat"
	[ ! -e "$T/bad.img" ] || fail "a refused pull left an image"
	[ -z "$(find "$T/st2" -type f 2>/dev/null)" ] || fail "a refused pull left files in the store"
	[ -z "$(find "$T" -maxdepth 1 -name '.bad.img.*')" ] || fail "a refused pull left a temporary"
}
refused "'$REG/cfs/test:nope': HTTP 404: the repository has no manifest of that tag \(MANIFEST_UNKNOWN\); its tags: " \
	$PH "$REG/cfs/test:nope"
refused "'$REG/other/repo:v1': HTTP 404: the registry has no such repository \(NAME_UNKNOWN\)\$" $PH "$REG/other/repo:v1"
refused "'$REG/cfs/test@sha256:0{64}': HTTP 404" $PH "$REG/cfs/test@sha256:$(printf '0%.0s' $(seq 64))"
refused "layer 1 \(sha256:[0-9a-f]{64}\) has media type 'application/vnd\.oci\.image\.layer\.v1\.tar\+bzip2', which is not supported" \
	$PH "$REG/cfs/test:bzip2"
# The last layer is plain: its digest is its diff_id, which the config
# does not give.
l3=sha256:$(sha256sum <"$L/3.tar" | cut -c1-64)
refused "'$REG/cfs/test@$l3': uncompressed, its content has the digest $l3, not the config's diff_id sha256:0{64}" \
	$PH "$REG/cfs/test:baddiff"
down=$(free_port)
refused "'127\.0\.0\.1:$down/cfs/test:v1': .*(onnect|refused)" $PH --retries=0 "127.0.0.1:$down/cfs/test:v1"
# https to a plain http registry fails; it is not quietly downgraded.
refused "'$REG/cfs/test:v1': " --retries=0 "$REG/cfs/test:v1"
expect_exit 2 "$CFSCTL" pull --plain-http "$REG/cfs/Test:v1" "$T/bad.img"
expect_exit 2 "$CFSCTL" pull --plain-http "Cfs-test:v1" "$T/bad.img"
expect_exit 2 "$CFSCTL" pull --plain-http "$REG/cfs/test@sha256:abc" "$T/bad.img"
expect_exit 2 "$CFSCTL" pull --plain-http --retries=x "$REG/cfs/test" "$T/bad.img"
expect_exit 2 "$CFSCTL" pull --plain-http --user-xattrs "$REG/cfs/test" "$T/bad.img"
expect_exit 2 "$CFSCTL" pull --plain-http "$REG/cfs/test"

# The fake registry: the distribution API's paths as files.
for tag in v1 v2 baddiff; do
	python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" $tag "dir:$T/fake" img $tag >/dev/null ||
		fail "fake tree"
done
F=$T/fake/v2/img
# the last layer, uncompressed: the only blob of more than 1000 bytes; its
# first file's content at byte 512
layer3=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["layers"][2]["digest"])' \
	"$F/manifests/v1") || fail "finding layer 3"
start_server fake "$T/fake" ok
fake=${SERVER_URL#http://}
expect_exit 0 "$CFSCTL" pull --plain-http "$fake/img:v1" "$T/fake.img"
cmp -s "$T/want.v1" "$T/fake.img" || fail "the fake registry's image differs"
cp "$F/blobs/$layer3" "$T/layer3"
python3 -c 'import sys; f = open(sys.argv[1], "r+b"); f.seek(512); b = f.read(1)
f.seek(512); f.write(bytes([b[0] ^ 1]))' "$F/blobs/$layer3" || fail "tampering"
refused "'$fake/img@$layer3': its content has the digest sha256:[0-9a-f]{64}, not $layer3" \
	$PH "$fake/img:v1"
cp "$T/layer3" "$F/blobs/$layer3"
# A manifest by digest must hash to it: serve v1's under another digest.
cp "$F/manifests/v1" "$F/manifests/sha256:$(printf 'a%.0s' $(seq 64))"
refused "'$fake/img@sha256:a{64}': its content has the digest $v1_digest, not sha256:a{64}" \
	$PH "$fake/img@sha256:$(printf 'a%.0s' $(seq 64))"
# A manifest of a type not taken: docker's schema 1.
printf '{"schemaVersion": 1, "mediaType": "%s"}' \
	application/vnd.docker.distribution.manifest.v1+prettyjws >"$F/manifests/old"
refused "'$fake/img:old': media type 'application/vnd\.docker\.distribution\.manifest\.v1\+prettyjws' is neither an image manifest nor an index" \
	$PH "$fake/img:old"
stop_servers

# Bearer tokens: the challenge's realm is asked with its scope and service.
for key in token access_token; do
	start_server bearer-$key "$T/fake" ok --bearer tok-$key --token-key $key
	b=${SERVER_URL#http://}
	expect_exit 0 "$CFSCTL" pull --plain-http "$b/img:v1" "$T/bearer.img"
	cmp -s "$T/want.v1" "$T/bearer.img" || fail "the image through a token ($key) differs"
	assert_contains "$T/bearer-$key.log" "^token scope=repository%3Aimg%3Apull&service=fake$"
	[ "$(grep -c '^token' "$T/bearer-$key.log")" = 1 ] || fail "more than one token asked for"
	stop_servers
done
start_server forbidden "$T/fake" 403
refused "'${SERVER_URL#http://}/img:v1': HTTP 403: access denied" $PH "${SERVER_URL#http://}/img:v1"
stop_servers
start_server unauthorized "$T/fake" 401
refused "'${SERVER_URL#http://}/img:v1': HTTP 401: the registry wants credentials" \
	$PH "${SERVER_URL#http://}/img:v1"
stop_servers
# A token realm that gives no token.
start_server notoken "$T/fake" ok --bearer tok --token-key nothing
refused "'${SERVER_URL#http://}/img:v1': the token server 'http://127\.0\.0\.1:[0-9]+/token' sent no token" \
	$PH "${SERVER_URL#http://}/img:v1"
stop_servers

# A truncated layer: refused without retries; with them, resumed where it
# broke off (this server ignores the Range: the bytes read are dropped).
start_server trunc "$T/fake" truncate --min-size 1000
refused "'${SERVER_URL#http://}/img@$layer3': transfer closed with [0-9]+ bytes remaining" \
	$PH --retries=0 "${SERVER_URL#http://}/img:v1"
stop_servers
start_server trunc1 "$T/fake" truncate --min-size 1000 --times 1
expect_exit 0 "$CFSCTL" pull --plain-http --retries=1 "${SERVER_URL#http://}/img:v1" \
	"$T/resumed.img"
cmp -s "$T/want.v1" "$T/resumed.img" || fail "a resumed layer gives another image"
assert_eq "truncate ok" "$(grep "/$layer3\$" "$T/trunc1.log" | cut -d' ' -f1 | xargs)" \
	"requests for the truncated layer"
stop_servers
# A stalled one times out.
start_server stall "$T/fake" stall --min-size 1000
refused "'${SERVER_URL#http://}/img@sha256:[0-9a-f]{64}': no data received within the timeout" \
	$PH --retries=0 --timeout=1 "${SERVER_URL#http://}/img:v1"

# Killed mid-way: no image, no object; the next pull keeps no temporary.
rm -rf "$T/st3"
: >"$T/stall.log"
"$CFSCTL" pull --plain-http --digest-store="$T/st3" "${SERVER_URL#http://}/img:v1" \
	"$T/killed.img" 2>"$T/killed.err" &
pid=$!
for i in $(seq 100); do
	grep -q '^stall ' "$T/stall.log" && break
	sleep 0.1
done
grep -q '^stall ' "$T/stall.log" || fail "the pull did not reach the stalling layer"
sleep 0.3
# (its children too: under valgrind $pid is tests/lib/valgrind-cfsctl's shell)
kill -KILL $(pgrep -P $pid) $pid
wait $pid 2>/dev/null
[ ! -e "$T/killed.img" ] || fail "a killed pull left an image"
[ -z "$(find "$T" -maxdepth 1 -name '.killed.img.*')" ] || fail "a killed pull left a temporary image"
[ -z "$(find "$T/st3" -type f ! -name '.tmp-*' 2>/dev/null)" ] || fail "a killed pull left objects"
# The first layers' contents wait as temporaries, which the next build removes.
[ -n "$(find "$T/st3" -name '.tmp-*')" ] || fail "no temporaries: the kill came too late to test"
stop_servers
start_server again "$T/fake" ok
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/st3" "${SERVER_URL#http://}/img:v1" \
	"$T/again.img"
cmp -s "$T/want.v1" "$T/again.img" || fail "the pull after a killed one differs"
check_store "$T/st3"

# --layers-cache: a second pull fetches and hashes only the layers it has
# not seen, in either format, and the images stay those of build --from-oci.
layers_fetched() { # LOG: how many layer blobs (the blobs but the config) it served; empty it
	grep -c "^ok /v2/img/blobs/" "$1" | awk '{ print $1 - 1 }'
	: >"$1"
}
start_server cache1 "$T/fake" ok
c=${SERVER_URL#http://}
expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" --digest-store="$T/s4" \
	"$c/img:v1" "$T/c1.img"
cmp -s "$T/want.v1" "$T/c1.img" || fail "the image of a pull that fills the cache differs"
assert_eq 3 "$(find "$T/lc" -name 'sha256-*' | wc -l)" "fragments in the layers cache"
assert_eq 3 "$(layers_fetched "$T/cache1.log")" "layers fetched into an empty cache"
stop_servers
start_server cache2 "$T/fake" ok
c=${SERVER_URL#http://}
expect_exit 0 "$CFSCTL" build --from-oci --digest-store="$T/want-v2" "oci:$T/lay:v2" "$T/want.v2"
expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" --digest-store="$T/s4" \
	"$c/img:v2" "$T/c2.img"
cmp -s "$T/want.v2" "$T/c2.img" || fail "the image of v2 pulled with two cached layers differs"
assert_eq 1 "$(layers_fetched "$T/cache2.log")" "layers fetched for v2, two of them cached"
check_store "$T/s4"
expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" --format=erofs "$c/img:v1" \
	"$T/c1.erofs"
cmp -s "$T/want.erofs" "$T/c1.erofs" || fail "an EROFS image from the cache differs"
assert_eq 0 "$(layers_fetched "$T/cache2.log")" "layers fetched for v1 from a full cache"
# An object gone from the store (as gc removes one): its layer is fetched again.
obj=$("$CFSCTL" inspect stat "$T/c1.img" /bin/sh | sed -n 's/^backing: *//p')
[ -n "$obj" ] && [ -f "$T/s4/$obj" ] || fail "/bin/sh's object '$obj' is not in the store"
rm "$T/s4/$obj"
expect_exit 0 "$CFSCTL" pull --plain-http --layers-cache="$T/lc" --digest-store="$T/s4" \
	"$c/img:v1" "$T/c3.img"
cmp -s "$T/want.v1" "$T/c3.img" || fail "the image after an object went differs"
[ -f "$T/s4/$obj" ] || fail "the object gone from the store was not brought back"
assert_eq 1 "$(layers_fetched "$T/cache2.log")" "layers fetched when one's object went"
# The layers of v1 with a config that gives the last another diff_id: the
# cached fragment of that layer is not taken, the layer is fetched and
# refused. (Only that one: the failure comes before the objects the other
# fragments name are looked for in refused()'s store of its own.)
refused "'$c/img@$l3': uncompressed, its content has the digest $l3, not the config's diff_id sha256:0{64}" \
	$PH --layers-cache="$T/lc" "$c/img:baddiff"
assert_eq 1 "$(layers_fetched "$T/cache2.log")" "layers fetched for a cached layer under another diff_id"
stop_servers
# A layer that does not verify leaves no fragment.
cp "$F/blobs/$layer3" "$T/layer3"
printf x | dd of="$F/blobs/$layer3" bs=1 seek=512 conv=notrunc 2>/dev/null
start_server cache3 "$T/fake" ok
refused "its content has the digest" $PH --layers-cache="$T/lc2" "${SERVER_URL#http://}/img:v1"
assert_eq 2 "$(find "$T/lc2" -name 'sha256-*' | wc -l)" "fragments after the last layer failed"
cp "$T/layer3" "$F/blobs/$layer3"
stop_servers

echo ok
