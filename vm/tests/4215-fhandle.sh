# SPDX-License-Identifier: GPL-2.0 OR MIT
# File handles: a handle carries the inode's st_ino and a MAC keyed per
# mount, so forged handles (another inode's number, a flipped bit, zeros,
# a short one) give ESTALE while real ones open; a directory handle
# resolves after the dentries and inodes were dropped, through the
# parents the lookups recorded. Then the backing path an inode keeps from
# its last open: the next open sees an object renamed away, deleted,
# replaced or moved with its directory, whether the path is short enough
# for the dentries' sequence counts or not, and nothing stays pinned after
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
expect first-open OK "$(readfile $M/b)"
expect kept-path-open OK "$(readfile $M/b)"
mv $OBJ $OBJ.away
expect renamed-away "open ENOENT" "$(readfile $M/b)"
mv $OBJ.away $OBJ
expect renamed-back OK "$(readfile $M/b)"
cp $OBJ $S/saved
rm $OBJ
expect deleted "open ENOENT" "$(readfile $M/b)"
head -c 65536 /dev/zero > $S/zeros
mv $S/zeros $OBJ
expect replaced "$(head -c 65536 /dev/zero | md5sum)" "$(cat $M/b | md5sum)"
mv $S/saved $OBJ
expect restored "$(cat /disk/store/$(object $hex) | md5sum)" "$(cat $M/b | md5sum)"
d=$(dirname $OBJ)
mv $d $d.moved
expect dir-moved "open ENOENT" "$(readfile $M/b)"
mv $d.moved $d
expect dir-back OK "$(readfile $M/b)"
umount $M && pass umount || fail umount busy
# The kept paths went with the inodes: the store's filesystem unmounts.
umount $S && pass store-unpinned || fail store-unpinned "$(umount $S 2>&1)"

# The same for backing paths of more levels than the module keeps the
# dentries' sequence counts of (a/b/c/d/file: checked name by name at each
# open), and for one with "." and ".." (resolved at every open).
P=/tmp/oc-plain
mkdir -p $P
mount -t tmpfs tmpfs $P
cp -a /disk/plain/. $P/
expect deep-mount OK "$(cfsmount /disk/plain.cfs $M basedir=$P,verity_check=0)"
expect deep-first "plain file" "$(cat $M/deep)"
expect deep-kept "plain file" "$(cat $M/deep)"
mv $P/a/b $P/a/b.moved
expect deep-dir-moved "open ENOENT" "$(readfile $M/deep)"
mv $P/a/b.moved $P/a/b
expect deep-dir-back "plain file" "$(cat $M/deep)"
printf 'other text\n' > $P/other
mv $P/other $P/a/b/c/d/file
expect deep-replaced "other text" "$(cat $M/deep)"
expect dotted-first "plain file" "$(cat $M/dotted)"
expect dotted-again "plain file" "$(cat $M/dotted)"
printf 'third text\n' > $P/other
mv $P/other $P/file
expect dotted-replaced "third text" "$(cat $M/dotted)"
umount $M && pass deep-umount || fail deep-umount busy
umount $P && pass deep-store-unpinned || fail deep-store-unpinned "$(umount $P 2>&1)"
