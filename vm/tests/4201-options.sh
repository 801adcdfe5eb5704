# SPDX-License-Identifier: GPL-2.0 OR MIT
# Module registration and mount options: good options show in /proc/mounts,
# bad ones fail the mount with a reason in the kernel log.
SUITE=options
. /tests/lib.sh

if grep -qw composefs /proc/filesystems; then pass registered; else fail registered "not in /proc/filesystems"; fi

expect missing-image ENOENT "$(cfsmount /disk/no-such.cfs /mnt/o basedir=/disk)"
expect not-an-image EUCLEAN "$(cfsmount /disk/junk /mnt/o basedir=/disk)"
mkfifo /tmp/fifo-image
expect fifo-image-no-hang EINVAL "$(timeout 20 cfs-vmtool mount /tmp/fifo-image /mnt/o basedir=/disk)"
expect directory-image EINVAL "$(cfsmount /disk /mnt/o basedir=/disk)"
need /disk/small.cfs

expect verity-check-3 EINVAL "$(cfsmount /disk/small.cfs /mnt/o verity_check=3)"
if dmesg | grep -q 'verity_check: 3 is not 0, 1 or 2'; then pass errorf-logged; else fail errorf-logged "no reason in dmesg"; fi
expect verity-check-word EINVAL "$(cfsmount /disk/small.cfs /mnt/o verity_check=yes)"
expect digest-short EINVAL "$(cfsmount /disk/small.cfs /mnt/o digest=abcd)"
expect digest-nonhex EINVAL "$(cfsmount /disk/small.cfs /mnt/o digest=$(printf 'g%.0s' $(seq 64)))"
expect unknown-option EINVAL "$(cfsmount /disk/small.cfs /mnt/o colour=blue)"
expect basedir-missing ENOENT "$(cfsmount /disk/small.cfs /mnt/o basedir=/disk/no-such-dir)"
expect basedir-empty-part EINVAL "$(cfsmount /disk/small.cfs /mnt/o basedir=/disk/store::/disk)"
expect basedir-not-dir ENOTDIR "$(cfsmount /disk/small.cfs /mnt/o basedir=/disk/small.cfs)"

expect mount-ok OK "$(cfsmount /disk/small.cfs /mnt/o basedir=/disk/store:/disk/storeA,verity_check=0)"
line=$(grep ' /mnt/o ' /proc/mounts)
case "$line" in
*"composefs ro,"*"basedir=/disk/store:/disk/storeA"*"verity_check=0"*) pass proc-mounts ;;
*) fail proc-mounts "got '$line'" ;;
esac
# Remount changes nothing: a changed value is refused, an unchanged one
# (as busybox and util-linux pass back from /proc/mounts) is accepted.
expect remount-plain OK "$(cfs-vmtool remount /mnt/o '')"
expect remount-same-values OK "$(cfs-vmtool remount /mnt/o basedir=/disk/store:/disk/storeA,verity_check=0)"
expect remount-verity-check-changed EINVAL "$(cfs-vmtool remount /mnt/o verity_check=2)"
if dmesg | grep -q 'verity_check: cannot change on remount'; then pass remount-reason-logged; else fail remount-reason-logged "no reason in dmesg"; fi
expect remount-basedir-changed EINVAL "$(cfs-vmtool remount /mnt/o basedir=/disk/store)"
expect remount-digest-added EINVAL "$(cfs-vmtool remount /mnt/o digest=$(printf '0%.0s' $(seq 64)))"
if mount -o remount,verity_check=2 /mnt/o 2>/dev/null; then
	fail busybox-remount-changed "remount,verity_check=2 succeeded"
else
	pass busybox-remount-changed
fi
expect busybox-remount-ro OK "$(mount -o remount,ro /mnt/o 2>/dev/null && echo OK)"
case "$(grep ' /mnt/o ' /proc/mounts)" in
*verity_check=0*) pass remount-kept-value ;;
*) fail remount-kept-value "$(grep ' /mnt/o ' /proc/mounts)" ;;
esac
expect read-only-remount-rw-stays-ro "ro" "$(mount -o remount,rw /mnt/o 2>/dev/null; grep ' /mnt/o ' /proc/mounts | awk '{print substr($4,1,2)}')"
umount /mnt/o && pass umount || fail umount "umount failed"

expect default-verity-check OK "$(cfsmount /disk/small.cfs /mnt/o basedir=/disk/store)"
case "$(grep ' /mnt/o ' /proc/mounts)" in
*verity_check=0*) pass default-is-0 ;;
*) fail default-is-0 "$(grep ' /mnt/o ' /proc/mounts)" ;;
esac
umount /mnt/o

# cfsctl mount is stricter by default: it passes verity_check=1.
if [ -x /bin/cfsctl ] && cfsctl mount --help >/dev/null 2>&1; then
	if cfsctl mount --basedir /disk/store /disk/small.cfs /mnt/o; then
		case "$(grep ' /mnt/o ' /proc/mounts)" in
		*verity_check=1*) pass cfsctl-default-is-1 ;;
		*) fail cfsctl-default-is-1 "$(grep ' /mnt/o ' /proc/mounts)" ;;
		esac
		umount /mnt/o
	else
		fail cfsctl-default-is-1 "cfsctl mount failed"
	fi
else
	skip cfsctl-default-is-1 "no cfsctl in the guest"
fi

# Not mountable from a user namespace (that would expose device nodes).
if unshare -U -r -m true 2>/dev/null; then
	expect userns-refused EPERM "$(unshare -U -r -m cfs-vmtool mount /disk/small.cfs /mnt/o basedir=/disk/store)"
else
	skip userns-refused "unshare -U not available"
fi
