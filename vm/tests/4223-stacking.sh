# SPDX-License-Identifier: GPL-2.0 OR MIT
# Stacking depth: the filesystems below a mount are its image's and its
# basedirs', and both count. An image on a composefs mount stacks on it:
# an image inside an image (depth 2) mounts, one level more is refused
# with a reason in the kernel log, and so is a basedir on a depth-2 mount.
SUITE=stacking
. /tests/lib.sh
need /disk/nest1.cfs /disk/store-nest

S=/disk/store-nest
expect depth-1 OK "$(cfsmount /disk/nest1.cfs /mnt/n1 basedir=$S,verity_check=0)"
expect depth-2 OK "$(cfsmount /mnt/n1/nest2.cfs /mnt/n2 basedir=$S,verity_check=0)"
expect depth-2-reads OK "$(readfile /mnt/n2/nest3.cfs)"
dmesg -c > /dev/null
expect image-depth-3-refused EINVAL "$(cfsmount /mnt/n2/nest3.cfs /mnt/n3 basedir=$S,verity_check=0)"
if dmesg | grep -q 'nest3.cfs: the image or a basedir is on filesystems stacked too deep (3 levels, at most 2)'; then
	pass image-depth-3-reason
else
	fail image-depth-3-reason "no reason in dmesg: $(dmesg | tail -n 2 | tr '\n' ' ')"
fi
grep -q ' /mnt/n3 ' /proc/mounts && { fail image-depth-3-not-mounted "mounted"; umount /mnt/n3; } ||
	pass image-depth-3-not-mounted
dmesg -c > /dev/null
expect basedir-depth-3-refused EINVAL "$(cfsmount /disk/small.cfs /mnt/n3 basedir=/mnt/n2,verity_check=0)"
if dmesg | grep -q 'basedir: on filesystems stacked too deep (3 levels, at most 2)'; then
	pass basedir-depth-3-reason
else
	fail basedir-depth-3-reason "no reason in dmesg: $(dmesg | tail -n 2 | tr '\n' ' ')"
fi
# A basedir one level down is as deep as the image one level down.
expect basedir-depth-2 OK "$(cfsmount /disk/small.cfs /mnt/n3 basedir=/mnt/n1,verity_check=0)"
umount /mnt/n3
umount /mnt/n2 && pass umount-2 || fail umount-2 busy
umount /mnt/n1 && pass umount-1 || fail umount-1 busy
