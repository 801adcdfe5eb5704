# SPDX-License-Identifier: GPL-2.0 OR MIT
# readdir as programs use it, on wide directories of both formats: each
# directory is listed with getdents64 buffers of many sizes (the longest
# entry's size, 24, 100, 333, 4096 and 32768 bytes), stepped back by one
# entry after every other call (across each chunk's end), read on from
# random positions told and sought back to, from lseek to a d_off it gave, past
# its end, through two descriptors at once and through libc's telldir,
# seekdir and rewinddir; every listing must equal the first, which must
# hold "." and ".." once, no name twice and exactly the names the image
# was built with (cfs-vmtool readdir-check). Cold (caches dropped before
# each listing and between a tell and its seek) and warm. The directories:
# 10,000 entries with names of 5 to 255 bytes, built here in both formats;
# wide/ and long/ of vm/dir-images.py (many chunks); big/ of the rich tree
# (3,000 entries) as v1 and as EROFS; the v1 ones again with fs-verity on
# the image (mounted with digest=), whose checked chunks are listed in place.
SUITE=readdir-seek
. /tests/lib.sh
need /disk/dirs/dirs.cfs /disk/rich.cfs

# A new seed each run; a failure names it (readdir-check SEED repeats it).
seed=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')

# The wide directory: names NNNNN followed by 0 to 250 characters.
P=$W/readdir
rm -rf $P && mkdir -p $P/empty
awk -v names=$P/many.names 'BEGIN {
	cs = "abcdefghijklmnopqrstuvwxyz0123456789_-."
	print "/ 4096 40755 3 0 0 0 1600000000.0 - - -"
	print "/many 4096 40755 2 0 0 0 1600000000.0 - - -"
	for (i = 0; i < 10000; i++) {
		n = sprintf("%05d", i)
		l = (i * 7919) % 251
		for (j = 0; j < l; j++)
			n = n substr(cs, (i + j) % 39 + 1, 1)
		print n > names
		print "/many/" n " 0 100644 1 0 0 0 1600000000.0 - - -"
	}
}' > $P/many.dump
awk 'BEGIN { for (i = 1; i <= 3000; i++) printf "entry-%04d\n", i }' > $P/big.names

# check NAME DIR [NAMES]: cold, then warm
check() {
	echo 3 > /proc/sys/vm/drop_caches
	out=$(timeout 120 cfs-vmtool readdir-check --cold "$2" "$seed" $3 2>&1)
	case $out in
	OK*) pass "$1-cold ($out)" ;;
	*) fail "$1-cold" "$(echo "$out" | head -n 4 | cut -c1-300 | tr '\n' '|')" ;;
	esac
	out=$(timeout 120 cfs-vmtool readdir-check "$2" "$seed" $3 2>&1)
	case $out in
	OK*) pass "$1-warm ($out)" ;;
	*) fail "$1-warm" "$(echo "$out" | head -n 4 | cut -c1-300 | tr '\n' '|')" ;;
	esac
}

M=/mnt/rd
# list_v1 PREFIX MANY DIRS [sealed]: the wide directories of the v1 images
# MANY (many/) and DIRS (wide/, long/), each mounted with verity_check=0;
# sealed: with digest= too, the image's fs-verity digest
list_v1() {
	for img in $2 $3; do
		[ -e $img ] || continue
		o=verity_check=0
		[ -n "${4:-}" ] && o=digest=$(cfs-vmtool verity-measure $img),$o
		expect $1-$(basename $img .cfs)-mount OK "$(cfsmount $img $M $o)"
		if [ $img = $2 ]; then
			check $1-many $M/many $P/many.names
		else
			check $1-wide $M/wide /disk/dirs/wide.names
			check $1-long $M/long /disk/dirs/long.names
		fi
		umount $M
	done
}
cfsctl build --from-dump $P/many.dump $P/many.cfs > /dev/null ||
	fail v1-many-build "cfsctl build --from-dump failed"
list_v1 v1 $P/many.cfs /disk/dirs/dirs.cfs
# Sealed: an image with fs-verity lists a chunk it has checked once in
# place, from the page cache, on every later readdir (warm, and after a
# seek back into it); a cold one checks it again.
mkdir -p $P/sealed
for img in $P/many.cfs /disk/dirs/dirs.cfs; do
	[ -e $img ] && cp $img $P/sealed/ && cfs-vmtool verity-enable $P/sealed/$(basename $img) > /dev/null
done
list_v1 v1-sealed $P/sealed/many.cfs $P/sealed/dirs.cfs sealed
expect v1-rich-mount OK "$(cfsmount /disk/rich.cfs $M basedir=/disk/store-rich,verity_check=0)"
check v1-big $M/big $P/big.names
umount $M

# composefs 1.0: erofs under overlayfs, through cfsctl mount.
if [ -e /disk/rich.erofs ]; then
	if cfsctl build --format=erofs --from-dump $P/many.dump $P/many.erofs > /dev/null; then
		expect erofs-many-mount OK "$(cfsctl mount --basedir $P/empty $P/many.erofs $M 2>&1 && echo OK)"
		check erofs-many $M/many $P/many.names
		umount $M
	else
		fail erofs-many-build "cfsctl build --format=erofs --from-dump failed"
	fi
	expect erofs-rich-mount OK "$(cfsctl mount --basedir /disk/store-rich /disk/rich.erofs $M 2>&1 && echo OK)"
	check erofs-big $M/big $P/big.names
	umount $M
else
	skip erofs "no /disk/rich.erofs on the test disk"
fi
rm -rf $P
