#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# build --from-ostree of an archive repository (compressed .filez objects)
# unpacks the contents into --digest-store under ostree's names, and needs
# it (or --repo, whose objects it unpacks into); verify --from-ostree checks an archive repository's chain without
# unpacking; --require-verity refuses objects without fs-verity where the
# filesystem has none, and enables it where it has; mount --from-ostree
# refuses an archive repository and foreign options before mounting.
. "$(dirname "$0")/../lib/common.sh"
command -v ostree >/dev/null || skip "no ostree (Debian package ostree)"

mkdir -p "$T/src/d"
echo one >"$T/src/d/f"
head -c 150000 /dev/urandom >"$T/src/big"
ln -s d/f "$T/src/link"
A=$T/archive
ostree --repo="$A" init --mode=archive || fail "ostree init"
ostree --repo="$A" commit -b main --tree=dir="$T/src" -s one >/dev/null || fail "commit"
ls "$A"/objects/*/*.filez >/dev/null 2>&1 || fail "no .filez objects in the archive repository"

expect_exit 1 "$CFSCTL" build --from-ostree "$A:main" "$T/img"
assert_contains "$T/err" "is an archive: its contents need a digest store"
[ ! -e "$T/img" ] || fail "an image without a store"

expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --digest-store "$T/store" "$A:main" "$T/img"
"$CFSCTL" inspect dump "$T/img" >"$T/dump" || fail "inspect dump"
n=0
while read -r path size mode _ _ _ _ _ payload _ digest _; do
	[[ $mode == 100??? ]] && [ "$size" != 0 ] || continue
	f=$T/store/$payload
	[ -f "$f" ] || fail "$path: $payload not unpacked"
	assert_eq "$digest" "$(fsverity digest --compact "$f")" "digest of $f"
	cmp "$f" "$T/src$path" || fail "$path: unpacked content"
	n=$((n + 1))
done <"$T/dump"
assert_eq 2 "$n" "files unpacked"
assert_eq "" "$(find "$T/store" -name '.tmp-*')" "temporaries left in the store"
# a second build: the same image, the same store
find "$T/store" -type f | sort | xargs md5sum >"$T/before"
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --digest-store "$T/store" "$A:main" "$T/img2"
cmp "$T/img" "$T/img2" || fail "a second build differs"
find "$T/store" -type f | sort | xargs md5sum >"$T/after"
cmp "$T/before" "$T/after" || fail "the store changed"

# the chain of an archive repository, hashed without unpacking
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest \
	--digest-store "$T/store" "$A:main" "$T/img3"
cmp "$T/img" "$T/img3" || fail "--commit-digest image differs"
expect_exit 0 "$CFSCTL" verify --from-ostree "$A:main"
assert_contains "$T/out" "^digest: $(fsverity digest --compact "$T/img"), as the commit says$"

# --repo: an archive repository's commit unpacks into REPO/objects, its
# image is stored by digest and named; --commit-digest records that digest;
# a bare repository's commit is refused (its image points at its own objects)
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --repo "$T/repo" "$A:main" os/main
d=$("$CFSCTL" images --repo "$T/repo" --json | python3 -c 'import json,sys; print([i["digest"] for i in json.load(sys.stdin)["images"] if "os/main" in i["names"]][0])') ||
	fail "os/main is not in the repository's images"
cmp "$T/img" "$T/repo/images/$d" || fail "the image in the repository differs from the one with --digest-store"
for f in "$T"/store/*/*.file; do
	cmp "$f" "$T/repo/objects/${f#"$T/store/"}" || fail "$f: not unpacked into the repository"
done
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest --repo "$T/repo" "$A:main" os/main
expect_exit 0 "$CFSCTL" verify --from-ostree "$A:main"
assert_contains "$T/out" "^digest: $d, as the commit says$"
ostree --repo="$T/bare" init --mode=bare-user && ostree --repo="$T/bare" pull-local "$A" main >/dev/null ||
	fail "pull-local"
expect_exit 1 "$CFSCTL" build --from-ostree --repo "$T/repo" "$T/bare:main" os/bare
assert_contains "$T/err" "--repo takes the commits of archive repositories"
[ ! -e "$T/repo/images/refs/os/bare" ] || fail "a name for a refused build"

# --require-verity: in place, on the objects of a bare-user repository
B=$T/bu
ostree --repo="$B" init --mode=bare-user && ostree --repo="$B" pull-local "$A" main >/dev/null ||
	fail "pull-local"
obj=$(awk '$1 == "/big" { print $9 }' "$T/dump")
if fsverity enable "$T/src/big" 2>/dev/null; then
	expect_exit 0 "$CFSCTL" build --from-ostree --require-verity "$B:main" "$T/v"
	fsverity measure "$B/objects/$obj" >/dev/null || fail "no fs-verity on $obj"
else
	expect_exit 1 "$CFSCTL" build --from-ostree --require-verity "$B:main" "$T/v"
	assert_contains "$T/err" "enabling fs-verity on '$B/objects/$obj': not supported by the filesystem"
	[ ! -e "$T/v" ] || fail "an image left by a refused build"
	# without it the digests are computed
	expect_exit 0 "$CFSCTL" build --from-ostree "$B:main" "$T/v"
fi

# mount --from-ostree: refusals before anything is mounted
mkdir -p "$T/mnt"
expect_exit 1 "$CFSCTL" mount --from-ostree "$A:main" "$T/mnt"
assert_contains "$T/err" "an archive repository has no objects to mount"
expect_exit 2 "$CFSCTL" mount --from-ostree --basedir "$T" "$B:main" "$T/mnt"
assert_contains "$T/err" "--from-ostree takes only --gpg-homedir"
expect_exit 2 "$CFSCTL" mount --gpg-homedir "$T" "$T/img" "$T/mnt"
assert_contains "$T/err" "--gpg-homedir and --format need --from-ostree"
expect_exit 1 "$CFSCTL" mount --from-ostree "$B:nosuch" "$T/mnt"
assert_contains "$T/err" "ref 'nosuch'"
expect_exit 2 "$CFSCTL" build --from-ostree --from-tar "$B:main" "$T/x"
assert_contains "$T/err" "exclude each other"
echo "ok"
