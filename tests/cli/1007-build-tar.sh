#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --from-tar: a GNU tar pax archive (xattrs, ACLs, hardlinks,
# symlinks, devices, fifos, nanosecond mtimes, a sparse file) gives the same
# image as the unpacked tree, in both formats, plain or compressed, from a file or stdin, as
# root or not;
# the store's objects have the fs-verity digests they are named by; implied
# directories, duplicate entries and "./" prefixes are applied as tar does;
# '..', truncated and garbage archives and a full store fail naming the
# archive and the entry.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"
command -v tar >/dev/null || skip "needs GNU tar"
command -v setfacl >/dev/null || skip "needs setfacl (Debian: acl)"
command -v fsverity >/dev/null || skip "needs fsverity (Debian: fsverity)"
command -v python3 >/dev/null || skip "needs python3 to write odd archives"

make_tree "$T/src" nosparse
setfacl -m u:4242:rw,g:77:r "$T/src/file"
setfacl -d -m u:99:rx "$T/src/sticky"
truncate -s 64M "$T/src/sparse"
printf data | dd of="$T/src/sparse" bs=1 seek=10000000 conv=notrunc status=none
touch -d '2002-03-04 05:06:07.987654321 UTC' "$T/src/deep"
tar -C "$T/src" --xattrs --xattrs-include='*' --acls --sparse --format=pax -cf "$T/a.tar" .

dump() { # IMAGE -> stdout
	"$CFSCTL" inspect dump "$1" || fail "inspect dump $1"
}

expect_exit 0 "$CFSCTL" build "$T/src" "$T/dir.img"
dump "$T/dir.img" >"$T/dir.dump"
expect_exit 0 "$CFSCTL" build --from-tar --digest-store="$T/store" "$T/a.tar" "$T/tar.img"
dump "$T/tar.img" >"$T/tar.dump"
diff -u "$T/dir.dump" "$T/tar.dump" >&2 || fail "image from the tar differs from the tree's"
cmp -s "$T/dir.img" "$T/tar.img" || fail "images from tar and tree are not byte-identical"

# What must be there for the comparison to mean something.
grep -q '^/file 6 100664 3 1234 5678 0 981173106\.123456789 .* system\.posix_acl_access=' \
	"$T/tar.dump" || fail "/file lost its owner, nanoseconds or ACL"
grep -q '^/hardlink [0-9]* @100664 ' "$T/tar.dump" || fail "no hardlink"
grep -q '^/sticky .*system\.posix_acl_default=.*trusted\.overlay\.opaque=y' "$T/tar.dump" ||
	fail "/sticky lost its default ACL or trusted xattr"
grep -q '^/deep [0-9]* 40755 3 0 0 0 1015218367\.987654321 ' "$T/tar.dump" ||
	fail "directory mtime not kept"
grep -q "^/null 0 20644 1 0 0 $(((1 << 8) | 3)) " "$T/tar.dump" || fail "no /null device"
grep -q "^/loop 0 60644 1 0 0 $((7 << 8)) " "$T/tar.dump" || fail "no /loop device"
grep -q '^/fifo 0 10644 ' "$T/tar.dump" || fail "no fifo"
grep -q '^/symlink [0-9]* 120777 1 1234 5678 0 981173106\.123456789 file ' "$T/tar.dump" ||
	fail "symlink"
grep -q '^/same-content .* security\.test=\\x00\\x01\\x02$' "$T/tar.dump" || fail "binary xattr"

# Every object is named by its fs-verity digest; no temporaries are left.
check_store "$T/store"
[ "$n_objects" -ge 5 ] || fail "only $n_objects objects in the store"
grep -q "$(fsverity digest --compact "$T/src/$NAME255")" "$T/tar.dump" || fail "digest of a file"
d=$(fsverity digest --compact "$T/src/sparse")
[ "$(du -k "$T/store/${d:0:2}/${d:2}" | cut -f1)" -lt 1024 ] || fail "the sparse file's object is not sparse"

# A composefs 1.0 image (EROFS) from the tar is the tree's, byte for byte:
# files of at most 64 bytes held inline, the rest as objects.
expect_exit 0 "$CFSCTL" build --format=erofs "$T/src" "$T/dir.erofs"
expect_exit 0 "$CFSCTL" build --format=erofs --from-tar --digest-store="$T/estore" "$T/a.tar" \
	"$T/tar.erofs"
