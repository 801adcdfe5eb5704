#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The module that 'dkms build' made on the host (vm/dkms-build.sh, from
# 'make -C kmod dkms-source' and kmod/dkms.conf) loads into this kernel,
# registers the filesystem and unloads; then the harness's own build is
# loaded again for the other tests.
. /tests/lib.sh
SUITE=dkms
ko=/lib/modules/composefs-dkms.ko
if [ ! -f "$ko" ]; then
	status=$(cat /lib/modules/dkms.status 2>/dev/null)
	case $status in
	FAIL*) fail build "${status#FAIL }" ;;
	*) skip build "${status#SKIP }" ;;
	esac
	exit 0
fi
if ! rmmod composefs; then
	fail load "cannot unload the harness's composefs.ko first"
	exit 0
fi
if insmod "$ko"; then
	pass load
	if grep -qw composefs /proc/filesystems; then pass registered; else
		fail registered "no composefs in /proc/filesystems"; fi
	if rmmod composefs; then pass unload; else fail unload "rmmod failed"; fi
else
	fail load "insmod $ko failed: $(dmesg | tail -n 1)"
fi
insmod /lib/modules/composefs.ko || fail reload "cannot load composefs.ko again"
