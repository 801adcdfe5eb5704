# SPDX-License-Identifier: GPL-2.0 OR MIT
# What the backing file decides: O_DIRECT follows the composefs file (set
# or cleared with fcntl(F_SETFL), the backing file's flag changes too, so
# an unaligned read fails with EINVAL exactly while O_DIRECT is set), and
# an empty file opens with O_DIRECT. SEEK_DATA and SEEK_HOLE find the
# holes of a sparse object, and st_blocks is the object's once the file
# has been opened (the size in 512-byte units before).
SUITE=backing
. /tests/lib.sh
need /disk/small.cfs /disk/rich.cfs

M=/mnt/odirect
expect mount OK "$(cfsmount /disk/small.cfs $M basedir=/disk/store,verity_check=0)"
expect aligned OK "$(cfs-vmtool direct $M/b)"
expect fcntl OK "$(cfs-vmtool direct-fcntl $M/b)"
umount $M

if command -v cfsctl > /dev/null; then
	P=$W/odirect
	rm -rf $P && mkdir -p $P/src
	: > $P/src/empty
	cfsctl build --digest-store $P/store $P/src $P/img.cfs > /dev/null
	expect empty-mount OK "$(cfsmount $P/img.cfs $M verity_check=0)"
	expect empty-open OK "$(cfs-vmtool open-direct $M/empty)"
	umount $M
	rm -rf $P
else
	skip empty-open "no cfsctl in the guest"
fi

M=/mnt/backing
expect rich-mount OK "$(cfsmount /disk/rich.cfs $M basedir=/disk/store-rich,verity_check=0)"
obj=$(find /disk/store-rich -type f -size +8000000)
if [ -f "$obj" ]; then
	size=$(stat -c %s $M/sparse)
	expect blocks-before-open $(((size + 511) / 512)) "$(stat -c %b $M/sparse)"
	expect seek "$(cfs-vmtool seek $obj)" "$(cfs-vmtool seek $M/sparse)"
	expect blocks-after-open "$(stat -c %b $obj)" "$(stat -c %b $M/sparse)"
	[ "$(stat -c %b $obj)" -lt $((size / 512 / 2)) ] && pass object-is-sparse ||
		fail object-is-sparse "$obj has $(stat -c %b $obj) blocks"
else
	fail sparse-object "no object over 4 GiB in /disk/store-rich"
fi
umount $M