cmp -s "$T/dir.erofs" "$T/tar.erofs" || fail "EROFS images from tar and tree differ"

# Compressed, and from stdin: the same image.
variant() { # NAME COMPRESS-CMD
	"${@:2}" <"$T/a.tar" >"$T/a.$1" || fail "compressing with $2"
	expect_exit 0 "$CFSCTL" build --from-tar "$T/a.$1" "$T/$1.img"
	cmp -s "$T/tar.img" "$T/$1.img" || fail "$1-compressed archive gives another image"
}
variant gz gzip -c
variant xz xz -c
skipped=
if command -v zstd >/dev/null; then variant zst zstd -q -c; else skipped="zstd (no zstd binary)"; fi
expect_exit 0 "$CFSCTL" build --from-tar - "$T/stdin.img" <"$T/a.gz"
cmp -s "$T/tar.img" "$T/stdin.img" || fail "archive from stdin gives another image"

# Without root, the image is the same: nothing is resolved on this system.
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
if ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	skipped="$skipped${skipped:+, }non-root build (no setpriv or nobody)"
elif ! as_nobody "$CFSCTL" --version >/dev/null 2>&1; then
	# as in 1004-build-errors: a root directory (or checkout) nobody cannot enter
	skipped="$skipped${skipped:+, }non-root build (cfsctl cannot be run as user nobody here)"
else
	mkdir "$T/nobody" && chown nobody "$T/nobody" && chmod 755 "$T"
	chmod 644 "$T/a.tar"
	as_nobody "$CFSCTL" build --from-tar --digest-store="$T/nobody/store" "$T/a.tar" \
		"$T/nobody/img" 2>"$T/err" || { cat "$T/err"; fail "build as nobody"; }
	cmp -s "$T/tar.img" "$T/nobody/img" || fail "image built as nobody differs"
fi

# Implied directories, duplicates (last wins), "./" and leading "/".
python3 - "$T/odd.tar" <<'EOF' || fail "writing odd.tar"
import io, sys, tarfile
def f(t, name, data=b"", **kw):
    i = tarfile.TarInfo(name); i.size = len(data); i.mtime = 7
    for k, v in kw.items(): setattr(i, k, v)
    t.addfile(i, io.BytesIO(data))
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    f(t, "a/b/c", b"one", uid=5, gid=6)
    f(t, "./x", b"first")
    f(t, "x", b"second", mode=0o600)
    f(t, "/abs/y", b"y")
    d = tarfile.TarInfo("./a/"); d.type = tarfile.DIRTYPE; d.mode = 0o700; d.mtime = 9
    t.addfile(d)
    h = tarfile.TarInfo("a/link"); h.type = tarfile.LNKTYPE; h.linkname = "./a/b/c"
    t.addfile(h)
EOF
expect_exit 0 "$CFSCTL" build --from-tar "$T/odd.tar" "$T/odd.img"
dump "$T/odd.img" >"$T/odd.dump"
has() { grep -qE "$1" "$T/odd.dump" || { cat "$T/odd.dump"; fail "no line '$1'"; }; }
has '^/ 0 40755 4 0 0 0 0\.0 - - -$'
has '^/a 0 40700 3 0 0 0 9\.0 - - -$'
has '^/a/b 0 40755 2 0 0 0 0\.0 - - -$'
has '^/a/b/c 3 100644 2 5 6 0 7\.0 '
has '^/a/link 3 @100644 2 5 6 0 7\.0 /a/b/c '
has '^/x 6 100600 1 0 0 0 7\.0 '
has '^/abs/y 1 100644 '
assert_eq 1 "$(grep -c '^/x ' "$T/odd.dump")" "entries of /x"

# A file that hardlinks name is replaced: they keep its inode, as after tar's unlink.
python3 - "$T/relink.tar" <<'EOF'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    def f(name, data=None, link=None):
        i = tarfile.TarInfo(name); i.mtime = 7
        if link:
            i.type = tarfile.LNKTYPE; i.linkname = link
        else:
            i.size = len(data)
        t.addfile(i, io.BytesIO(data or b""))
    f("x", b"old"); f("y", link="x"); f("z", link="x"); f("x", b"newer")
