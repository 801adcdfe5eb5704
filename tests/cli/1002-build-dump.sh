#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --from-dump: a dumpfile written by hand for a small tree gives
# the same image as the tree itself, whether file contents are given by
# DIGEST, by PAYLOAD alone (the digest is derived) or inline as CONTENT (which
# goes into the digest store); '-' reads stdin; a by-name PAYLOAD is kept.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"
command -v fsverity >/dev/null || skip "needs the fsverity tool (Debian package fsverity)"

s=$T/src
mkdir -m 0755 "$s" "$s/d"
chmod 0700 "$s/d"
printf 'hello\n' >"$s/f"
printf 'two words\n' >"$s/with space"
chmod 0640 "$s/with space"
chown 1000:1000 "$s/with space"
ln "$s/f" "$s/d/g"
ln -s f "$s/l"
mkfifo -m 0600 "$s/p"
mknod -m 0666 "$s/c" c 1 3
mknod -m 000 "$s/w" c 0 0
: >"$s/e"
setfattr -n user.a -v b "$s/f"
setfattr -n trusted.overlay.opaque -v y "$s/d"
for e in f "with space" d/g l p c w e d .; do
	touch -h -d @1000000000.000000005 "$s/$e"
done
touch -h -d @1000000000 "$s/d" "$s"
df=$(fsverity digest --compact "$s/f")
dw=$(fsverity digest --compact "$s/with space")
rdev=$(stat -c '%t %T' "$s/c" | { read -r ma mi; echo $(((0x$ma << 8) | 0x$mi)); })

expect_exit 0 "$CFSCTL" build "$s" "$T/dir.img"

# Fields: PATH SIZE MODE NLINK UID GID RDEV MTIME PAYLOAD CONTENT DIGEST XATTRS
cat >"$T/by-digest.dump" <<DUMP
/ 4096 40755 3 0 0 0 1000000000.0 - - -
/c 0 20666 1 0 0 $rdev 1000000000.5 - - -
/d 4096 40700 2 0 0 0 1000000000.0 - - - trusted.overlay.opaque=y
/e 0 100644 1 0 0 0 1000000000.5 - - -
/f 6 100644 2 0 0 0 1000000000.5 - - $df user.a=b
/d/g 6 @100644 2 0 0 0 1000000000.5 /f - -
/l 1 120777 1 0 0 0 1000000000.5 f - -
/p 0 10600 1 0 0 0 1000000000.5 - - -
/with\x20space 10 100640 1 1000 1000 0 1000000000.5 - - $dw
/w 0 20000 1 0 0 0 1000000000.5 - - -
DUMP
expect_exit 0 "$CFSCTL" build --from-dump "$T/by-digest.dump" "$T/dump.img"
cmp "$T/dir.img" "$T/dump.img" || fail "directory and its dump give different images"

# PAYLOAD alone: the digest comes from the by-digest path.
sed -e "s|- - $df|${df:0:2}/${df:2} - -|" -e "s|- - $dw|${dw:0:2}/${dw:2} - -|" \
	"$T/by-digest.dump" >"$T/by-payload.dump"
grep -q "^/f 6 100644 2 0 0 0 1000000000.5 ${df:0:2}/${df:2} - - user.a=b$" "$T/by-payload.dump" ||
	fail "sed did not make the PAYLOAD dump"
expect_exit 0 "$CFSCTL" build --from-dump "$T/by-payload.dump" "$T/payload.img"
cmp "$T/dir.img" "$T/payload.img" || fail "PAYLOAD-only dump gives another image"

# CONTENT inline: stored as an object; needs a store.
sed -e "s|- - $df|- hello\\\\n -|" -e "s|- - $dw|- two\\\\x20words\\\\n -|" \
	"$T/by-digest.dump" >"$T/by-content.dump"
grep -q '^/f 6 100644 2 0 0 0 1000000000.5 - hello\\n - user.a=b$' "$T/by-content.dump" ||
	fail "sed did not make the CONTENT dump"
expect_exit 1 "$CFSCTL" build --from-dump "$T/by-content.dump" "$T/content.img"
assert_contains "$T/err" "by-content.dump:5: .*--digest-store"
[ ! -e "$T/content.img" ] || fail "image written despite the error"
expect_exit 0 "$CFSCTL" build --from-dump --digest-store="$T/store" "$T/by-content.dump" "$T/content.img"
cmp "$T/dir.img" "$T/content.img" || fail "CONTENT dump gives another image"
cmp "$s/f" "$T/store/${df:0:2}/${df:2}" || fail "CONTENT not in the store"
cmp "$s/with space" "$T/store/${dw:0:2}/${dw:2}" || fail "CONTENT not in the store"

# stdin
expect_exit 0 "$CFSCTL" build --from-dump - "$T/stdin.img" <"$T/by-digest.dump"
"$CFSCTL" build --from-dump - "$T/stdin.img" <"$T/by-digest.dump" || fail "stdin build failed"
cmp "$T/dir.img" "$T/stdin.img" || fail "dump from stdin gives another image"

# A by-name PAYLOAD without DIGEST is a file without a digest: another image.
sed -e "s|- - $df|some/file - -|" "$T/by-digest.dump" >"$T/by-name.dump"
expect_exit 0 "$CFSCTL" build --from-dump "$T/by-name.dump" "$T/name.img"
grep -qa 'some/file' "$T/name.img" || fail "backing path not in the image"
! cmp -s "$T/dir.img" "$T/name.img" || fail "by-name PAYLOAD ignored"

# --skip-devices and --skip-xattrs apply to dumps as to directories.
expect_exit 0 "$CFSCTL" build --skip-devices --skip-xattrs "$s" "$T/dir-skip.img"
expect_exit 0 "$CFSCTL" build --skip-devices --skip-xattrs --from-dump "$T/by-digest.dump" "$T/dump-skip.img"
cmp "$T/dir-skip.img" "$T/dump-skip.img" || fail "--skip-* differ between directory and dump"
! cmp -s "$T/dir.img" "$T/dir-skip.img" || fail "--skip-devices --skip-xattrs changed nothing"
grep -qa 'user.a' "$T/dir-skip.img" && fail "--skip-xattrs kept an xattr"
echo "ok"
