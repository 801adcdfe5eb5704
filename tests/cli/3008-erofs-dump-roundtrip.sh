#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The dump of an EROFS image builds back into the same bytes when the
# image has hardlinks whose names the source met in another order than the
# dump lists them: a tar archive whose first name of an inode sorts after
# another (deterministic), and a directory with hardlink groups spread over
# several directories (whatever order readdir gives). Both formats; the
# image itself does not depend on that order either.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3 to write the archive"

roundtrip() { # roundtrip NAME BUILD-ARGS...: build, dump, rebuild, compare
	local name=$1 fmt
	shift
	for fmt in erofs v1; do
		"$CFSCTL" build --format=$fmt "$@" "$T/$name.$fmt" || fail "$name: $fmt build failed"
		"$CFSCTL" inspect dump "$T/$name.$fmt" >"$T/$name.$fmt.dump" || fail "$name: dump failed"
		"$CFSCTL" build --format=$fmt --from-dump "$T/$name.$fmt.dump" "$T/$name.$fmt.rt" ||
			fail "$name: $fmt build of the dump failed"
		cmp -s "$T/$name.$fmt" "$T/$name.$fmt.rt" ||
			fail "$name: the $fmt image rebuilt from its dump differs ($(cmp "$T/$name.$fmt" "$T/$name.$fmt.rt"))"
	done
}

# /z first, then /a/x/f and /m as hardlinks to it: the dump lists /a/x/f
# first, and the others as links to it.
python3 - "$T/a.tar" <<'PY'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w", format=tarfile.PAX_FORMAT) as t:
    def add(name, kind, data=b"", link=None):
        i = tarfile.TarInfo(name)
        i.type, i.mtime, i.mode = kind, 1000, 0o644 if kind != tarfile.DIRTYPE else 0o755
        if link:
            i.linkname = link
        i.size = len(data) if kind == tarfile.REGTYPE else 0
        t.addfile(i, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    add("z", tarfile.REGTYPE, b"x" * 5000)
    add("small", tarfile.REGTYPE, b"tiny")
    add("a", tarfile.DIRTYPE)
    add("a/x", tarfile.DIRTYPE)
    add("a/x/f", tarfile.LNKTYPE, link="z")
    add("m", tarfile.LNKTYPE, link="z")
    add("a/s", tarfile.LNKTYPE, link="small")
PY
roundtrip tar --from-tar "$T/a.tar"
grep -q '^/a/x/f 5000 100644 3 ' "$T/tar.erofs.dump" || { cat "$T/tar.erofs.dump"; fail "/a/x/f is not the first name of its inode in the dump"; }
grep -qE '^/z 5000 @100644 3 .* /a/x/f - [0-9a-f]{64}$' "$T/tar.erofs.dump" || { cat "$T/tar.erofs.dump"; fail "/z is not a link to /a/x/f in the dump"; }

# A directory: groups whose names sit at several depths.
S=$T/src
mkdir -p "$S/a/b/c" "$S/d/e" "$S/f"
for i in 1 2 3 4 5 6 7 8; do
	head -c $((100 + i)) /dev/urandom >"$S/f/big$i"
	printf 'i%s' "$i" >"$S/d/e/in$i"
	ln "$S/f/big$i" "$S/a/b/c/l$i"
	ln "$S/f/big$i" "$S/z$i"
	ln "$S/d/e/in$i" "$S/a/m$i"
	ln "$S/d/e/in$i" "$S/d/n$i"
done
roundtrip dir "$S"
exit 0
