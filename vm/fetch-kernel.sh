#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Fetches the Debian kernel that matches the module's headers (those that
# vm/fetch-headers.sh put in the cache, or an installed linux-headers
# package) and unpacks it into a cache outside the repository, for the
# QEMU harness.
# The package is downloaded with 'apt-get -o APT::Sandbox::User=root download' and unpacked with
# 'dpkg -x'; it is never installed. Idempotent; a lock serialises
# concurrent runs. Prints the cache directory on stdout.
#
# Usage: vm/fetch-kernel.sh [KERNEL_RELEASE]
#   KERNEL_RELEASE defaults to the release of the headers vm/kdir.sh finds
#   (e.g. 6.12.118+deb12-amd64). CFS_KERNEL_CACHE overrides the cache root
#   (default /var/cache/cfs).
set -euo pipefail

krel=${1:-${CFS_KERNEL_RELEASE:-}}
if [ -z "$krel" ]; then
	krel=$("$(dirname "$0")/kdir.sh" | sed -n 2p) || exit 1
fi
cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}
dest=$cache_root/kernel-$krel
pkg=linux-image-$krel-unsigned

mkdir -p "$cache_root"
exec 9>"$cache_root/.kernel-$krel.lock"
flock 9

# The image version must be the one the headers were built from.
# The newest kernel's (vm/fetch-newest.sh) is unpacked by that script.
want=$(cat "$cache_root/headers-$krel/.version" 2>/dev/null ||
	cat "$cache_root/unstable/kernel-$krel.version" 2>/dev/null ||
	dpkg-query -W -f='${Version}' "linux-headers-$krel" 2>/dev/null || true)
if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.version" 2>/dev/null)" = "$want" ]; then
	echo "$dest"
	exit 0
fi

tmp=$(mktemp -d "$cache_root/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(
	cd "$tmp"
	if [ -n "$want" ]; then
		apt-get -o APT::Sandbox::User=root download "$pkg=$want" >&2 ||
			{ apt-get update -qq >&2 && apt-get -o APT::Sandbox::User=root download "$pkg=$want" >&2; }
	else
		apt-get -o APT::Sandbox::User=root download "$pkg" >&2 ||
			{ apt-get update -qq >&2 && apt-get -o APT::Sandbox::User=root download "$pkg" >&2; }
	fi
)
deb=$(ls "$tmp"/*.deb)
rm -rf "$dest"
mkdir -p "$tmp/root"
dpkg -x "$deb" "$tmp/root"
if [ ! -f "$tmp/root/boot/vmlinuz-$krel" ]; then
	echo "fetch-kernel: $deb has no boot/vmlinuz-$krel" >&2
	exit 1
fi
echo "$want" > "$tmp/root/.version"
mv "$tmp/root" "$dest"
touch "$dest/.complete"
echo "$dest"
