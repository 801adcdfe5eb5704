#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Makes a debootstrap'd Debian 12 root in a cache outside the repository,
# for the package and boot tests, and prints its path. The host's Debian apt
# sources are copied in, so the root gets its packages where the host does
# (bookworm-security among them, for Debian's 6.12 kernel).
#
#   base  minbase, with the packages the .debs pull in (dkms, a compiler,
#         the 6.12 headers of vm/kdir.sh, and the 6.1 ones dkms recommends)
#         downloaded into its apt archive, not installed: the package test
#         installs them from there without the network.
#   boot  base, with systemd, udev, initramfs-tools, e2fsprogs, fsverity and
#         Debian's 6.12 kernel image at exactly the headers' version, and
#         the same downloads.
#
# Idempotent; a lock serialises concurrent runs; a root is made again when
# this script or the kernel's version changes. Exits 77, saying why, when
# debootstrap cannot run here (not root, no debootstrap).
#
# Usage: vm/debian-root.sh base|boot
#   CFS_KERNEL_CACHE overrides the cache root (default /var/cache/cfs).
set -euo pipefail
kind=${1:-}
case $kind in base | boot) ;; *) echo "usage: vm/debian-root.sh base|boot" >&2; exit 2 ;; esac
here=$(cd "$(dirname "$0")" && pwd)
cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}

[ "$(id -u)" = 0 ] || { echo "debian-root: debootstrap needs root"; exit 77; }
command -v debootstrap >/dev/null || { echo "debian-root: no debootstrap (Debian package debootstrap; make deps)"; exit 77; }

krel=$("$here/kdir.sh" | sed -n 2p) || exit 1
kver=$(cat "$cache_root/headers-$krel/.version" 2>/dev/null ||
	dpkg-query -W -f='${Version}' "linux-headers-$krel" 2>/dev/null || true)
[ -n "$kver" ] || { echo "debian-root: no package version for the headers of $krel" >&2; exit 1; }

dest=$cache_root/debian12-$kind
key=$({ cat "$0"; echo "$krel $kver"; } | md5sum | cut -d' ' -f1)
mkdir -p "$cache_root"
exec 9>"$cache_root/.debian12-$kind.lock"
flock 9
if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.key" 2>/dev/null)" = "$key" ]; then
	echo "$dest"
	exit 0
fi

# The host's Debian mirror, and the apt sources files of its release's
# suites (6.12 is in bookworm-security, which debootstrap does not read);
# others may need keys the root has not got.
mirror=$("$here/debian-mirror.sh") || exit 1
uris=$(apt-get indextargets --format '$(RELEASE) $(REPO_URI)' 'Identifier: Packages' 2>/dev/null |
	awk '$1 ~ /^bookworm(-[a-z]+)?$/ {print $2}' | sort -u)
sources=()
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	for u in $uris; do
		grep -qF "${u%/}" "$f" && { sources+=("$f"); break; }
	done
done
[ ${#sources[@]} -gt 0 ] || { echo "debian-root: no apt sources file names $mirror" >&2; exit 1; }

tmp=$(mktemp -d "$cache_root/.debian12-$kind.XXXXXX")
trap 'umount -R "$tmp/root/proc" 2>/dev/null || true; rm -rf "$tmp"' EXIT
r=$tmp/root
if [ "$kind" = base ]; then
	debootstrap --variant=minbase bookworm "$r" "$mirror" > "$tmp/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$tmp/debootstrap.log" >&2; echo "debian-root: debootstrap failed" >&2; exit 1; }
else
	base=$("$0" base)
	cp -a "$base/." "$r/"
	rm -f "$r/.complete" "$r/.key"
fi
rm -f "$r/etc/apt/sources.list"
for f in "${sources[@]}"; do
	cp "$f" "$r/etc/apt/sources.list.d/"
done
echo 'APT::Install-Recommends "true";' > "$r/etc/apt/apt.conf.d/00cfs-recommends"
# A scratch root: dpkg need not fsync every file (minutes on a slow disk).
echo force-unsafe-io > "$r/etc/dpkg/dpkg.cfg.d/00cfs-unsafe-io"
# A kernel's postinst in a chroot: no bootloader to update.
mkdir -p "$r/etc/kernel"
printf 'do_symlinks = yes\ndo_bootloader = no\n' > "$r/etc/kernel-img.conf"
mount -t proc proc "$r/proc"
in_root() { chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
in_root apt-get update -qq
# What the .debs pull in, downloaded for the tests to install offline.
in_root apt-get install -y -qq -d dkms "linux-headers-$krel=$kver" \
	"linux-headers-${krel%-amd64}-common=$kver" "linux-kbuild-${krel%-amd64}=$kver" \
	linux-headers-amd64 initramfs-tools libfsverity0 libarchive13 libcurl4 libfuse3-3 \
	libncursesw6 >/dev/null
if [ "$kind" = boot ]; then
	in_root apt-get install -y -qq --no-install-recommends systemd-sysv udev dbus kmod \
		initramfs-tools e2fsprogs fsverity procps util-linux "linux-image-$krel=$kver" \
		> "$tmp/install.log" 2>&1 ||
		{ tail -n 20 "$tmp/install.log" >&2; echo "debian-root: installing the boot packages failed" >&2; exit 1; }
	# The serial console logs in nobody; root has no password to ask for.
	in_root passwd -d root >/dev/null
	echo cfs-boot > "$r/etc/hostname"
fi
umount "$r/proc"
echo "$key" > "$r/.key"
touch "$r/.complete"
rm -rf "$dest"
mv "$r" "$dest"
echo "$dest"
