#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What cfsctl build records, read back with 'cfsctl inspect dump': every file
# type (a 0/0 whiteout, devices with their numbers, a fifo), hardlinks with
# their nlink, xattrs of the user., trusted. and security. namespaces, uid,
# gid, setuid and sticky bits, mtime with nanoseconds, 255-byte, non-UTF-8,
# space and newline names, 3000 entries in one directory, a 3000-byte
# symlink target, a sparse 5 GiB file and 60 levels of directories.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"
"$CFSCTL" inspect --help >/dev/null 2>&1 || skip "needs 'cfsctl inspect' to read images back"

make_tree "$T/src"
expect_exit 0 "$CFSCTL" build "$T/src" "$T/img"
expect_exit 0 "$CFSCTL" inspect dump "$T/img"
mv "$T/out" "$T/dump"
d=$T/dump
has() { # PATH REGEX-FOR-THE-REST
	local l
	l=$(P=$1 awk '$1 == ENVIRON["P"]' "$d")
	[ -n "$l" ] || fail "no line for $1 in the dump"
	[[ ${l#"$1 "} =~ $2 ]] || fail "line of $1 is '$l', expected '$1 $2'"
}
digest() { fsverity digest --compact "$T/src/$1"; }
df=$(digest file)

# PATH SIZE MODE NLINK UID GID RDEV MTIME PAYLOAD CONTENT DIGEST XATTRS
has / '^[0-9]+ 40755 5 0 0 0 [0-9]+\.[0-9]+ - - -$'
has /file "^6 100644 3 1234 5678 0 981173106\.123456789 ${df:0:2}/${df:2} - $df user\.color=blue$"
# a hardlink repeats its inode's fields, as composefs-info dump prints it
has /hardlink "^6 @100644 3 1234 5678 0 981173106\.123456789 /file - $df user\.color=blue$"
has /sticky/hardlink2 "^6 @100644 3 1234 5678 0 981173106\.123456789 /file - $df user\.color=blue$"
has /same-content "^6 100644 1 0 0 0 [0-9.]+ ${df:0:2}/${df:2} - $df security\.test=\\\\x00\\\\x01\\\\x02$"
has /empty '^0 100644 1 0 0 0 [0-9.]+ - - - user\.empty=$'
has /setuid '^10 104755 1 0 0 0 '
has /sticky '^[0-9]+ 41777 2 0 0 0 [0-9.]+ - - - trusted\.overlay\.opaque=y$'
has /symlink '^[0-9]+ 120777 1 1234 5678 0 981173106\.123456789 file - -$'
has /whiteout '^0 20644 1 0 0 0 [0-9.]+ - - -$'
has /null "^0 20644 1 0 0 $(((1 << 8) | 3)) "
has /loop "^0 60644 1 0 0 $((7 << 8)) "
has /fifo '^0 10644 1 0 0 0 [0-9.]+ - - -$'
has /sparse "^$((5 * 1024 * 1024 * 1024)) 100644 1 0 0 0 [0-9.]+ [0-9a-f]{2}/[0-9a-f]{62} - [0-9a-f]{64}$"
has "/$NAME255" '^1 100644 '
has '/caf\xe9' '^6 100644 '
has '/with\x20space' '^2 100644 '
has '/with\nnewline' '^2 100644 '
has /a=b '^2 100644 '
has /many '^[0-9]+ 40755 2 '
assert_eq 3000 "$(grep -c '^/many/entry-' "$d")" "entries of /many"
has /many/entry-2999 '^0 100644 1 0 0 0 [0-9.]+ - - -$'
l=$(awk '$1 == "/longlink"' "$d" | cut -d' ' -f9)
assert_eq "$LONGTARGET" "$l" "3000-byte symlink target"
p=/deep
for i in $(seq 1 60); do p=$p/d$i; done
has "$p/leaf" "^6 100644 1 0 0 0 [0-9.]+ [0-9a-f]{2}/"
has "$p" '^[0-9]+ 40755 2 '
has /deep '^[0-9]+ 40755 3 '

# --skip-devices leaves them out; --skip-xattrs drops every xattr.
expect_exit 0 "$CFSCTL" build --skip-devices --skip-xattrs "$T/src" "$T/img2"
expect_exit 0 "$CFSCTL" inspect dump "$T/img2"
grep -q '^/\(null\|loop\|whiteout\) ' "$T/out" && fail "--skip-devices kept a device"
grep -q '=' <(cut -d' ' -f12- "$T/out") && fail "--skip-xattrs kept an xattr"
grep -q '^/fifo ' "$T/out" || fail "--skip-devices dropped the fifo"
echo "ok"
