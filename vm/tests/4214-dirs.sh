# SPDX-License-Identifier: GPL-2.0 OR MIT
# Directories over many chunks (vm/dir-images.py): every name found and
# every name between them missing, on and around each chunk boundary and
# with names longer than the prefix the module keeps per chunk; readdir
# through small getdents buffers and seekdir while the open directory
# keeps its chunk; the sort rule across chunks; what one lookup reads of a
# directory of thousands of chunks; a directory under two names.
SUITE=dirs
. /tests/lib.sh
need /disk/dirs/dirs.cfs

D=/disk/dirs
M=/mnt/dirs
expect mount OK "$(cfsmount $D/dirs.cfs $M verity_check=0)"
for d in wide long; do
	n=$(wc -l < $D/$d.names)
	na=$(wc -l < $D/$d.absent)
	expect $d-lookup-all "ok=$n enoent=0 other=0" "$(cfs-vmtool lookups $M/$d $D/$d.names)"
	expect $d-lookup-absent "ok=0 enoent=$na other=0" "$(cfs-vmtool lookups $M/$d $D/$d.absent)"
	expect $d-readdir "$(cat $D/$d.names)" "$(ls $M/$d)"
	expect $d-getdents-small-buffer $n "$(cfs-vmtool getdents $M/$d)"
	expect $d-seekdir-telldir "OK $((n + 2))" "$(cfs-vmtool seekdir $M/$d)"
	# Cold: the inodes and the table are read again.
	echo 2 > /proc/sys/vm/drop_caches
	expect $d-lookup-cold "ok=$n enoent=0 other=0" "$(cfs-vmtool lookups $M/$d $D/$d.names)"
done

# huge/: a lookup binary-searches the chunk descriptors in the image and
# reads only the chunks it probes, so one lookup in a cold directory of
# thousands of chunks leaves a few windows of the image in the page cache,
# not the directory (which the module used to read whole into a table on
# its first lookup). Its chunks span 7.5 MiB, more than the 1 MiB that a
# directory's first use reads ahead when its chunks fit.
n=$(cat $D/huge.count)
expect huge-readdir $n "$(ls $M/huge | wc -l)"
expect huge-getdents-small-buffer $n "$(cfs-vmtool getdents $M/huge)"
ns=$(wc -l < $D/huge.sample)
expect huge-lookup-sample "ok=$ns enoent=0 other=0" "$(cfs-vmtool lookups $M/huge $D/huge.sample)"
umount $M
expect huge-mount OK "$(cfsmount $D/dirs.cfs $M verity_check=0)"
stat $M/huge > /dev/null
cfs-vmtool evict $D/dirs.cfs
chunks=$(cat $D/huge.pages)
if stat "$M/huge/$(cat $D/huge.mid)" > /dev/null; then
	res=$(cfs-vmtool resident $D/dirs.cfs | cut -d' ' -f1)
	if [ "$res" -lt $((chunks / 8)) ]; then
		pass "huge-one-lookup-reads-little ($res pages cached, the directory spans $chunks)"
	else
		fail huge-one-lookup-reads-little "$res pages cached after one lookup, the directory spans $chunks"
	fi
else
	fail huge-one-lookup-reads-little "stat of the middle name failed"
fi
umount $M && pass umount || fail umount busy

# Chunk 1 of wide/ repeats chunk 0's last name, or starts inside chunk 0's
# range: each chunk is sorted, the directory is not. wide/ is small enough
# to be indexed on first use, which checks every chunk's order: listing
# and lookup both refuse the directory, whatever name is asked.
name=$(cat $D/cross.name)
for v in cross-dup cross-order; do
	expect $v-mount OK "$(cfsmount $D/$v.cfs $M verity_check=0)"
	expect $v-getdents "getdents64: $M/wide: EUCLEAN" "$(cfs-vmtool getdents $M/wide)"
	expect $v-lookup "ok=0 enoent=0 other=1:EUCLEAN" "$(echo $name > /tmp/one; cfs-vmtool lookups $M/wide /tmp/one)"
	expect $v-lookup-first-chunk "ok=0 enoent=0 other=1:EUCLEAN" "$(echo f0000 > /tmp/one; cfs-vmtool lookups $M/wide /tmp/one)"
	expect $v-lookup-far "ok=0 enoent=0 other=1:EUCLEAN" "$(tail -n 1 $D/wide.names > /tmp/one; cfs-vmtool lookups $M/wide /tmp/one)"
	umount $M && pass $v-umount || fail $v-umount busy
done

# The same fault in huge/, too large to index: a listing refuses the
# directory when it reaches the fault; a lookup refuses every name whose
# search ends in a chunk next to the fault, found or not (the name at the
# fault, the first chunk's first name). A lookup reads only the chunks it
# probes and their neighbours, so a name far from the fault is still
# found, as in a filesystem that checks no order at all (erofs): the fault
# is refused where it is read.
expect huge-cross-mount OK "$(cfsmount $D/huge-cross.cfs $M verity_check=0)"
expect huge-cross-getdents "getdents64: $M/huge: EUCLEAN" "$(cfs-vmtool getdents $M/huge)"
expect huge-cross-lookup "ok=0 enoent=0 other=1:EUCLEAN" "$(cfs-vmtool lookups $M/huge $D/huge-cross.name)"
expect huge-cross-lookup-first-chunk "ok=0 enoent=0 other=1:EUCLEAN" "$(head -n 1 $D/huge.sample > /tmp/one; cfs-vmtool lookups $M/huge /tmp/one)"
expect huge-cross-lookup-far "ok=1 enoent=0 other=0" "$(cfs-vmtool lookups $M/huge $D/huge.last)"
umount $M && pass huge-cross-umount || fail huge-cross-umount busy

# b/ names a/'s inode: the second name is refused, however the two are
# reached, and a/ keeps its name.
expect dirlink-mount OK "$(cfsmount $D/dirlink.cfs $M verity_check=0)"
expect dirlink-first x "$(ls $M/a)"
case "$(ls $M/b 2>&1)" in
*"Structure needs cleaning"* | *"Symbolic links"* | *"symbolic links"*) pass dirlink-second-refused ;;
*) fail dirlink-second-refused "ls b: $(ls $M/b 2>&1 | head -n 1)" ;;
esac
expect dirlink-first-again x "$(ls $M/a)"
umount $M
echo 2 > /proc/sys/vm/drop_caches
expect dirlink-mount-2 OK "$(cfsmount $D/dirlink.cfs $M verity_check=0)"
expect dirlink-b-first x "$(ls $M/b)"
case "$(ls $M/a 2>&1)" in
*"Structure needs cleaning"* | *"Symbolic links"* | *"symbolic links"*) pass dirlink-other-order-refused ;;
*) fail dirlink-other-order-refused "ls a: $(ls $M/a 2>&1 | head -n 1)" ;;
esac
umount $M && pass dirlink-umount || fail dirlink-umount busy
