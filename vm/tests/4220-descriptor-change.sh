# SPDX-License-Identifier: GPL-2.0 OR MIT
# The image changes under a mount: truncated, blocks of its inode section
# or of its directory chunks overwritten, garbage in its middle, its blocks
# changed on the disk behind an fs-verity image, the file under a loop
# device truncated. After each change (caches dropped), a walk of the tree
# (lstat, readdir, readlink, open and read, listxattr and getxattr) must
# give, for every path, the content it had or EUCLEAN/EIO, never another
# answer and never a path missing without an error above it; a change the
# walk reads must show up as an error. Then umount works, a new mount
# either works (and walks the same way) or fails with EUCLEAN or EIO, and
# the kernel log gains no BUG, WARNING, Oops or lockup. At the end, with
# no mount left, composefs unloads, and loads and mounts again.
SUITE=descriptor-change
. /tests/lib.sh
need /disk/rich.cfs /disk/small.cfs

M=/mnt/dc
B=/disk/store-rich
P=$W/dc
rm -rf $P && mkdir -p $P
opts=basedir=$B,verity_check=0
bad='BUG:|WARNING:|Oops|general protection|RIP:|KASAN:|UBSAN:|hung_task|soft lockup|refcount_t:|list_add corruption|list_del corruption'
nbad() { dmesg | grep -cE "$bad"; }
bad0=$(nbad)

# judge WANT GOT: prints up to three wrong or missing lines, then
# "same=N failed=N wrong=N missing=N". A line of GOT may be WANT's line for its
# path, or that line with fields (content, target, xattr, or the whole
# xattr list) replaced by an EUCLEAN/EIO error, or "PATH: lstat|scandir:
# EUCLEAN|EIO"; a path of WANT may be missing only below a directory whose
# lstat or readdir failed so.
judge() {
	awk '
	function iserr(f) { return f ~ /:(EUCLEAN|EIO)$/ }
	function key(f) { sub(/[=:][^=:]*$/, "", f); return f }
	function show(s) { if (shown++ < 3) print substr(s, 1, 160) }
	NR == FNR { want[$1] = $0; next }
	/^\// {
		p = $1
		seen[p] = 1
		if (!(p in want)) { wrong++; show("not in the image: " $0); next }
		if ($0 == want[p]) { same++; next }
		nw = split(want[p], w, " ")
		ok = 1
		xlist = 0
		for (i = 2; i <= NF && ok; i++) {
			if ($i == w[i])
				continue
			if (!iserr($i)) {
				ok = 0
			} else if ($i ~ /^xattrs:/) {
				xlist = 1
				for (j = i; j <= nw; j++)
					if (w[j] !~ /^xattr:/)
						ok = 0
				break
			} else if (key($i) != key(w[i])) {
				ok = 0
			}
		}
		if (ok && !xlist && NF != nw)
			ok = 0
		if (ok)
			failed++
		else {
			wrong++
			show("got:  " $0)
			show("want: " want[p])
		}
		next
	}
	/: (lstat|scandir): (EUCLEAN|EIO)$/ {
		p = $0
		sub(/: (lstat|scandir): [A-Z]*$/, "", p)
		p = "/" p
		if (!(p in want)) { wrong++; show("not in the image: " $0); next }
		seen[p] = 1
		failed_dir[p] = 1
		failed++
		next
	}
	{ wrong++; show("other: " $0) }
	END {
		for (p in want) {
			if (p in seen)
				continue
			q = p
			covered = 0
			while (q != "/" && !covered) {
				# (a string: in /.../, [^\/] leaves out backslashes too)
				if (!sub("/[^/]*$", "", q))
					break
				if (q == "")
					q = "/"
				if (q in failed_dir)
					covered = 1
			}
			if (!covered) {
				missing++
				show("missing: " p)
			}
		}
		printf "same=%d failed=%d wrong=%d missing=%d\n", same, failed, wrong, missing
	}' "$1" "$2"
}

