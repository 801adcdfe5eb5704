#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Builds composefs.ko for kernel release KREL (vm/kdir.sh finds its tree)
# into OUTDIR, from a copy of the module's sources made as the dkms
# package's ('make -C kmod dkms-source'). A tree whose programs belong to
# another release's root (the newest kernel's, vm/fetch-newest.sh) is
# built inside that root, with OUTDIR bound into it in a mount namespace
# of this build's own. The build fails on any compiler warning. Prints the
# module's path.
#
# Usage: vm/kmod-build.sh KREL OUTDIR
#   EXTRA: more kbuild arguments (W=1, C=2 ...); V=1 shows the commands.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: vm/kmod-build.sh KREL OUTDIR" >&2; exit 2; }
want=$1 out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
# A make that runs this script beside other jobs passes its jobserver in
# MAKEFLAGS without the descriptors; kbuild would warn of it. Its builds are
# this script's own.
unset MAKEFLAGS MFLAGS MAKELEVEL
kinfo=$(KREL=$want KDIR= "$top/vm/kdir.sh") || exit 1
kdir=$(sed -n 1p <<<"$kinfo") krel=$(sed -n 2p <<<"$kinfo") root=$(sed -n 3p <<<"$kinfo")

rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
make -s -C "$top/kmod" dkms-source DKMS_SRC="$out/src" VERSION=build >/dev/null
# shellcheck disable=SC2086 # EXTRA is a list of arguments
if [ -z "$root" ]; then
	make -C "$kdir" M="$out/src" ${V:+V=1} ${EXTRA:-} modules > "$out/build.log" 2>&1
else
	mnt=/mnt/cfs-build
	mkdir -p "$root$mnt"
	unshare -m --propagation private sh -c \
		'mount -t proc proc "$0/proc" && mount --bind "$1" "$0$2" &&
		exec chroot "$0" make -C "$3" M="$2" $4 modules' \
		"$root" "$out/src" "$mnt" "${kdir#"$root"}" "${V:+V=1} ${EXTRA:-}" > "$out/build.log" 2>&1
fi || { tail -n 30 "$out/build.log" >&2; echo "kmod-build: the build for $krel failed (log: $out/build.log)" >&2; exit 1; }
if grep -qE 'warning:|error:' "$out/build.log"; then
	grep -E -A3 'warning:|error:' "$out/build.log" | head -n 40 >&2
	echo "kmod-build: the build for $krel warns (log: $out/build.log)" >&2
	exit 1
fi
cp "$out/src/composefs.ko" "$out/composefs.ko"
echo "$out/composefs.ko"
