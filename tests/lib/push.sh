# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the cfsctl push tests (tests/cli/25xx-push-*.sh) after lib/common.sh: a
# docker-registry logging each request (lib/fetch.sh's start_registry
# --accesslog reg, at $REG), and a small tree $T/tree with what a layer
# must carry: files (one of zeros, one empty, one setuid), a directory,
# a symlink, a hardlink, a fifo, a character device, owners, xattrs and
# mtimes with nanoseconds.
. "$TESTS_DIR/lib/fetch.sh"
command -v skopeo >/dev/null || fail "skopeo is not installed (make deps)"
command -v zstd >/dev/null || fail "zstd is not installed (make deps)"
umask 022
# the push blob cache of the test's own (cfsctl push --help)
export XDG_CACHE_HOME=$T/xdg-cache

make_tree() {
	local d=$1
	mkdir -p "$d/etc" "$d/usr/bin" "$d/empty-dir"
	echo "hello" >"$d/etc/hello"
	head -c 300000 /dev/urandom >"$d/usr/bin/tool"
	head -c 200000 /dev/zero >"$d/zeros"
	: >"$d/empty"
	printf '#!/bin/sh\n' >"$d/usr/bin/setuid"
	chmod 4755 "$d/usr/bin/setuid"
	ln -s ../etc/hello "$d/usr/link"
	ln "$d/etc/hello" "$d/usr/hard"
	mkfifo "$d/fifo"
	mknod "$d/null" c 1 3 2>/dev/null || true
	chown 1234:5678 "$d/etc/hello"
	setfattr -n user.cfs -v "a value" "$d/usr/bin/tool" 2>/dev/null || true
	find "$d" -exec touch -h -d '2024-05-06 07:08:09.123456789' {} +
	touch -h -d '2001-02-03 04:05:06.5' "$d/usr/bin/tool"
}

# manifest REPO REF: the manifest, as the registry serves it
manifest() {
	curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
		"http://$REG/v2/$1/manifests/$2"
}
# blob REPO DIGEST: a blob, to stdout
blob() { curl -sf "http://$REG/v2/$1/blobs/$2"; }
# uploads_since OFFSET: blob upload requests (POST or PUT) in the log past OFFSET
uploads_since() {
	tail -c +$(($1 + 1)) "$T/reg/log" | grep -c '"\(POST\|PUT\|PATCH\) /v2/[^ ]*/blobs/' || true
}

start_registry --accesslog reg
mkdir -p "$T/tree"
make_tree "$T/tree"
"$CFSCTL" build "$T/tree" "$T/want.img" >"$T/build.out" 2>&1 || { cat "$T/build.out"; fail "build of the tree"; }