# walkcheck NAME STRICT NEED-ERRORS [MIN-SAME]: walk $M and judge it
# against the listing before the change. STRICT=0 only reports wrong
# answers (garbage in an image without fs-verity can be any valid image);
# NEED-ERRORS=1 requires the walk to have met the change, MIN-SAME that
# many paths to read as before (the change left the rest readable).
walkcheck() {
	timeout 120 cfs-vmtool walk $M > $P/got 2>&1
	rc=$?
	res=$(judge $P/want $P/got)
	counts=$(echo "$res" | tail -n 1)
	if [ $rc -gt 1 ]; then
		fail $1 "walk exit $rc (a hang or a crash): $counts"
	elif [ "$2" = 1 ] && ! echo "$counts" | grep -q 'wrong=0 missing=0$'; then
		fail $1 "$(echo "$res" | tr '\n' '|')"
	elif [ "$3" = 1 ] && echo "$counts" | grep -q 'failed=0 '; then
		fail $1 "the walk did not meet the change: $counts"
	elif [ "$(echo "$counts" | sed 's/^same=\([0-9]*\) .*/\1/')" -lt "${4:-0}" ]; then
		fail $1 "fewer than $4 paths read as before: $counts"
	else
		pass "$1 ($counts)"
	fi
}

# remount NAME SOURCE OPTIONS STRICT [MIN-SAME]: umount, then mount again:
# it works (and walks as above) or fails with EUCLEAN or EIO.
remount() {
	umount $M && pass $1-umount || { fail $1-umount "umount $M failed"; return; }
	echo 3 > /proc/sys/vm/drop_caches
	got=$(cfsmount $2 $M $3)
	case $got in
	OK) walkcheck $1-remount-walk $4 0 $5; umount $M || fail $1-remount-umount "umount $M failed" ;;
	EUCLEAN | EIO) pass "$1-remount (mount $got)" ;;
	*) fail $1-remount "mount gave $got, want OK, EUCLEAN or EIO" ;;
	esac
}

# le64 FILE OFFSET: the little-endian u64 there (below 2^32 here)
le64() {
	set -- $(dd if=$1 bs=1 skip=$2 count=4 2>/dev/null | od -An -tu1)
	echo $(($1 + $2 * 256 + $3 * 65536 + $4 * 16777216))
}
head -c 65536 /dev/zero | tr '\0' '\377' > $P/ff
size=$(stat -c %s /disk/rich.cfs)
data=$(le64 /disk/rich.cfs 8)
# The first block of the data section holds the root's chunk; these
# leave the root readable, so that the walk goes on past them.
inodes_blk=4096                                   # a block of inodes
chunks_blk=$(((data + size) / 2 / 4096 * 4096))   # directory chunks (big/)
tail=$(((size / 4096 - 2) * 4096))                # the last blocks lost
if [ $data -lt 8192 ] || [ $((chunks_blk - 4096)) -lt $data ] || [ $tail -le $chunks_blk ]; then
	fail layout "rich.cfs: data section at $data of $size bytes; the test wants blocks of each"
	exit 0
fi

# The listing before any change.
expect mount OK "$(cfsmount /disk/rich.cfs $M $opts)"
cfs-vmtool walk $M > $P/want
if cmp -s $P/want /disk/rich.expected; then pass listing; else fail listing "the mount does not list as its source"; fi
umount $M

