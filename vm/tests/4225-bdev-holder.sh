# SPDX-License-Identifier: GPL-2.0 OR MIT
# A block device as the image is opened as erofs opens its device: held
# exclusively while mounted, with the superblock as its holder (so the
# device's freeze and removal reach the mount), and the superblock is the
# device's (its st_dev is the device's number). An O_EXCL open of the
# device, as mkfs does, fails while it is mounted and works after umount.
# A second mount of the device gets the same superblock, so it must ask
# for the same options.
SUITE=bdev-holder
. /tests/lib.sh
need /disk/small.cfs

M=/mnt/bdh M2=/mnt/bdh2
opts=basedir=/disk/store,verity_check=0
dev=$(losetup -f)
if ! losetup -r $dev /disk/small.cfs; then
	fail losetup "losetup -r $dev /disk/small.cfs"
	exit 0
fi
expect excl-before OK "$(cfs-vmtool open-excl $dev)"
expect mount OK "$(cfsmount $dev $M $opts)"
expect read "small file a" "$(cat $M/a)"
expect excl-mounted EBUSY "$(cfs-vmtool open-excl $dev)"
# mountinfo's third field is the superblock's st_dev.
want=$(cat /sys/class/block/${dev#/dev/}/dev)
got=$(awk -v m=$M '$5 == m { print $3 }' /proc/self/mountinfo)
expect sb-is-device "$want" "$got"

expect second-mount-same OK "$(cfsmount $dev $M2 $opts)"
expect second-mount-reads "small file a" "$(cat $M2/a)"
umount $M2 2> /dev/null
dmesg -c > /dev/null
expect second-mount-other EBUSY "$(cfsmount $dev $M2 basedir=/disk,verity_check=0)"
case $(dmesg | grep composefs | tail -n 1) in
*"mounted already with other options"*) pass second-mount-other-message ;;
*) fail second-mount-other-message "$(dmesg | grep composefs | tail -n 1)" ;;
esac
grep -q " $M2 " /proc/mounts && { fail second-mount-other-not-mounted mounted; umount $M2; } ||
	pass second-mount-other-not-mounted
expect still-reads "small file a" "$(cat $M/a)"

umount $M && pass umount || fail umount busy
expect excl-after OK "$(cfs-vmtool open-excl $dev)"
losetup -d $dev
