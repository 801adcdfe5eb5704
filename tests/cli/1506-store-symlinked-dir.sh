#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A digest store that another user can write, whose "xx" directories are
# symlinks to a directory of that user's choosing: no writer of objects
# (build --digest-store, a stream of a tar archive, fetch, build
# --from-ostree of an archive repository, a repository's index) puts a
# file there. Each one refuses, naming the directory, and exits 1 (the
# index, a cache, is left unwritten); the target stays empty.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

make_source "$T/src" 8 1 256
make_image "$T/src" "$T/a.img" "$T/served"
printf '%02x\n' $(seq 0 255) >"$T/dirs"

# trap_store DIR: DIR is a store whose every "xx" is a symlink to $T/target
trap_store() {
	local d
	rm -rf "$1" "$T/target"
	mkdir -p "$1" "$T/target"
	while read -r d; do
		ln -s "$T/target" "$1/$d"
	done <"$T/dirs"
}

# target_empty WHAT: nothing was written through the symlinks
target_empty() {
	[ -z "$(ls -A "$T/target")" ] || { ls -l "$T/target"; fail "$1 wrote into the symlinked directory"; }
}

trap_store "$T/s1"
expect_exit 1 "$CFSCTL" build --digest-store="$T/s1" "$T/src" "$T/b.img"
target_empty "build --digest-store"
assert_contains "$T/err" "'[0-9a-f]{2}' is a symlink or not a directory"

# with too few open files for unnamed objects: named temporaries
trap_store "$T/s1"
expect_exit 1 few_fds "$CFSCTL" build --digest-store="$T/s1" "$T/src" "$T/b.img"
target_empty "build --digest-store (named temporaries)"

# an "xx" that is a regular file is no directory either
rm -rf "$T/s1"
mkdir "$T/s1"
while read -r d; do : >"$T/s1/$d"; done <"$T/dirs"
expect_exit 1 "$CFSCTL" build --digest-store="$T/s1" "$T/src" "$T/b.img"
assert_contains "$T/err" "is a symlink or not a directory"

# a tar archive's files are streamed into the store
tar -C "$T/src" -cf "$T/src.tar" .
trap_store "$T/s2"
expect_exit 1 "$CFSCTL" build --from-tar --digest-store="$T/s2" "$T/src.tar" "$T/c.img"
target_empty "build --from-tar --digest-store"

trap_store "$T/s3"
expect_exit 1 "$CFSCTL" fetch --basedir "$T/s3" --url "file://$T/served" "$T/a.img"
target_empty "fetch"
assert_contains "$T/err" "is a symlink or not a directory"

# the same stores, made plain again, take the objects: the refusal was the symlink
rm -rf "$T/s3"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/s3" --url "file://$T/served" "$T/a.img"
store_files "$T/served" >"$T/all"
assert_store "$T/s3" "$T/all"

# a repository's index (REPO/index/KIND/xx), which fetch fills beside the
# objects: an entry is never written through a symlinked KIND/xx
rm -rf "$T/repo" "$T/target"
mkdir -p "$T/repo/objects" "$T/repo/images" "$T/repo/index/verity" "$T/repo/index/sha256" "$T/target"
while read -r d; do
	ln -s "$T/target" "$T/repo/index/verity/$d"
	ln -s "$T/target" "$T/repo/index/sha256/$d"
done <"$T/dirs"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/repo/objects" --url "file://$T/served" "$T/a.img"
target_empty "fetch into a repository (its index)"
assert_store "$T/repo/objects" "$T/all"

if command -v ostree >/dev/null; then
	ostree --repo="$T/ostree" init --mode=archive || fail "ostree init"
	ostree --repo="$T/ostree" commit -b main --tree=dir="$T/src" -s test >/dev/null ||
		fail "ostree commit"
	trap_store "$T/s4"
	expect_exit 1 "$CFSCTL" build --from-ostree --digest-store "$T/s4" "$T/ostree:main" "$T/d.img"
	target_empty "build --from-ostree --digest-store"
	assert_contains "$T/err" "is a symlink or not a directory"
else
	echo "no ostree (Debian package ostree): build --from-ostree not tried"
fi
