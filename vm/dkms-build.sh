#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Builds composefs.ko the way a user's 'dkms install' does: 'make -C kmod
# dkms-source' into a scratch source tree, then 'dkms add' and 'dkms build'
# in a scratch dkms tree, for release KREL against the build tree KDIR
# (those of vm/kdir.sh). Nothing outside WORKDIR is written. Prints the
# built module's path; the VM tests load it (vm/tests/4200-dkms.sh).
#
# Usage: vm/dkms-build.sh WORKDIR KDIR KREL
set -euo pipefail
work=$1 kdir=$2 krel=$3
top=$(cd "$(dirname "$0")/.." && pwd)
# A make that runs this script beside other jobs passes its jobserver in
# MAKEFLAGS without the descriptors; kbuild would warn of it. Its builds are
# this script's own.
unset MAKEFLAGS MFLAGS MAKELEVEL
command -v dkms >/dev/null || { echo "dkms is not installed (Debian package dkms)" >&2; exit 1; }
version=0.0.test
rm -rf "$work"
mkdir -p "$work/source" "$work/tree"
make -s -C "$top/kmod" dkms-source DKMS_SRC="$work/source/composefs-$version" \
	VERSION="$version" >/dev/null
dkms add -m composefs -v "$version" --dkmstree "$work/tree" --sourcetree "$work/source" >&2
if ! dkms build -m composefs -v "$version" -k "$krel" --kernelsourcedir "$kdir" \
	--dkmstree "$work/tree" --sourcetree "$work/source" >&2; then
	cat "$work/tree/composefs/$version/build/make.log" >&2 2>/dev/null || true
	exit 1
fi
ko=$work/tree/composefs/$version/$krel/$(uname -m)/module/composefs.ko
[ -f "$ko" ] || { echo "dkms build left no $ko" >&2; exit 1; }
echo "$ko"
