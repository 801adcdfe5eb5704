#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Fetches the headers of Debian's current 6.12 kernel into a cache outside
# the repository, without installing a kernel on this machine: the three
# packages a module build needs (linux-headers-<release>, its -common
# tree and linux-kbuild) are downloaded with 'apt-get download' and
# unpacked with 'dpkg -x', and the one absolute path in them (the build
# tree's Makefile includes the -common tree) is pointed into the cache.
# The release is the one Debian's linux-headers-6.12-amd64 currently
# depends on, so it moves with the archive; the VM kernel is then fetched
# at exactly the headers' package version (vm/fetch-kernel.sh).
#
# Idempotent; a lock serialises concurrent runs. Records the release in
# CACHE/headers-current and prints the build tree (a KDIR) on stdout.
#
# Usage: vm/fetch-headers.sh [KERNEL_RELEASE]
#   KERNEL_RELEASE (e.g. 6.12.118+deb12-amd64) defaults to the one above.
#   CFS_KERNEL_CACHE overrides the cache root (default /var/cache/cfs).
set -euo pipefail

cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}
meta=linux-headers-6.12-amd64

current() { # the release the metapackage depends on, or nothing
	apt-cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: linux-headers-\(6\.12\..*-amd64\)$/\1/p' | head -n 1
}
candidate() { # the version apt would fetch of package $1, or nothing
	apt-cache policy "$1" 2>/dev/null | sed -n 's/^ *Candidate: //p' | grep -vx '(none)' || true
}
resolve() { # sets krel, base and version from apt's lists
	krel=${want_krel:-$(current)}
	base=${krel%-amd64} # 6.12.118+deb12
	version=
	[ -z "$krel" ] || version=$(candidate "linux-headers-$krel")
	[ -n "$version" ]
}
want_krel=${1:-${CFS_KERNEL_RELEASE:-}}
# Lists of a day ago may name a release the archive has dropped since.
resolve || { apt-get update -qq >&2 || true; resolve; } || {
	echo "fetch-headers: apt knows no ${want_krel:-$meta} (is bookworm-security in sources.list?)" >&2
	exit 1
}

dest=$cache_root/headers-$krel
kdir=$dest/usr/src/linux-headers-$krel
mkdir -p "$cache_root"
exec 9>"$cache_root/.headers-$krel.lock"
flock 9

if [ ! -f "$dest/.complete" ] || [ "$(cat "$dest/.version" 2>/dev/null)" != "$version" ]; then
	tmp=$(mktemp -d "$cache_root/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	download() {
		(cd "$tmp" && apt-get -o APT::Sandbox::User=root download \
			"linux-headers-$krel=$version" "linux-headers-$base-common=$version" \
			"linux-kbuild-$base=$version" >&2)
	}
	download || { apt-get update -qq >&2 && resolve && download; } || {
		echo "fetch-headers: cannot download the headers of $krel ($version)" >&2
		exit 1
	}
	dest=$cache_root/headers-$krel # the release may have moved on
	kdir=$dest/usr/src/linux-headers-$krel
	mkdir "$tmp/root"
	for deb in "$tmp"/*.deb; do
		dpkg -x "$deb" "$tmp/root"
	done
	mk=$tmp/root/usr/src/linux-headers-$krel/Makefile
	if [ ! -f "$mk" ] || [ ! -d "$tmp/root/usr/src/linux-headers-$base-common" ]; then
		echo "fetch-headers: the packages hold no usr/src/linux-headers-$krel tree" >&2
		exit 1
	fi
	# The symlinks between the three trees are relative and stay right.
	sed -i "s|^include /usr/src/|include $dest/usr/src/|" "$mk"
	echo "$version" > "$tmp/root/.version"
	touch "$tmp/root/.complete"
	rm -rf "$dest"
	mv "$tmp/root" "$dest"
fi
echo "$krel" > "$cache_root/.headers-current.tmp"
mv "$cache_root/.headers-current.tmp" "$cache_root/headers-current"
echo "$kdir"
