# SPDX-License-Identifier: GPL-2.0 OR MIT
# EROFS images (composefs 1.0) through cfsctl mount: erofs plus overlayfs
# with the basedirs as data-only layers. The rich tree must match its
# source as in 4202-rich (a whiteout shows as overlayfs's xattr whiteout);
# --digest is checked and turns on verity=require; one store serves a v1
# and an EROFS mount at once, and their shared object is cached once;
# mount -t composefs works through mount.composefs; an image erofs cannot
# read as a file goes through a loop device.
SUITE=erofs
. /tests/lib.sh
need /disk/rich.erofs /disk/small.erofs /disk/small.digests
if ! command -v cfsctl >/dev/null; then
	skip all "no cfsctl in the guest"
	exit 0
fi

M=/mnt/erofs
mkdir -p $M /mnt/erofs-v1
# cfsctl mount ARGS...: prints OK or cfsctl's message
cmount() { cfsctl mount "$@" 2>&1 && echo OK; }
erofs_left() { grep -c '^[^ ]* [^ ]* erofs ' /proc/mounts; }

expect mount-rich OK "$(cmount --basedir /disk/store-rich /disk/rich.erofs $M)"
case "$(grep " $M " /proc/mounts)" in
*" overlay ro,"*metacopy=on*) pass overlay-ro-metacopy ;;
*) fail overlay-ro-metacopy "$(grep " $M " /proc/mounts)" ;;
esac
expect only-mnt-remains 0 "$(erofs_left)"
cfs-vmtool walk $M > /tmp/erofs.got 2>&1
# composefs 1.0 presents a whiteout as overlayfs's xattr whiteout (an empty
# file with trusted.overlay.whiteout, its directory marked opaque=x), so
# that an overlay stacked on the mount honours it: those two lines apart.
nowh() { grep -v -e '^/ ' -e '^/whiteout ' "$1"; }
nowh /disk/rich.expected > /tmp/erofs.want
nowh /tmp/erofs.got > /tmp/erofs.have
if cmp -s /tmp/erofs.have /tmp/erofs.want; then
	pass "tree-matches-source ($(wc -l < /tmp/erofs.got) paths)"
else
	fail tree-matches-source "$(diff /tmp/erofs.want /tmp/erofs.have | grep '^[-+]/' | head -n 4 | cut -c1-160 | tr '\n' '|')"
fi
case "$(grep '^/whiteout ' /tmp/erofs.got)" in
*" mode=100644 "*" size=0 "*"xattr:trusted.overlay.whiteout="*) pass whiteout-as-xattr-whiteout ;;
*) fail whiteout-as-xattr-whiteout "$(grep '^/whiteout ' /tmp/erofs.got | cut -c1-160)" ;;
esac
ROOT=$(grep '^/ ' /disk/rich.expected | sed 's/ xattr:.*//')
case "$(grep '^/ ' /tmp/erofs.got)" in
"$ROOT "*"xattr:trusted.overlay.opaque=78"*) pass root-opaque-for-whiteout ;;
*) fail root-opaque-for-whiteout "$(grep '^/ ' /tmp/erofs.got | cut -c1-160)" ;;
esac
expect hardlink-one-inode "$(stat -c %i $M/hello.txt)" "$(stat -c %i $M/sub/hello-hardlink)"
expect hardlink-nlink 3 "$(stat -c %h $M/sub/inner/hello-hardlink2)"
expect sparse-end end "$(tail -c 3 $M/sparse)"
umount $M && pass umount-rich || fail umount-rich busy
expect umount-clean "0 " "$(erofs_left) $(ls -d /tmp/cfs-erofs.* 2>/dev/null)"

dig() { awk -v f="$1" '$2 == f {print $1}' /disk/small.digests; }
OB=$(object "$(dig b)")
for s in v rep; do rm -rf $W/estore-$s; cp -a /disk/store $W/estore-$s; done
if ! find $W/estore-v $W/estore-rep -type f | xargs cfs-vmtool verity-enable >/dev/null 2>&1; then
	skip verity "fs-verity cannot be enabled on the test disk"
else
	cp /disk/small.erofs $W/small-v.erofs
	cfs-vmtool verity-enable $W/small-v.erofs
	D=$(cfs-vmtool verity-measure $W/small-v.erofs)
	WRONG=$(echo "$D" | sed 's/^./0/')
	[ "$WRONG" = "$D" ] && WRONG=$(echo "$D" | sed 's/^./1/')
	case "$(cmount --basedir $W/estore-v --digest $WRONG $W/small-v.erofs $M)" in
	*"not $WRONG"*) pass digest-wrong-refused ;;
	*) fail digest-wrong-refused "$(grep " $M " /proc/mounts)" ; umount $M ;;
	esac
	expect digest-ok OK "$(cmount --basedir $W/estore-v --digest $D $W/small-v.erofs $M)"
	case "$(grep " $M " /proc/mounts)" in
	*verity=require*) pass verity-require-shown ;;
	*) fail verity-require-shown "$(grep " $M " /proc/mounts)" ;;
	esac
	expect digest-ok-read OK "$(readfile $M/b)"
	expect digest-ok-inline "small file a" "$(cat $M/a)"
	umount $M

	printf 'not the content\n' > $W/eother
	rm -f $W/estore-rep/$OB && cp $W/eother $W/estore-rep/$OB && cfs-vmtool verity-enable $W/estore-rep/$OB
	expect replaced-mount OK "$(cmount --basedir $W/estore-rep --digest auto $W/small-v.erofs $M)"
	case "$(readfile $M/b)" in
	*EIO) pass replaced-object-eio ;;
	*) fail replaced-object-eio "$(readfile $M/b)" ;;
	esac
	umount $M
