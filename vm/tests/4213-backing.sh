# SPDX-License-Identifier: GPL-2.0 OR MIT
# What the backing file decides: O_DIRECT follows the composefs file (set
# or cleared with fcntl(F_SETFL), each read of the backing file carries
# it, so an unaligned read fails with EINVAL exactly while O_DIRECT is
# set), and an empty file opens with O_DIRECT. SEEK_DATA and SEEK_HOLE
# find the holes of a sparse object, and st_blocks is the object's once
# the file has been opened (the size in 512-byte units before). The
# backing file the inode keeps for all its opens: opens from several
# processes at once with their own flags (O_DIRECT, O_NONBLOCK, O_NOATIME,
# O_DIRECT toggled on one while the others read) and positions, a mapping
# that outlives its open and shows the composefs path; eviction, umount
# (the kept files closed: the filesystem of the image unmounts after it)
# and rmmod, with a clean kernel log.
SUITE=backing
. /tests/lib.sh
need /disk/small.cfs /disk/rich.cfs /disk/share1.cfs

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

# One backing file per inode, shared by its opens (docs/kernel.md, "One
# backing file per inode").
SUITE=backing-shared
bad='BUG:|WARNING:|Oops|general protection|RIP:|KASAN:|UBSAN:|refcount_t:|list_add corruption|list_del corruption|VFS: Busy inodes'
nbad() { dmesg | grep -cE "$bad"; }
bad0=$(nbad)
M=/mnt/shared
F=$M/dir1/big-1.bin
expect mount OK "$(cfsmount /disk/share1.cfs $M basedir=/disk/store,verity_check=0)"
expect opens OK "$(cfs-vmtool share $F 6 40)"
# Again with the inode's backing file kept from the first run.
expect opens-warm OK "$(cfs-vmtool share $F 4 40)"
echo 2 > /proc/sys/vm/drop_caches
expect opens-after-eviction OK "$(cfs-vmtool share $F 2 8)"
umount $M && pass umount || fail umount "umount $M: busy"

# The image and its store on a filesystem of their own: the kept backing
# files hold its mount (the image's path) until they are closed, so it
# unmounts only if unmounting composefs closed them all.
T=/mnt/sharefs
mkdir -p $T
if mount -t tmpfs tmpfs $T; then
	cp /disk/share1.cfs $T/ && mkdir $T/store && cp -a /disk/store/. $T/store/
	expect kept-mount OK "$(cfsmount $T/share1.cfs $M basedir=$T/store,verity_check=0)"
	find $M -type f | while read -r f; do cat "$f"; done > /dev/null
	expect kept-mmap OK "$(cfs-vmtool mmap $F)"
	expect kept-read "only in 1" "$(cat $M/own)"
	umount $M && pass kept-umount || fail kept-umount "umount $M: busy"
	umount $T && pass kept-closed ||
		fail kept-closed "umount $T: busy after composefs was unmounted"
else
	fail kept-tmpfs "mount -t tmpfs"
fi
if grep -q ' composefs ' /proc/mounts; then
	fail rmmod "composefs still mounted: $(grep ' composefs ' /proc/mounts | head -n 1)"
elif rmmod composefs; then
	pass rmmod
	insmod /lib/modules/composefs.ko && pass insmod ||
		fail insmod "insmod composefs.ko failed: $(dmesg | tail -n 1)"
else
	fail rmmod "rmmod composefs: $(lsmod | grep composefs)"
fi
if [ "$(nbad)" = "$bad0" ]; then
	pass kernel-log
else
	fail kernel-log "$(dmesg | grep -E "$bad" | tail -n 3 | tr '\n' '|')"
fi

