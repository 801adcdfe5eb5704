# SPDX-License-Identifier: GPL-2.0 OR MIT
# What the backing file decides: O_DIRECT follows the composefs file (set
# or cleared with fcntl(F_SETFL), the backing file's flag changes too, so
# an unaligned read fails with EINVAL exactly while O_DIRECT is set), and
# an empty file opens with O_DIRECT.
SUITE=backing
. /tests/lib.sh
need /disk/small.cfs

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
