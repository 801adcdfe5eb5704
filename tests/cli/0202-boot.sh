#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A Debian 12 boots from a v1 composefs root in QEMU, with Debian's kernel
# and the initramfs its initramfs-tools made with the packages installed
# (vm/boot-test.sh --quick: one boot; make vm-boot runs the second boot,
# composefs 1.0, EIO and every refusal). Reaches multi-user, / is composefs
# with the digest and verity_check=2, a program of the image runs, /etc and
# /var are the repository's state.
# test: long (two boots in QEMU, some 20 minutes)
. "$(dirname "$0")/../lib/common.sh"
case $CFSCTL in
*/san/*) skip "the boot runs the packaged cfsctl, not this one: the normal run tests it" ;;
esac
deb=$(test_debs) || exit 1
CFS_BOOT_DEBS=$deb "$TOP/vm/boot-test.sh" --quick > "$T/out" 2>&1
rc=$?
cat "$T/out"
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/out")"
[ $rc -eq 0 ] || fail "the composefs boot failed (logs in build/vm-boot/)"
