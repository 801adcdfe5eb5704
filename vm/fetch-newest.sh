#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Makes the second kernel line the module is built and tested on: the
# newest kernel of Debian unstable, resolved now (what linux-headers-amd64
# depends on there), never pinned. Unstable's kbuild programs are linked
# against unstable's libc, so the module is built inside a minimal unstable
# root (debootstrap, minbase, with the kernel's headers, gcc and make), as
# a distribution's CI builds in a container of the target release. The
# kernel itself (vmlinuz and modules) is unpacked into CACHE/kernel-<release>
# in the layout vm/fetch-kernel.sh gives 6.12's, for the VM tests.
#
# apt reads unstable through a sources list and lists directory of this
# cache's own, from the mirror the machine's apt already uses; the
# machine's apt sources are never changed.
#
# Idempotent; a lock serialises concurrent runs. Records the release in
# CACHE/newest-current and prints it on stdout.
#
# Usage: vm/fetch-newest.sh
#   CFS_KERNEL_CACHE overrides the cache root (default /var/cache/cfs).
set -euo pipefail

cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}
u=$cache_root/unstable
suite=unstable
die() { echo "fetch-newest: $*" >&2; exit 1; }
command -v debootstrap >/dev/null || die "needs debootstrap (Debian package debootstrap; make deps)"

mkdir -p "$u/lists/partial" "$u/apt-cache/archives/partial"
exec 9>"$u/.lock"
flock 9

# The machine's Debian mirror: the one its apt reads its own release from.
mirror=$("$(dirname "$0")/debian-mirror.sh") || die "no Debian mirror to read $suite from"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
echo "deb [signed-by=$keyring] $mirror $suite main" > "$u/sources.list"
# The archive copy a machine reads may be older than its Release files'
# Valid-Until (a snapshot): what it serves is signed all the same.
novalid=(-o Acquire::Check-Valid-Until=false)
aptopts=("${novalid[@]}" -o "Dir::Etc::sourcelist=$u/sources.list" -o Dir::Etc::sourceparts=-
	-o "Dir::State::Lists=$u/lists" -o "Dir::Cache=$u/apt-cache"
	-o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
apt-get "${aptopts[@]}" update -qq >&2 || die "cannot read $suite's package lists from $mirror"

krel=$(apt-cache "${aptopts[@]}" depends linux-headers-amd64 2>/dev/null |
	sed -n 's/^ *Depends: linux-headers-\(.*-amd64\)$/\1/p' | head -n 1)
[ -n "$krel" ] || die "$suite's linux-headers-amd64 names no kernel release"
version=$(apt-cache "${aptopts[@]}" policy "linux-headers-$krel" |
	sed -n 's/^ *Candidate: //p')
[ -n "$version" ] && [ "$version" != "(none)" ] || die "no linux-headers-$krel in $suite"

# The build root: debootstrap'd once, then the headers of each newest
# release installed into it with its own apt (the root's sources.list is
# the same mirror's unstable).
root=$u/root
inroot() { # run "$@" in the root, with /proc, in a mount namespace of its own
	unshare -m --propagation private sh -c \
		'mount -t proc proc "$0/proc" && exec chroot "$0" "$@"' "$root" "$@"
}
if [ ! -f "$root/.complete" ]; then
	rm -rf "$root"
	echo "fetch-newest: debootstrap $suite into $root" >&2
	debootstrap --variant=minbase --include=make,gcc,libc6-dev "$suite" "$root" "$mirror" \
		> "$u/debootstrap.log" 2>&1 ||
		{ tail -n 20 "$u/debootstrap.log" >&2; die "debootstrap of $suite failed (log: $u/debootstrap.log)"; }
	touch "$root/.complete"
fi
kdir=$root/usr/src/linux-headers-$krel
if [ "$(cat "$u/headers-$krel.version" 2>/dev/null)" != "$version" ] ||
	[ ! -f "$kdir/include/config/kernel.release" ]; then
	echo "fetch-newest: linux-headers-$krel ($version) into the build root" >&2
	inroot apt-get "${novalid[@]}" update -qq >&2
	inroot env DEBIAN_FRONTEND=noninteractive apt-get "${novalid[@]}" install -y -qq --no-install-recommends \
		"linux-headers-$krel=$version" > "$u/install.log" 2>&1 ||
		{ tail -n 20 "$u/install.log" >&2; die "cannot install linux-headers-$krel in the build root (log: $u/install.log)"; }
	[ -f "$kdir/include/config/kernel.release" ] || die "linux-headers-$krel left no $kdir"
	echo "$version" > "$u/headers-$krel.version"
fi

# The kernel: linux-image-<release> and the packages of that release it
# depends on (newer kernels split it into -binary and -modules), unpacked,
# never installed.
dest=$cache_root/kernel-$krel
if [ ! -f "$dest/.complete" ] || [ "$(cat "$dest/.version" 2>/dev/null)" != "$version" ]; then
	tmp=$(mktemp -d "$cache_root/.fetch.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	pkgs=("linux-image-$krel")
	while read -r p; do pkgs+=("$p"); done < <(
		apt-cache "${aptopts[@]}" depends "linux-image-$krel" |
			sed -n "s/^ *Depends: \(linux-[a-z]*-$(sed 's/[.]/\\./g' <<<"$krel")\)$/\1/p" |
			grep -v '^linux-base-' || true)
	(cd "$tmp" && apt-get "${aptopts[@]}" download "${pkgs[@]/%/=$version}" >&2) ||
		die "cannot download ${pkgs[*]} ($version)"
	mkdir "$tmp/root"
	for deb in "$tmp"/*.deb; do dpkg -x "$deb" "$tmp/root"; done
	# merged-/usr layout to the harness's: boot/vmlinuz-<release>, lib/modules
	if [ ! -e "$tmp/root/lib/modules" ] && [ -d "$tmp/root/usr/lib/modules" ]; then
		rm -rf "$tmp/root/lib"
		mv "$tmp/root/usr/lib/modules" "$tmp/root/modules" && mkdir "$tmp/root/lib" &&
			mv "$tmp/root/modules" "$tmp/root/lib/modules"
	fi
	if [ ! -f "$tmp/root/boot/vmlinuz-$krel" ]; then
		mkdir -p "$tmp/root/boot"
		[ -f "$tmp/root/lib/modules/$krel/vmlinuz" ] ||
			die "${pkgs[*]} hold no vmlinuz of $krel"
		mv "$tmp/root/lib/modules/$krel/vmlinuz" "$tmp/root/boot/vmlinuz-$krel"
	fi
	echo "$version" > "$tmp/root/.version"
	touch "$tmp/root/.complete"
	rm -rf "$dest"
	mv "$tmp/root" "$dest"
fi
echo "$version" > "$u/kernel-$krel.version"
echo "$krel" > "$cache_root/.newest-current.tmp"
mv "$cache_root/.newest-current.tmp" "$cache_root/newest-current"
echo "$krel"
