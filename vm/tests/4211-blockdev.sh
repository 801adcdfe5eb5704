# SPDX-License-Identifier: GPL-2.0 OR MIT
# A block device as the image: busybox mount, which puts a loop device
# under a regular file, a loop device made by losetup, and an image
# written to the start of a larger device, as on a partition. Each mount
# must list as the file's mount does. digest= needs the image's
# fs-verity, so with a device it is refused with a message that says so.
SUITE=blockdev
. /tests/lib.sh
need /disk/small.cfs

F=/mnt/bd-file M=/mnt/bd
opts=basedir=/disk/store,verity_check=0
expect file-mount OK "$(cfsmount /disk/small.cfs $F $opts)"
want=$(cfs-vmtool walk $F)

mkdir -p $M
if mount -t composefs -o ro,$opts /disk/small.cfs $M; then
	src=$(awk -v m=$M '$2 == m { print $1 }' /proc/mounts)
	case $src in
	/dev/loop*) pass busybox-mount-loops ;;
	*) fail busybox-mount-loops "source is '$src', not a loop device" ;;
	esac
	expect busybox-walk "$want" "$(cfs-vmtool walk $M)"
	expect busybox-read "small file a" "$(cat $M/a)"
	umount $M
else
	fail busybox-mount "mount -t composefs /disk/small.cfs failed"
fi

dev=$(losetup -f)
if losetup -r $dev /disk/small.cfs; then
	expect losetup-mount OK "$(cfsmount $dev $M $opts)"
	expect losetup-walk "$want" "$(cfs-vmtool walk $M)"
	umount $M 2> /dev/null
	expect losetup-digest EINVAL "$(cfsmount $dev $M $opts,digest=$(printf '0%.0s' $(seq 64)))"
	case $(dmesg | grep composefs | tail -n 1) in
	*"pass the image file"*) pass losetup-digest-message ;;
	*) fail losetup-digest-message "$(dmesg | grep composefs | tail -n 1)" ;;
	esac
	losetup -d $dev
else
	fail losetup "losetup -r $dev /disk/small.cfs"
fi

# An image written to a device larger than itself: the rest reads as zeros.
rm -f $W/part.img
truncate -s 4M $W/part.img
dd if=/disk/small.cfs of=$W/part.img conv=notrunc 2> /dev/null
dev=$(losetup -f)
if losetup -r $dev $W/part.img; then
	expect partition-mount OK "$(cfsmount $dev $M $opts)"
	expect partition-walk "$want" "$(cfs-vmtool walk $M)"
	umount $M 2> /dev/null
	losetup -d $dev
else
	fail partition-losetup "losetup -r $dev $W/part.img"
fi
rm -f $W/part.img

# Neither a file nor a block device: refused at once (a FIFO would block).
mkfifo $W/fifo
expect fifo EINVAL "$(cfsmount $W/fifo $M $opts)"
rm -f $W/fifo
umount $F
