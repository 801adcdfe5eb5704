# SPDX-License-Identifier: GPL-2.0 OR MIT
# File handles: a handle carries the inode's st_ino and a MAC keyed per
# mount, so forged handles (another inode's number, a flipped bit, zeros,
# a short one) give ESTALE while real ones open; a directory handle
# resolves after the dentries and inodes were dropped, through the
# parents the lookups recorded. Then the backing file an inode keeps from
# its first open: an object renamed away, deleted, replaced or moved with
# its directory is seen by opens once the inode has been evicted, not
# before (as overlayfs's lower layers), and nothing stays pinned after
# umount.
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

SUITE=opencache
S=/tmp/oc-store
mkdir -p $S
mount -t tmpfs tmpfs $S
cp -a /disk/store/. $S/
M=/mnt/oc
expect mount OK "$(cfsmount /disk/small.cfs $M basedir=$S,verity_check=0)"
hex=$(sed -n 's/ b$//p' /disk/small.digests)
OBJ=$S/$(object $hex)
orig=$(md5sum < $OBJ)
zeros=$(head -c 65536 /dev/zero | md5sum)
# The last close of a file may finish in a workqueue a tick later (a
# delayed fput), and a dentry and an inode each get a second chance on
# their LRU (a referenced one is only marked): wait a moment, and drop the
# caches a few times.
evict() { sleep 1; for i in 1 2 3 4; do echo 2 > /proc/sys/vm/drop_caches; done; }
expect first-open OK "$(readfile $M/b)"
mv $OBJ $OBJ.away
expect renamed-away-kept OK "$(readfile $M/b)"
evict
expect renamed-away-evicted "open ENOENT" "$(readfile $M/b)"
mv $OBJ.away $OBJ
expect renamed-back OK "$(readfile $M/b)"
cp $OBJ $S/saved
head -c 65536 /dev/zero > $S/zeros
mv $S/zeros $OBJ
expect replaced-kept "$orig" "$(md5sum < $M/b)"
evict
expect replaced-evicted "$zeros" "$(md5sum < $M/b)"
rm $OBJ
expect deleted-kept "$zeros" "$(md5sum < $M/b)"
evict
expect deleted-evicted "open ENOENT" "$(readfile $M/b)"
mv $S/saved $OBJ
expect restored "$orig" "$(md5sum < $M/b)"
d=$(dirname $OBJ)
mv $d $d.moved
expect dir-moved-kept OK "$(readfile $M/b)"
evict
expect dir-moved-evicted "open ENOENT" "$(readfile $M/b)"
mv $d.moved $d
expect dir-back OK "$(readfile $M/b)"
umount $M && pass umount || fail umount busy
# The kept files went with the inodes: the store's filesystem unmounts.
umount $S && pass store-unpinned || fail store-unpinned "$(umount $S 2>&1)"

# The same for a backing path of more levels (a/b/c/d/file) and for one
# with "." and "..".
P=/tmp/oc-plain
mkdir -p $P
mount -t tmpfs tmpfs $P
cp -a /disk/plain/. $P/
expect deep-mount OK "$(cfsmount /disk/plain.cfs $M basedir=$P,verity_check=0)"
expect deep-first "plain file" "$(cat $M/deep)"
printf 'other text\n' > $P/other
mv $P/other $P/a/b/c/d/file
expect deep-replaced-kept "plain file" "$(cat $M/deep)"
evict
expect deep-replaced-evicted "other text" "$(cat $M/deep)"
expect dotted-first "plain file" "$(cat $M/dotted)"
printf 'third text\n' > $P/other
mv $P/other $P/file
expect dotted-replaced-kept "plain file" "$(cat $M/dotted)"
evict
expect dotted-replaced-evicted "third text" "$(cat $M/dotted)"
umount $M && pass deep-umount || fail deep-umount busy
umount $P && pass deep-store-unpinned || fail deep-store-unpinned "$(umount $P 2>&1)"