fi

# One store, a v1 and an EROFS mount at once.
expect both-v1 OK "$(cfsmount /disk/small.cfs /mnt/erofs-v1 basedir=/disk/store,verity_check=0)"
expect both-erofs OK "$(cmount --basedir /disk/store /disk/small.erofs $M)"
if cmp -s /mnt/erofs-v1/b $M/b && [ "$(cat $M/sub/c)" = "nested c" ]; then
	pass same-store-both
else
	fail same-store-both "contents differ"
fi
umount $M && umount /mnt/erofs-v1 && pass umount-both || fail umount-both busy
expect no-erofs-left 0 "$(erofs_left)"

# Errors name the layer: no such basedir is overlayfs refusing.
case "$(cmount --basedir /nonexistent /disk/small.erofs $M)" in
*"overlayfs refused"*) pass error-names-layer ;;
*) fail error-names-layer "$(cmount --basedir /nonexistent /disk/small.erofs $M)" ;;
esac
if [ -r /dev/kmsg ]; then
	case "$(cmount --basedir /nonexistent /disk/small.erofs $M)" in
	*"(kernel: "*) pass error-quotes-kernel ;;
	*) fail error-quotes-kernel "no kernel message quoted" ;;
	esac
else
	skip error-quotes-kernel "no /dev/kmsg in the guest"
fi
expect no-erofs-left-after-error 0 "$(erofs_left)"

# The page cache of an object a v1 and an EROFS mount share is counted
# once: read through the v1 mount, it is resident for the EROFS one, and
# reading there adds next to nothing to Cached (as 4205-pagecache measures).
if [ -f /disk/share1.cfs ] && [ -f /disk/share2.cfs ] && [ -f /disk/share.digest ]; then
	SOBJ=/disk/store/$(object "$(cat /disk/share.digest)")
	cfsctl inspect dump /disk/share2.cfs | cfsctl build --format=erofs --from-dump - $W/share2.erofs
	expect share-v1 OK "$(cfsmount /disk/share1.cfs /mnt/erofs-v1 basedir=/disk/store,verity_check=0)"
	expect share-erofs OK "$(cmount --basedir /disk/store $W/share2.erofs $M)"
	sync
	echo 3 > /proc/sys/vm/drop_caches
	expect share-cold "0 1024" "$(cfs-vmtool resident $SOBJ)"
	cat /mnt/erofs-v1/dir1/big-1.bin > /dev/null
	expect share-object-cached "1024 1024" "$(cfs-vmtool resident $SOBJ)"
	expect share-erofs-already-cached "1024 1024" "$(cfs-vmtool resident $M/dir2/big-2.bin)"
	before=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
	cat $M/dir2/big-2.bin > /dev/null
	after=$(awk '/^Cached:/ {print $2}' /proc/meminfo)
	if [ $((after - before)) -lt 1024 ]; then
		pass "share-erofs-read-adds-no-cache ($((after - before)) KiB)"
	else
		fail share-erofs-read-adds-no-cache "Cached grew by $((after - before)) KiB reading 4096 KiB"
	fi
	cmp -s /mnt/erofs-v1/dir1/big-1.bin $M/dir2/big-2.bin && pass share-same-content ||
		fail share-same-content "differs"
	umount $M; umount /mnt/erofs-v1
else
	skip share-pagecache "no shared-object images on the test disk"
fi

# mount -t composefs through /sbin/mount.composefs, as composefs 1.0 users
# type it (busybox mount tries the helper when the kernel's composefs
# refuses an image that is not v1).
if [ -x /sbin/mount.composefs ]; then
	if out=$(mount -t composefs /disk/small.erofs $M -o basedir=/disk/store 2>&1); then
		case "$(grep " $M " /proc/mounts)" in
		*" overlay ro,"*) pass mount-helper-erofs ;;
		*) fail mount-helper-erofs "$(grep " $M " /proc/mounts)" ;;
		esac
		expect mount-helper-content "nested c" "$(cat $M/sub/c)"
		umount $M
	else
		fail mount-helper-erofs "$out"
	fi
else
	skip mount-helper-erofs "no /sbin/mount.composefs in the guest"
fi

# The loop-device fallback: erofs cannot read an image that lives on
# overlayfs itself (its files have no read_folio), so cfsctl mount goes
# through a loop device, which autoclear releases at umount.
# (Two lower layers: a read-only overlay needs two.)
mkdir -p $W/lo-low $W/lo-low2 /mnt/erofs-lo
cp /disk/small.erofs $W/lo-low/
if mount -t overlay overlay -o lowerdir=$W/lo-low:$W/lo-low2 /mnt/erofs-lo 2>/dev/null; then
	expect loop-mount OK "$(cmount --basedir /disk/store /mnt/erofs-lo/small.erofs $M)"
	expect loop-content "nested c" "$(cat $M/sub/c)"
	loops=$(cat /sys/block/loop*/loop/backing_file 2>/dev/null | grep -c erofs-lo/small.erofs)
	[ "$loops" -ge 1 ] && pass "loop-device-used" || fail loop-device-used "no loop device backs the image"
	umount $M
	sleep 1
	loops=$(cat /sys/block/loop*/loop/backing_file 2>/dev/null | grep -c erofs-lo/small.erofs)
	expect loop-released 0 "$loops"
	umount /mnt/erofs-lo
else
	skip loop-fallback "cannot mount overlayfs to hold the image"
fi
