# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the build tests: make_tree DIR creates a source tree with every
# file type and the awkward cases build must handle (hardlinks, xattrs of
# every namespace, 255-byte and non-UTF-8 names, spaces and newlines in
# names, a 3000-entry directory, a 3000-byte symlink target, a sparse 5 GiB
# file unless the second argument is "nosparse", 60 levels of directories).
# Devices and trusted.* xattrs need root.
# Sets NAME255 and LONGTARGET for the checks.

# Byte semantics for names that are not UTF-8 (bash's read -d '' would
# otherwise swallow the NUL after an invalid sequence).
export LC_ALL=C

NAME255=$(printf 'n%.0s' $(seq 255))
LONGTARGET=$(printf 't%.0s' $(seq 3000))

make_tree() { # DIR [nosparse]
	local d=$1 i p
	mkdir -p "$d"
	printf 'hello\n' >"$d/file"
	printf 'hello\n' >"$d/same-content"
	: >"$d/empty"
	printf '#!/bin/sh\n' >"$d/setuid"
	chmod 4755 "$d/setuid"
	mkdir -m 1777 "$d/sticky"
	ln "$d/file" "$d/hardlink"
	ln "$d/file" "$d/sticky/hardlink2"
	ln -s file "$d/symlink"
	ln -s "$LONGTARGET" "$d/longlink"
	mknod "$d/whiteout" c 0 0
	mknod "$d/null" c 1 3
	mknod "$d/loop" b 7 0
	mkfifo "$d/fifo"
	setfattr -n user.color -v blue "$d/file"
	setfattr -n trusted.overlay.opaque -v y "$d/sticky"
	setfattr -n security.test -v 0sAAEC "$d/same-content"
	setfattr -n user.empty "$d/empty"
	printf 'x' >"$d/$NAME255"
	printf 'latin1' >"$d/$(printf 'caf\xe9')"
	printf 'sp' >"$d/with space"
	printf 'nl' >"$d/with
newline"
	printf 'eq' >"$d/a=b"
	[ "${2:-}" = nosparse ] || truncate -s 5G "$d/sparse"
	mkdir "$d/many"
	for i in $(seq 1 3000); do : >"$d/many/entry-$i"; done
	p=$d/deep
	for i in $(seq 1 60); do p=$p/d$i; done
	mkdir -p "$p"
	printf 'bottom' >"$p/leaf"
	chown -h 1234:5678 "$d/file" "$d/symlink"
	touch -h -d '2001-02-03 04:05:06.123456789 UTC' "$d/file" "$d/symlink"
}
