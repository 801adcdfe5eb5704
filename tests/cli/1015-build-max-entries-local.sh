#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# --max-entries for a dumpfile or a directory: the entry that makes the
# tree hold one more than the cap, or whose xattrs and symlink targets
# bring those read to more than 256 bytes per entry allowed, is refused as
# it is read, naming the dumpfile and its line, or the directory's entry,
# and the cap: exit 1, no image, no object in the digest store. Their
# default (16777216) is not the 150000 of archives: a dumpfile or a
# directory of 150001 entries builds without the option.
. "$(dirname "$0")/../lib/common.sh"
umask 022

# no_objects STORE: the store holds no file, not even a temporary
no_objects() {
	[ -z "$(find "$1" -type f 2>/dev/null)" ] || {
		find "$1" -type f; fail "a failed build left files in the store '$1'"
	}
}
# refused PATTERN ARGS...: build ARGS... fails saying PATTERN, leaving nothing
refused() {
	local pattern=$1
	shift
	rm -rf "$T/s"
	expect_exit 1 "$CFSCTL" build --digest-store="$T/s" "$@" "$T/x.img"
	assert_contains "$T/err" "$pattern"
	no_objects "$T/s"
	[ ! -e "$T/x.img" ] || fail "a refused build left an image"
}
cap="the tree would hold more than 10 entries \(--max-entries\)$"

# A dumpfile: the root and 20 empty files; the 11th beyond the root (line 12) is one too many.
python3 - "$T" <<'PY' || fail "writing the dumpfiles"
import sys
d = sys.argv[1]
root = "/ 0 40755 2 0 0 0 0.0 - - -\n"
with open(d + "/files.dump", "w") as f:
    f.write(root + "".join("/f%02d 0 100644 1 0 0 0 0.0 - - -\n" % k for k in range(20)))
# symlinks of 300-byte targets: 10 entries allow 2560 bytes, the 9th passes them
with open(d + "/links.dump", "w") as f:
    t = "t" * 300
    f.write(root + "".join("/l%02d 300 120777 1 0 0 0 0.0 %s - -\n" % (k, t) for k in range(9)))
# one file with 30 xattrs of 100 bytes
with open(d + "/xattrs.dump", "w") as f:
    f.write(root + "/x 0 100644 1 0 0 0 0.0 - - - " +
            " ".join("user.a%02d=%s" % (k, "v" * 100) for k in range(30)) + "\n")
# 150001 entries: over the cap of archives
with open(d + "/many.dump", "w") as f:
    f.write(root + "/d 0 40755 2 0 0 0 0.0 - - -\n")
    f.write("".join("/d/e%06d 0 100644 1 0 0 0 0.0 - - -\n" % k for k in range(150000)))
PY
refused "^cfsctl: $T/files\.dump:12: $cap" --from-dump --max-entries=10 "$T/files.dump"
refused "^cfsctl: $T/links\.dump:10: xattrs and symlink targets add up to 2700 bytes, more than 256 per entry --max-entries 10 allows$" \
	--from-dump --max-entries=10 "$T/links.dump"
refused "^cfsctl: $T/xattrs\.dump:2: xattrs and symlink targets add up to [0-9]+ bytes, more than 256 per entry --max-entries 10 allows$" \
	--from-dump --max-entries=10 "$T/xattrs.dump"
rm -rf "$T/s"
expect_exit 1 sh -c 'exec "$0" build --from-dump --max-entries=10 - "$1" <"$2"' "$CFSCTL" \
	"$T/x.img" "$T/files.dump"
assert_contains "$T/err" "^cfsctl: stdin:12: $cap"
[ ! -e "$T/x.img" ] || fail "a refused build left an image"
# within the cap: 20 files and the root
expect_exit 0 "$CFSCTL" build --from-dump --max-entries=20 "$T/files.dump" "$T/f.img"
expect_exit 0 "$CFSCTL" inspect ls "$T/f.img" /
assert_eq 20 "$(wc -l <"$T/out")" "entries of the image of the dumpfile"
expect_exit 0 "$CFSCTL" build --from-dump --max-entries=0 "$T/xattrs.dump" "$T/f.img"
# the default: more than an archive's
expect_exit 0 "$CFSCTL" build --from-dump "$T/many.dump" "$T/f.img"
expect_exit 0 "$CFSCTL" inspect ls "$T/f.img" /d
assert_eq 150000 "$(wc -l <"$T/out")" "entries of the image of 150001 entries"
rm -f "$T/many.dump" "$T/f.img"

# A directory: two directories of 10 files with content; whichever readdir
# gives first, the 11th entry is one too many, and no object is written.
for d in a b; do
	mkdir -p "$T/tree/$d"
	for k in 0 1 2 3 4 5 6 7 8 9; do
		echo "file $d$k, long enough for an object of its own: $(printf '%0100d' $k)" >"$T/tree/$d/$k"
	done
done
refused "^cfsctl: '$T/tree/[ab](/[0-9])?': $cap" --max-entries=10 "$T/tree"
refused "^cfsctl: '$T/tree/[ab](/[0-9])?': $cap" --format=erofs --max-entries=10 "$T/tree"
ln -s "$(printf 't%.0s' {1..300})" "$T/tree/a/link"
refused "^cfsctl: '$T/tree/[ab](/[0-9]|/link)?': (xattrs and symlink targets add up to [0-9]+ bytes, more than 256 per entry --max-entries 1 allows|the tree would hold more than 1 entries)" \
	--max-entries=1 "$T/tree"
rm -rf "$T/s"
expect_exit 0 "$CFSCTL" build --max-entries=23 --digest-store="$T/s" "$T/tree" "$T/t.img"
check_store "$T/s"
assert_eq 20 "$n_objects" "objects of the tree within the cap"
# the default: more than an archive's
mkdir "$T/many"
python3 -c 'import os, sys
for k in range(150001):
    os.close(os.open("%s/e%06d" % (sys.argv[1], k), os.O_CREAT | os.O_WRONLY, 0o644))' "$T/many" ||
	fail "making 150001 files"
expect_exit 0 "$CFSCTL" build "$T/many" "$T/m.img"
expect_exit 0 "$CFSCTL" inspect ls "$T/m.img" /
assert_eq 150001 "$(wc -l <"$T/out")" "entries of the image of a directory of 150001 files"
rm -rf "$T/many" "$T/m.img"

"$CFSCTL" build --help >"$T/help" || fail "build --help"
tr -s ' \n' ' ' <"$T/help" | grep -q '150000 for a tar archive or container image, 16777216 for a dumpfile or directory' ||
	fail "build --help does not say the defaults of --max-entries"
echo ok
