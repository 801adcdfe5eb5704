#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Fetches the kernel's checkpatch.pl, with the two data files it reads
# beside it (spelling.txt, const_structs.checkpatch), from Debian's
# linux-source-6.12 package into a cache outside the repository: the
# package is downloaded with 'apt-get download', never installed, and only
# those three files are taken from its source tarball. Idempotent; a lock
# serialises concurrent runs. Prints the path of checkpatch.pl.
#
# Usage: vm/fetch-checkpatch.sh
#   CFS_KERNEL_CACHE overrides the cache root (default /var/cache/cfs).
set -euo pipefail
cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}
pkg=linux-source-6.12
die() { echo "fetch-checkpatch: $*" >&2; exit 1; }

mkdir -p "$cache_root"
exec 9>"$cache_root/.checkpatch.lock"
flock 9
version=$(apt-cache policy "$pkg" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -vx '(none)' || true)
if [ -z "$version" ]; then
	current=$(ls -d "$cache_root"/checkpatch-*/.complete 2>/dev/null | tail -n 1)
	[ -n "$current" ] || die "apt knows no $pkg (run 'apt-get update')"
	echo "$(dirname "$current")/checkpatch.pl"
	exit 0
fi
dest=$cache_root/checkpatch-$version
if [ ! -f "$dest/.complete" ]; then
	tmp=$(mktemp -d "$cache_root/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	(cd "$tmp" && apt-get -o APT::Sandbox::User=root download "$pkg=$version" >&2) ||
		{ apt-get update -qq >&2 && (cd "$tmp" && apt-get -o APT::Sandbox::User=root download "$pkg=$version" >&2); } ||
		die "cannot download $pkg ($version)"
	mkdir "$tmp/x" "$tmp/root"
	dpkg-deb --fsys-tarfile "$tmp"/*.deb | tar -x -C "$tmp/x" --wildcards './usr/src/linux-source-*.tar.xz'
	tarball=$(ls "$tmp"/x/usr/src/linux-source-*.tar.xz)
	top=$(basename "$tarball" .tar.xz)
	tar -xJf "$tarball" -C "$tmp/x" "$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" || die "$pkg's tarball has no scripts/checkpatch.pl"
	mv "$tmp/x/$top/scripts/"* "$tmp/root/"
	touch "$tmp/root/.complete"
	rm -rf "$dest"
	mv "$tmp/root" "$dest"
fi
echo "$dest/checkpatch.pl"