# change NAME STRICT NEED-ERRORS MIN-SAME COMMAND...: mount a copy of
# rich.cfs, read it all once (warm), run COMMAND on the copy ($P/img),
# drop caches, walk, then umount and mount again.
change() {
	name=$1 strict=$2 neederr=$3 minsame=$4
	shift 4
	cp /disk/rich.cfs $P/img
	expect $name-mount OK "$(cfsmount $P/img $M $opts)"
	cfs-vmtool walk $M > /dev/null
	"$@"
	echo 3 > /proc/sys/vm/drop_caches
	walkcheck $name $strict $neederr $minsame
	remount $name $P/img $opts $strict $minsame
}
ff() { dd if=$P/ff of=$P/img bs=1 seek=$1 count=$2 conv=notrunc 2>/dev/null; }
# MIN-SAME is 20: besides big/ (3,000 entries, whose chunks one block of
# the data section may hold) the rich tree has under 90 paths.
change truncate-half 1 1 0 truncate -s $((size / 2)) $P/img
change truncate-zero 1 1 0 truncate -s 0 $P/img
change truncate-tail 1 1 20 truncate -s $tail $P/img
change inodes-ff 1 1 20 ff $inodes_blk 4096
change chunks-ff 1 1 20 ff $chunks_blk 4096
# Garbage over 8 KiB of inodes: without fs-verity a field of garbage can
# be as valid as the one it replaced, so only the kernel's behaviour and
# the walk's end are judged (the counts are shown).
change garbage-inodes 0 0 0 dd if=/dev/urandom of=$P/img bs=4096 seek=8 count=2 conv=notrunc

# Behind fs-verity: the image's blocks changed on the disk, under ext4.
# Every read of a changed block must fail (EIO), the rest read as before.
cp /disk/rich.cfs $P/vimg
cfs-vmtool verity-enable $P/vimg && sync
D=$(cfs-vmtool verity-measure $P/vimg)
pi=$(cfs-vmtool fibmap $P/vimg $inodes_blk)
pc=$(cfs-vmtool fibmap $P/vimg $chunks_blk)
case "$pi$pc" in
*[!0-9]*) fail verity-fibmap "no block numbers: $pi $pc" ;;
*)
	vopts=basedir=$B,digest=$D,verity_check=0
	expect verity-mount OK "$(cfsmount $P/vimg $M $vopts)"
	cfs-vmtool walk $M > /dev/null
	dd if=$P/ff of=/dev/vda bs=4096 seek=$((pi / 4096)) count=1 conv=notrunc,fsync 2>/dev/null &&
		dd if=$P/ff of=/dev/vda bs=4096 seek=$((pc / 4096)) count=1 conv=notrunc,fsync 2>/dev/null
	echo 3 > /proc/sys/vm/drop_caches
	expect verity-block-changed EIO "$(cfs-vmtool read $P/vimg | sed 's/^read //')"
	walkcheck verity-disk-blocks 1 1 20
	remount verity-disk-blocks $P/vimg $vopts 1 20
	;;
esac
rm -f $P/vimg

# A loop device over the image, its file truncated: the device keeps its
# size and reads zeros past the file's end.
cp /disk/rich.cfs $P/img
dev=$(losetup -f)
if losetup -r $dev $P/img; then
	expect loop-mount OK "$(cfsmount $dev $M $opts)"
	cfs-vmtool walk $M > /dev/null
	truncate -s $tail $P/img
	echo 3 > /proc/sys/vm/drop_caches
	walkcheck loop-truncate-tail 1 1 20
	remount loop-truncate-tail $dev $opts 1 20
	losetup -d $dev
else
	fail loop "losetup -r $dev $P/img"
fi

# Nothing left mounted: composefs unloads, loads again and mounts.
if grep -q ' composefs ' /proc/mounts; then
	fail rmmod "composefs still mounted: $(grep ' composefs ' /proc/mounts | head -n 1)"
elif rmmod composefs; then
	pass rmmod
	if insmod /lib/modules/composefs.ko; then
		pass insmod
		expect reload-mount OK "$(cfsmount /disk/small.cfs $M basedir=/disk/store,verity_check=0)"
		expect reload-read "small file a" "$(cat $M/a)"
		umount $M
	else
		fail insmod "insmod composefs.ko failed: $(dmesg | tail -n 1)"
	fi
else
	fail rmmod "rmmod composefs: $(lsmod | grep composefs)"
	lsmod | grep -q '^composefs' || insmod /lib/modules/composefs.ko
fi
if [ "$(nbad)" = "$bad0" ]; then
	pass kernel-log
else
	fail kernel-log "$(dmesg | grep -E "$bad" | tail -n 3 | tr '\n' '|')"
fi
rm -rf $P
