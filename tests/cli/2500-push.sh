#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl push of a directory, in each compression, to a docker-registry;
# skopeo 1.9 and GNU tar are the peers. The push says 'Digest:', writes
# --digestfile and --json; skopeo inspect names that digest and skopeo
# copy reads the image; GNU tar unpacks the layer to a tree whose image is
# the original's (modes, owners, xattrs, mtimes, links, devices); the
# layer's uncompressed sha256 is the config's diff_id; a second push, and
# a push of a copy of the tree, give the same digests and upload nothing;
# cfsctl pull of the image gives byte for byte the image cfsctl build
# makes of the directory (a zstd:chunked one in part, and whole).
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/policy.json"
for comp in zstd:chunked zstd gzip; do
	repo=t/${comp#zstd:}
	log0=$(stat -c %s "$T/reg/log")
	expect_exit 0 "$CFSCTL" push --plain-http --compression=$comp --digestfile "$T/digest" \
		--json "$T/tree" "$REG/$repo:v1"
	digest=$(sed -n 's/^Digest: //p' "$T/err")
	[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "$comp: no Digest: line: $(cat "$T/err")"
	assert_eq "$digest" "$(cat "$T/digest")" "$comp: --digestfile"
	grep -q "\"digest\":\"$digest\"" "$T/out" || fail "$comp: --json has not the digest: $(cat "$T/out")"
	grep -q '"bytes_skipped":0' "$T/out" || fail "$comp: a first push skipped bytes: $(cat "$T/out")"
	[ "$(uploads_since "$log0")" -ge 4 ] || fail "$comp: the first push uploaded no blobs"
	[ "$(manifest $repo v1 | sha256sum | cut -c1-64)" = "${digest#sha256:}" ] ||
		fail "$comp: the registry's manifest is not the one the push named"

	# the peers
	skopeo inspect --tls-verify=false "docker://$REG/$repo:v1" >"$T/inspect" 2>&1 ||
		{ cat "$T/inspect"; fail "$comp: skopeo inspect"; }
	grep -q "\"Digest\": \"$digest\"" "$T/inspect" || fail "$comp: skopeo inspect names another digest"
	rm -rf "$T/lay"
	skopeo --policy "$T/policy.json" copy -q --src-tls-verify=false "docker://$REG/$repo:v1" \
		"oci:$T/lay:v1" >"$T/copy.out" 2>&1 || { cat "$T/copy.out"; fail "$comp: skopeo copy"; }
	layer=$(manifest $repo v1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
	config=$(manifest $repo v1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["digest"])')
	[ -f "$T/lay/blobs/sha256/${layer#sha256:}" ] || fail "$comp: skopeo copy has not the layer"
	case $comp in gzip) dec="gzip -dc" ;; *) dec="zstd -dcq" ;; esac
	blob $repo "$layer" | $dec >"$T/layer.tar" || fail "$comp: the layer does not decompress"
	diff_id=$(blob $repo "$config" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rootfs"]["diff_ids"][0])')
	assert_eq "$diff_id" "sha256:$(sha256sum <"$T/layer.tar" | cut -c1-64)" "$comp: the diff_id"
	rm -rf "$T/untar"
	mkdir "$T/untar"
	tar -x --xattrs --xattrs-include='*' --numeric-owner -p -f "$T/layer.tar" -C "$T/untar" 2>"$T/tar.err" ||
		{ cat "$T/tar.err"; fail "$comp: GNU tar cannot unpack the layer"; }
	[ ! -s "$T/tar.err" ] || fail "$comp: GNU tar warns: $(cat "$T/tar.err")"
	"$CFSCTL" build "$T/untar" "$T/untar.img" >/dev/null 2>&1 || fail "$comp: build of the unpacked tree"
	cmp -s "$T/want.img" "$T/untar.img" ||
		fail "$comp: the tree GNU tar unpacks is not the tree pushed: $("$CFSCTL" diff "$T/want.img" "$T/untar.img" 2>&1 | head -n 5)"

	# the same tree again, and a copy of it: the same digests, nothing uploaded
	rm -rf "$T/copy"
	cp -a "$T/tree" "$T/copy"
	for src in tree copy; do
		log0=$(stat -c %s "$T/reg/log")
		expect_exit 0 "$CFSCTL" push --plain-http --compression=$comp --json "$T/$src" "$REG/$repo:v2"
		grep -q "\"digest\":\"$digest\"" "$T/out" || fail "$comp: $src pushed again: another digest: $(cat "$T/out")"
		grep -q '"bytes_uploaded":0,' "$T/out" || fail "$comp: $src pushed again uploaded bytes: $(cat "$T/out")"
		assert_eq 0 "$(uploads_since "$log0")" "$comp: blob uploads when $src was pushed again"
		grep -q 'the registry has it already' "$T/err" || fail "$comp: no line says the blob was there"
	done

	# pull: the image build makes
	rm -rf "$T/store"
	expect_exit 0 "$CFSCTL" pull --plain-http --json --digest-store "$T/store" "$REG/$repo:v1" "$T/pulled.img"
	cmp -s "$T/want.img" "$T/pulled.img" || fail "$comp: pull gives another image than build"
	if [ $comp = zstd:chunked ]; then
		grep -q '"layers_partial":1' "$T/out" || fail "not pulled in part: $(cat "$T/out")"
	fi
	expect_exit 0 "$CFSCTL" pull --plain-http --full-pull "$REG/$repo:v1" "$T/full.img"
	cmp -s "$T/want.img" "$T/full.img" || fail "$comp: a full pull gives another image than build"
done
echo ok
