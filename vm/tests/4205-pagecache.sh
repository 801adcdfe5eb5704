# SPDX-License-Identifier: GPL-2.0 OR MIT
# Shared page cache: two images reaching one 4 MiB object cache its data
# once, on the object. Measured with mincore and with /proc/meminfo.
SUITE=pagecache
. /tests/lib.sh
need /disk/share1.cfs /disk/share2.cfs /disk/share.digest

OBJ=/disk/store/$(object "$(cat /disk/share.digest)")
expect mount1 OK "$(cfsmount /disk/share1.cfs /mnt/s1 basedir=/disk/store,verity_check=0)"
expect mount2 OK "$(cfsmount /disk/share2.cfs /mnt/s2 basedir=/disk/store,verity_check=0)"
F1=/mnt/s1/dir1/big-1.bin
F2=/mnt/s2/dir2/big-2.bin

sync
echo 3 > /proc/sys/vm/drop_caches
expect cold "0 1024" "$(cfs-vmtool resident $OBJ)"
cat $F1 > /dev/null
expect object-cached-after-image1 "1024 1024" "$(cfs-vmtool resident $OBJ)"
expect image2-already-cached "1024 1024" "$(cfs-vmtool resident $F2)"
before=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
cat $F2 > /dev/null
after=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
grow=$((after - before))
if [ $grow -lt 1024 ]; then
	pass "image2-read-adds-no-cache (${grow} KiB)"
else
	fail image2-read-adds-no-cache "Cached grew by ${grow} KiB reading 4096 KiB"
fi
cmp -s $F1 $F2 && pass same-content || fail same-content "differs"

# fadvise through composefs reaches the object's cache.
cfs-vmtool evict $F1
expect fadvise-dontneed "0 1024" "$(cfs-vmtool resident $OBJ)"
umount /mnt/s1
umount /mnt/s2
