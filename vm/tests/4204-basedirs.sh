# SPDX-License-Identifier: GPL-2.0 OR MIT
# Several basedirs with fallback; a missing object fails at open (ENOENT),
# not at lookup; backing paths stay beneath the basedir and never follow
# symlinks; a backing file must be a regular file of the recorded size.
SUITE=basedirs
. /tests/lib.sh
need /disk/multi.cfs /disk/plain.cfs

M=/mnt/multi
expect mount OK "$(cfsmount /disk/multi.cfs $M basedir=/disk/storeA:/disk/storeB,verity_check=0)"
expect first-basedir "in store A" "$(cat $M/m1)"
expect fallback "in store B" "$(cat $M/m2)"
expect missing-lookup-ok 8 "$(stat -c %s $M/m3)"
expect missing-open "open ENOENT" "$(readfile $M/m3)"
umount $M
expect one-basedir OK "$(cfsmount /disk/multi.cfs $M basedir=/disk/storeA,verity_check=0)"
expect one-basedir-missing "open ENOENT" "$(readfile $M/m2)"
umount $M
expect no-basedir OK "$(cfsmount /disk/multi.cfs $M verity_check=0)"
expect no-basedir-open "open ENOENT" "$(readfile $M/m1)"
expect no-basedir-bsize 4096 "$(cfs-vmtool statfs $M | sed 's/.*bsize=//')"
umount $M

# A basedir where the object's directory is a regular file (ENOTDIR) does
# not hold the object either: the search goes on to the next one.
obj=$(find /disk/storeB -type f | head -n 1)
xx=$(basename "$(dirname "$obj")")
rm -rf $W/notdir && mkdir -p $W/notdir && : > $W/notdir/$xx
expect notdir-mount OK "$(cfsmount /disk/multi.cfs $M basedir=$W/notdir:/disk/storeA:/disk/storeB,verity_check=0)"
expect notdir-fallback "in store B" "$(cat $M/m2)"
expect notdir-first "in store A" "$(cat $M/m1)"
expect notdir-missing "open ENOENT" "$(readfile $M/m3)"
umount $M
expect notdir-only-mount OK "$(cfsmount /disk/multi.cfs $M basedir=$W/notdir,verity_check=0)"
expect notdir-only "open ENOENT" "$(readfile $M/m2)"
umount $M

M=/mnt/plain
expect plain-mount OK "$(cfsmount /disk/plain.cfs $M basedir=/disk/plain,verity_check=0)"
expect by-path "plain file" "$(cat $M/file)"
expect dotdot "open EXDEV" "$(readfile $M/dotdot)"
expect dotdot-inner "open EXDEV" "$(readfile $M/dotdot2)"
expect absolute-is-beneath "plain file" "$(cat $M/absolute)"
expect absolute-dotdot "open EXDEV" "$(readfile $M/absolute-dotdot)"
expect symlink "open ELOOP" "$(readfile $M/symlink)"
expect dir-symlink "open ELOOP" "$(readfile $M/dirsymlink)"
expect not-regular "open EIO" "$(readfile $M/notreg)"
expect wrong-size "open EIO" "$(readfile $M/wrongsize)"
umount $M
