# SPDX-License-Identifier: GPL-2.0 OR MIT
# File operations: mmap (shared, private, refused writable-shared),
# sendfile and splice, file handles, EROFS on every write, statfs.
SUITE=fileops
. /tests/lib.sh
need /disk/small.cfs

M=/mnt/ops
expect mount OK "$(cfsmount /disk/small.cfs $M basedir=/disk/store,verity_check=0)"
expect mmap OK "$(cfs-vmtool mmap $M/b)"
expect o-direct OK "$(cfs-vmtool direct $M/b)"
expect sendfile-splice OK "$(cfs-vmtool sendfile $M/b)"
expect file-handle OK "$(cfs-vmtool fhandle $M $M/sub/c)"
# The format has no parent links: a directory handle resolves only while the
# directory is in the dcache, and fails cleanly (ESTALE) otherwise.
case "$(cfs-vmtool fhandle-dir $M $M/sub)" in
OK | ESTALE) pass dir-handle-clean ;;
*) fail dir-handle-clean "$(cfs-vmtool fhandle-dir $M $M/sub)" ;;
esac
expect erofs OK "$(cfs-vmtool erofs $M/a $M/sub)"
expect statfs "type=c078629a namelen=255" "$(cfs-vmtool statfs $M | cut -d' ' -f1,2)"
expect empty-dir-listing "c d" "$(ls $M/sub | tr '\n' ' ' | sed 's/ $//')"
case "$(cfs-vmtool walk $M | grep '^/a ')" in
*xattr:user.tag=736d616c6c*) pass xattr-get ;;
*) fail xattr-get "$(cfs-vmtool walk $M | grep '^/a ')" ;;
esac
umount $M && pass umount || fail umount busy

# composefs as the lower layer of overlayfs, the container use case.
expect overlay-lower-mount OK "$(cfsmount /disk/small.cfs $M basedir=/disk/store,verity_check=0)"
mkdir -p /tmp/ovl/upper /tmp/ovl/work /mnt/ovl
if mount -t overlay overlay -o lowerdir=$M,upperdir=/tmp/ovl/upper,workdir=/tmp/ovl/work /mnt/ovl; then
	expect overlay-read "small file a" "$(cat /mnt/ovl/a)"
	echo changed > /mnt/ovl/a
	expect overlay-copy-up changed "$(cat /mnt/ovl/a)"
	expect overlay-lower-unchanged "small file a" "$(cat $M/a)"
	umount /mnt/ovl
else
	fail overlay-mount "mount -t overlay failed"
fi
umount $M