EOF
expect_exit 0 "$CFSCTL" build --from-tar "$T/relink.tar" "$T/relink.img"
dump "$T/relink.img" >"$T/relink.dump"
grep -q '^/x 5 100644 1 ' "$T/relink.dump" && grep -q '^/y 3 100644 2 ' "$T/relink.dump" &&
	grep -q '^/z 3 @100644 2 .* /y ' "$T/relink.dump" ||
	{ cat "$T/relink.dump"; fail "the links to a replaced file lost its inode"; }

# '..' escapes, truncated and garbage archives: exit 1, the archive named.
python3 - "$T/evil.tar" <<'EOF' || fail "writing evil.tar"
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w") as t:
    i = tarfile.TarInfo("ok/../../etc/passwd"); i.size = 1
    t.addfile(i, io.BytesIO(b"x"))
EOF
expect_exit 1 "$CFSCTL" build --from-tar "$T/evil.tar" "$T/bad.img"
assert_contains "$T/err" "evil\.tar'.*'ok/\.\./\.\./etc/passwd'.*\.\."
head -c 20000 "$T/a.tar" >"$T/trunc.tar"
expect_exit 1 "$CFSCTL" build --from-tar --digest-store="$T/store2" "$T/trunc.tar" "$T/bad.img"
assert_contains "$T/err" "trunc\.tar"
[ -z "$(find "$T/store2" -name '.tmp-*' 2>/dev/null)" ] || fail "temporaries left after a failure"
mkdir "$T/big" && head -c 3000000 /dev/urandom >"$T/big/f"
tar -C "$T/big" -cf - f | head -c 1000000 >"$T/short.tar"
expect_exit 1 "$CFSCTL" build --from-tar --digest-store="$T/store2" - "$T/bad.img" <"$T/short.tar"
assert_contains "$T/err" "'stdin': entry 'f': (Truncated|the archive ends)"
[ -z "$(find "$T/store2" -name '.tmp-*')" ] || fail "temporaries left after a truncated file"
# A build killed while it streams a file leaves a temporary; the next removes it.
mkfifo "$T/fifo"
"$CFSCTL" build --from-tar --digest-store="$T/store3" - "$T/k.img" <"$T/fifo" 2>/dev/null &
pid=$!
exec 3>"$T/fifo"
head -c 2000000 "$T/short.tar" >&3 2>/dev/null
for _ in $(seq 100); do
	[ -n "$(find "$T/store3" -name ".tmp-$pid-*" 2>/dev/null)" ] && break
	sleep 0.1
done
kill -9 "$pid"
wait "$pid" 2>/dev/null
exec 3>&-
[ -n "$(find "$T/store3" -name ".tmp-$pid-*")" ] || fail "no temporary while a file streamed"
expect_exit 0 "$CFSCTL" build --from-tar --digest-store="$T/store3" "$T/a.tar" "$T/k.img"
[ -z "$(find "$T/store3" -name '.tmp-*')" ] || fail "the dead build's temporary is still there"

mkdir "$T/small"
if mount -t tmpfs -o size=1m tmpfs "$T/small" 2>/dev/null; then
	tar -C "$T/big" -cf "$T/big.tar" f
	expect_exit 1 "$CFSCTL" build --from-tar --digest-store="$T/small/st" "$T/big.tar" \
		"$T/bad.img"
	umount "$T/small"
	assert_contains "$T/err" "big\.tar': entry 'f': writing its object in the digest store .*: No space left"
else
	skipped="$skipped${skipped:+, }a full store (cannot mount a tmpfs)"
fi
head -c 20000 /dev/urandom >"$T/garbage.tar"
expect_exit 1 "$CFSCTL" build --from-tar "$T/garbage.tar" "$T/bad.img"
assert_contains "$T/err" "garbage\.tar"
expect_exit 1 "$CFSCTL" build --from-tar "$T/missing.tar" "$T/bad.img"
assert_contains "$T/err" "missing\.tar"
[ ! -e "$T/bad.img" ] || fail "a failed build left an image"
expect_exit 2 "$CFSCTL" build --from-tar --from-dump "$T/a.tar" "$T/bad.img"

echo "ok${skipped:+ (not tested: $skipped)}"
