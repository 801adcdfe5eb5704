# SPDX-License-Identifier: GPL-2.0 OR MIT
# File handles: a handle carries the inode's st_ino and a MAC keyed per
# mount, so forged handles (another inode's number, a flipped bit, zeros,
# a short one) give ESTALE while real ones open; a directory handle
# resolves after the dentries and inodes were dropped, through the
# parents the lookups recorded.
SUITE=fhandle
. /tests/lib.sh
need /disk/rich.cfs

M=/mnt/fh
expect mount OK "$(cfsmount /disk/rich.cfs $M basedir=/disk/store-rich,verity_check=0)"
expect forged-file OK "$(cfs-vmtool fhandle-forge $M $M/hello.txt $M/random.bin)"
expect forged-empty-file OK "$(cfs-vmtool fhandle-forge $M $M/empty $M/hello.txt)"
expect forged-dir OK "$(cfs-vmtool fhandle-forge $M $M/sub/inner $M/sub)"
expect file-handle-content OK "$(cfs-vmtool fhandle $M $M/sub/inner/hello-hardlink2)"
expect dir-handle-after-drop OK "$(cfs-vmtool fhandle-dir $M $M/sub/inner)"
expect dir-handle-after-drop-again OK "$(cfs-vmtool fhandle-dir $M $M/sub)"
umount $M && pass umount || fail umount busy
