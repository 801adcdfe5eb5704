# SPDX-License-Identifier: GPL-2.0 OR MIT
# The rich tree: the mount must match the source tree field by field (every
# path, type, mode, uid, gid, size, mtime with nanoseconds, nlink, rdev,
# symlink target, content and xattrs), plus directory and xattr API probes.
SUITE=rich
. /tests/lib.sh
need /disk/rich.cfs /disk/rich.expected

M=/mnt/rich
expect mount OK "$(cfsmount /disk/rich.cfs $M basedir=/disk/store-rich,verity_check=0)"
cfs-vmtool walk $M > /tmp/rich.got 2>&1
if cmp -s /tmp/rich.got /disk/rich.expected; then
	pass "tree-matches-source ($(wc -l < /tmp/rich.got) paths)"
else
	fail tree-matches-source "$(diff /disk/rich.expected /tmp/rich.got | grep '^[-+]/' | head -n 4 | cut -c1-160 | tr '\n' '|')"
fi

# Two walkers at once (the VM has two CPUs): same answers, no races.
cfs-vmtool walk $M > /tmp/rich.p1 2>&1 &
cfs-vmtool walk $M > /tmp/rich.p2 2>&1
wait
if cmp -s /tmp/rich.p1 /disk/rich.expected && cmp -s /tmp/rich.p2 /disk/rich.expected; then
	pass parallel-walks
else
	fail parallel-walks "a concurrent walk differs from the source"
fi

expect getdents-small-buffer 3000 "$(cfs-vmtool getdents $M/big)"
expect seekdir-telldir "OK 3002" "$(cfs-vmtool seekdir $M/big)"
expect lookup-in-big "in big" "$(cat $M/big/entry-1500)"
expect lookup-missing "No such file or directory" "$(cat $M/big/entry-9999 2>&1 | sed 's/.*: //')"
expect deep-file bottom "$(cat $M/deep/l1/l2/l3/l4/l5/l6/l7/l8/l9/l10/l11/l12/l13/l14/l15/l16/l17/l18/l19/l20/l21/l22/l23/l24/l25/l26/l27/l28/l29/l30/l31/l32/l33/l34/l35/l36/l37/l38/l39/l40/l41/l42/l43/l44/l45/l46/l47/l48/l49/l50/l51/l52/l53/l54/l55/l56/l57/l58/l59/l60/file)"
expect hardlink-one-inode "$(stat -c %i $M/hello.txt)" "$(stat -c %i $M/sub/hello-hardlink)"
expect hardlink-nlink 3 "$(stat -c %h $M/sub/inner/hello-hardlink2)"
expect symlink-size 3000 "$(stat -c %s $M/long-target-link)"
expect sparse-past-4g past4g "$(dd if=$M/sparse bs=1 skip=$((4 * 1024 * 1024 * 1024 + 12345)) count=6 2>/dev/null)"
expect sparse-end end "$(tail -c 3 $M/sparse)"
expect whiteout "c 0 0" "$(stat -c '%F' $M/whiteout | cut -c1) $(stat -c '%t %T' $M/whiteout)"
expect chardev-works "" "$(head -c 4 $M/chardev)"
expect mmap-empty-file OK "$(cfs-vmtool mmap-empty $M/empty)"
expect xattr-erange OK "$(cfs-vmtool xattr-erange $M/hello.txt user.plain)"
expect ino-in-readdir "$(stat -c %i $M/hello.txt)" "$(ls -i $M | awk '$2 == "hello.txt" {print $1}')"
umount $M && pass umount || fail umount "busy"
