#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --from-ostree: the image of a commit of real bare-user, bare
# and archive repositories (made here with ostree) equals the commit's
# checkout (ostree checkout --force-copy, built with --use-epoch), for both
# formats; its regular files point at ostree's own objects below
# REPO/objects, with their fs-verity digests; and the same commit gives the
# same image byte for byte, in any repository mode and from any copy.
. "$(dirname "$0")/../lib/common.sh"
command -v ostree >/dev/null || skip "no ostree (Debian package ostree)"
[ "$(id -u)" = 0 ] || skip "bare repositories and the checkout's owners need root"

src=$T/src
mkdir -p "$src/etc/sub" "$src/usr/bin" "$src/empty-dir"
echo hello >"$src/etc/hello"
head -c 100000 /dev/urandom >"$src/usr/bin/tool"
chmod 4755 "$src/usr/bin/tool"
printf 'x' >"$src/etc/sub/one"
: >"$src/etc/empty"
ln -s ../etc/hello "$src/usr/link"
chown 12:34 "$src/etc/sub" "$src/etc/sub/one"
chmod 0700 "$src/etc/sub"
setfattr -n user.color -v blue "$src/etc/hello" || skip "no user xattrs on ${TMPDIR:-/tmp}"
# the same content twice: two entries, no hardlink
cp "$src/etc/hello" "$src/etc/hello2"

for mode in bare-user bare archive; do
	ostree --repo="$T/$mode" init --mode=$mode || fail "ostree init --mode=$mode"
	ostree --repo="$T/$mode" commit -b main --tree=dir="$src" -s "test" \
		--timestamp="2024-01-01 00:00:00 +0000" >"$T/$mode.commit" ||
		fail "ostree commit in $mode"
done
commit=$(cat "$T/bare-user.commit")
assert_eq "$commit" "$(cat "$T/bare.commit")" "commit of bare"
assert_eq "$commit" "$(cat "$T/archive.commit")" "commit of archive"

# the checkout, as the reference tree
ostree --repo="$T/bare" checkout --force-copy main "$T/co" || fail "ostree checkout"
for fmt in v1 erofs; do
	expect_exit 0 "$CFSCTL" build --format=$fmt --use-epoch "$T/co" "$T/co.$fmt"
	for mode in bare-user bare; do
		expect_exit 0 "$CFSCTL" build --format=$fmt --from-ostree "$T/$mode:main" "$T/$mode.$fmt"
		expect_exit 0 "$CFSCTL" diff "$T/co.$fmt" "$T/$mode.$fmt"
		assert_eq "" "$(cat "$T/out")" "diff of the $mode image and the checkout ($fmt)"
	done
	expect_exit 0 "$CFSCTL" build --format=$fmt --from-ostree --digest-store "$T/store" \
		"$T/archive:main" "$T/archive.$fmt"
	expect_exit 0 "$CFSCTL" diff "$T/co.$fmt" "$T/archive.$fmt"
	assert_eq "" "$(cat "$T/out")" "diff of the archive image and the checkout ($fmt)"
	# the same image, whatever the mode: the payloads are ostree's names
	cmp "$T/bare-user.$fmt" "$T/bare.$fmt" || fail "bare-user and bare images differ ($fmt)"
	cmp "$T/bare-user.$fmt" "$T/archive.$fmt" || fail "bare-user and archive images differ ($fmt)"
done

# by checksum as by branch; twice the same; mtime 0 and no hardlinks
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree "$T/bare-user:$commit" "$T/bysum.erofs"
cmp "$T/bysum.erofs" "$T/bare-user.erofs" || fail "image by checksum differs from by branch"
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree "$T/bare-user:main" "$T/again.erofs"
cmp "$T/again.erofs" "$T/bare-user.erofs" || fail "a second build differs"
# a copy of the commit in another repository (pull-local) gives it too
ostree --repo="$T/copy" init --mode=bare-user && ostree --repo="$T/copy" pull-local "$T/archive" main >/dev/null ||
	fail "ostree pull-local"
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree "$T/copy:main" "$T/copy.erofs"
cmp "$T/copy.erofs" "$T/bare-user.erofs" || fail "image of the pulled copy differs"

expect_exit 0 "$CFSCTL" inspect dump "$T/bare-user.erofs"
cp "$T/out" "$T/dump"
awk '$8 != "0.0" { print "mtime: " $0 } $3 ~ /^100/ && $4 != 1 { print "nlink: " $0 }' "$T/dump" >"$T/bad"
assert_eq "" "$(cat "$T/bad")" "entries with an mtime or a hardlink"
grep -q '^/etc/hello 6 100644 1 0 0 0 0.0 .* user.color=blue$' "$T/dump" || { cat "$T/dump"; fail "xattr of /etc/hello"; }
grep -q '^/etc/sub 4096 40700 2 12 34 ' "$T/dump" || grep -q '^/etc/sub [0-9]* 40700 2 12 34 ' "$T/dump" ||
	{ cat "$T/dump"; fail "owner and mode of /etc/sub"; }
grep -q '^/usr/bin/tool 100000 104755 ' "$T/dump" || { cat "$T/dump"; fail "setuid /usr/bin/tool"; }
grep -q '^/usr/link 12 120777 1 0 0 0 0.0 \.\./etc/hello ' "$T/dump" || { cat "$T/dump"; fail "symlink"; }

# every payload is REPO/objects/xx/<62 hex>.file, with the image's digest
n=0
while read -r path size mode nlink uid gid rdev mtime payload content digest rest; do
	[[ $mode == 10???? ]] && [ "$size" != 0 ] || continue
	[[ $payload =~ ^[0-9a-f]{2}/[0-9a-f]{62}\.file$ ]] || fail "payload of $path: '$payload'"
	for mode_ in bare-user bare; do
		f=$T/$mode_/objects/$payload
		[ -f "$f" ] || fail "$path: no object $f"
		assert_eq "$digest" "$(fsverity digest --compact "$f")" "fs-verity digest of $f"
	done
	[ -f "$T/store/$payload" ] || fail "$path: not unpacked into the store"
	assert_eq "$digest" "$(fsverity digest --compact "$T/store/$payload")" "digest of the unpacked $payload"
	n=$((n + 1))
done <"$T/dump"
assert_eq 4 "$n" "regular files with content"
# nothing copied: no digest store appeared
assert_eq "" "$(find "$T/bare-user" "$T/bare" -name ".tmp-*")" "temporaries left in the repositories"
echo "ok"
