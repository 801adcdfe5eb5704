#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Prints the kernel build tree (KDIR) and its release, on one line each,
# and, when the tree's programs must run inside a root of another release
# (the newest kernel's, vm/fetch-newest.sh), that root on a third line;
# without touching the network. The tree is:
#   - $KDIR when it is set (a tree of one's own, or the installed
#     /lib/modules/<release>/build);
#   - with KREL=<release> set, that release's headers in the cache: 6.12's
#     from vm/fetch-headers.sh ('make deps'), the newest kernel's in the
#     build root of vm/fetch-newest.sh ('make kernels'); KREL=newest is the
#     release 'make kernels' last resolved;
#   - else the 6.12 headers that 'make deps' put in the cache.
# Exits 1, saying why, when there is none.
set -euo pipefail
cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}
kdir=${KDIR:-} want=${KREL:-} root=
if [ -z "$kdir" ] && [ "$want" = newest ]; then
	want=$(cat "$cache_root/newest-current" 2>/dev/null || true)
	[ -n "$want" ] || { echo "no newest kernel in $cache_root (run 'make kernels')" >&2; exit 1; }
fi
if [ -z "$kdir" ] && [ -n "$want" ]; then
	if [ -f "$cache_root/headers-$want/.complete" ]; then
		kdir=$cache_root/headers-$want/usr/src/linux-headers-$want
	elif [ -f "$cache_root/unstable/root/usr/src/linux-headers-$want/include/config/kernel.release" ]; then
		root=$cache_root/unstable/root
		kdir=$root/usr/src/linux-headers-$want
	else
		echo "no headers of kernel $want in $cache_root (6.12's: 'make deps'; the newest: 'make kernels')" >&2
		exit 1
	fi
elif [ -z "$kdir" ]; then
	krel=$(cat "$cache_root/headers-current" 2>/dev/null || true)
	if [ -z "$krel" ] || [ ! -f "$cache_root/headers-$krel/.complete" ]; then
		echo "no 6.12 kernel headers in $cache_root (run 'make deps', or pass KDIR=)" >&2
		exit 1
	fi
	kdir=$cache_root/headers-$krel/usr/src/linux-headers-$krel
fi
krel=$(cat "$kdir/include/config/kernel.release" 2>/dev/null || true)
if [ -z "$krel" ]; then
	echo "$kdir is not a configured kernel build tree (no include/config/kernel.release)" >&2
	exit 1
fi
echo "$kdir"
echo "$krel"
[ -z "$root" ] || echo "$root"
