#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Prints the kernel build tree (KDIR) and its release, on one line each,
# without touching the network: $KDIR when it is set (a tree of one's own,
# or the installed /lib/modules/<release>/build), else the headers that
# vm/fetch-headers.sh (run by 'make deps') put in the cache.
# Exits 1, saying why, when there is none.
set -euo pipefail
cache_root=${CFS_KERNEL_CACHE:-/var/cache/cfs}
kdir=${KDIR:-}
if [ -z "$kdir" ]; then
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