# An object on ext4 is read through the composefs file itself, whose
# f_mapping is the object's (docs/kernel.md, "Reading an object on ext4"):
# a read writes nothing to the store, not even the object's atime, which a
# backing file's read would update under relatime (the atime set a year
# and more back). The image's size bounds a read and a seek: bytes
# appended to an object without fs-verity after the open are not read,
# and SEEK_END is the image's size, through either path (ext4 here,
# tmpfs's backing file per open below).
SUITE=backing-mapped
if command -v cfsctl > /dev/null; then
	P=$W/mapped M=/mnt/mapped
	rm -rf $P && mkdir -p $P/src $M
	printf 'read through composefs\n' > $P/src/f
	cfsctl build --digest-store $P/store $P/src $P/img.cfs > /dev/null
	obj=$(find $P/store -type f)
	touch -a -d '2001-01-01 00:00:00' "$obj"
	at=$(stat -c %X "$obj")
	expect mount OK "$(cfsmount $P/img.cfs $M basedir=$P/store,verity_check=0)"
	expect read "read through composefs" "$(cat $M/f)"
	expect object-atime "$at" "$(stat -c %X "$obj")"
	expect mmap OK "$(cfs-vmtool mmap $M/f)"
	umount $M
	# A copy of the store has no fs-verity: its object can grow in place.
	cp -a $P/store $P/plain
	base=$P/plain obj=$P/plain/${obj#$P/store/}
	for fs in ext4 tmpfs; do
		expect $fs-mount OK "$(cfsmount $P/img.cfs $M basedir=$base,verity_check=0)"
		exec 3< $M/f
		printf 'grown\n' >> "$obj"
		expect $fs-object-grew 29 "$(stat -c %s "$obj")"
		expect $fs-read-bounded "read through composefs" "$(cat <&3)"
		expect $fs-seek-end-bounded 23 "$(cfs-vmtool seek-end 3)"
		exec 3<&-
		umount $M
		truncate -s 23 "$obj"
		[ $fs = tmpfs ] && break
		mount -t tmpfs tmpfs $P/src && cp -a $P/plain/. $P/src/ ||
			{ fail tmpfs "mount -t tmpfs"; break; }
		base=$P/src obj=$P/src/${obj#$P/plain/}
	done
	umount $P/src 2> /dev/null
	rm -rf $P
else
	skip all "no cfsctl in the guest"
fi

# The overlayfs xattr rule. A composefs mount shows the image's tree as it
# was built, trusted.overlay.* xattrs and whiteouts included, so overlayfs
# with the mount as a lower layer applies them as it would on any lower
# filesystem: here an opaque directory hides the layer below, a whiteout
# deletes a file of it. composefs 1.0 (an EROFS image under overlayfs, which
# stores them escaped and shows them unescaped) gives the same result. An
# escaped one (trusted.overlay.overlay.opaque) is shown, not acted on.
SUITE=overlay-xattr
command -v cfsctl > /dev/null || { skip all "no cfsctl in the guest"; exit 0; }
P=$W/ovlx O=/mnt/ovlx
rm -rf $P && mkdir -p $P/src/opq $P/base/opq $P/src/esc $P/base/esc $O
printf 'from the image\n' > $P/src/opq/in-image
printf 'from the image\n' > $P/src/plain
mknod $P/src/gone c 0 0
cfs-vmtool setxattr $P/src/opq trusted.overlay.opaque y
# Escaped: for overlayfs to show as trusted.overlay.opaque, not to act on.
cfs-vmtool setxattr $P/src/esc trusted.overlay.overlay.opaque y
printf 'below\n' > $P/base/esc/below-esc
printf 'below\n' > $P/base/opq/hidden
printf 'below\n' > $P/base/gone
printf 'below\n' > $P/base/kept
cfsctl build --digest-store $P/store $P/src $P/img.cfs > /dev/null &&
	cfsctl build --format=erofs --digest-store $P/store $P/src $P/img.erofs > /dev/null ||
	{ fail build "cfsctl build"; exit 0; }
for fmt in cfs erofs; do
	vc=
	[ $fmt = cfs ] && vc=--verity-check=0
	expect $fmt-mount "" "$(cfsctl mount $vc --basedir=$P/store $P/img.$fmt $M 2>&1)"
	case $(cfs-vmtool walk $M | grep '^/opq ') in
	*xattr:trusted.overlay.opaque=79*) pass $fmt-shows-opaque ;;
	*) fail $fmt-shows-opaque "$(cfs-vmtool walk $M | grep '^/opq ')" ;;
	esac
	# (composefs 1.0 shows it as overlayfs's xattr whiteout: an empty file.)
	[ $fmt = cfs ] &&
		expect $fmt-shows-whiteout "character special file 0 0" "$(stat -c '%F %t %T' $M/gone)"
	if mount -t overlay overlay -o ro,lowerdir=$M:$P/base $O; then
		expect $fmt-opaque-dir in-image "$(ls $O/opq | tr '\n' ' ' | sed 's/ $//')"
		[ -e $O/gone ] && fail $fmt-whiteout "$O/gone is there" || pass $fmt-whiteout
		expect $fmt-below kept "$(cat $O/kept >/dev/null && echo kept)"
		expect $fmt-from-image "from the image" "$(cat $O/plain)"
		expect $fmt-escaped-not-opaque below-esc "$(ls $O/esc)"
		case $(cfs-vmtool walk $O | grep '^/esc ') in
		*xattr:trusted.overlay.opaque=79*) pass $fmt-escaped-shown ;;
		*) fail $fmt-escaped-shown "$(cfs-vmtool walk $O | grep '^/esc ')" ;;
		esac
		umount $O
	else
		fail $fmt-overlay "mount -t overlay over the $fmt mount failed"
	fi
	umount $M
done
rm -rf $P
