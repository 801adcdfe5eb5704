# SPDX-License-Identifier: GPL-2.0 OR MIT
# Images of an ostree commit over the repository's own objects
# (vm/mkdisk.sh: a bare-user repository and its checkout): cfsctl build
# --from-ostree enables fs-verity on the objects in place; the v1 image
# mounts with basedir=REPO/objects, digest= and verity_check=2, and
# cfsctl mount --from-ostree mounts the EROFS image (or the v1 one) after
# checking the chain; each shows the checkout's tree. An object replaced
# by other content reads as EIO, and the chain check then refuses to mount.
SUITE=ostree
. /tests/lib.sh
need /disk/ostree/repo /disk/ostree/checkout

R=/disk/ostree/repo
C=/disk/ostree/checkout
M=/mnt/ostree
mkdir -p $M

# same NAME: the mounted tree against the checkout, as images with mtime 0
same() {
	if cfsctl build --use-epoch $M $W/os-got.img > /tmp/os.err 2>&1 &&
		cfsctl build --use-epoch $C $W/os-want.img >> /tmp/os.err 2>&1 &&
		cfsctl diff $W/os-want.img $W/os-got.img > /tmp/os.diff 2>&1; then
		pass "$1-tree-equals-checkout"
	else
		fail "$1-tree-equals-checkout" "$(cat /tmp/os.err /tmp/os.diff | head -n 4 | tr '\n' '|')"
	fi
}

if cfsctl build --from-ostree --require-verity --format=erofs --commit-digest "$R:main" $W/os.erofs \
	> /tmp/os.out 2> /tmp/os.err; then
	pass build-commit-digest
else
	fail build-commit-digest "$(cat /tmp/os.err)"
fi
if cfsctl build --from-ostree --require-verity "$R:main" $W/os.cfs > /tmp/os.out 2> /tmp/os.err; then
	pass build-v1
else
	fail build-v1 "$(cat /tmp/os.err)"
fi
# the payloads are the objects in place, now with fs-verity
obj=$(cfsctl inspect dump $W/os.cfs | awk '$1 == "/usr/bin/tool" { print $9 }')
dig=$(cfsctl inspect dump $W/os.cfs | awk '$1 == "/usr/bin/tool" { print $11 }')
expect object-has-verity "$dig" "$(cfs-vmtool verity-measure $R/objects/$obj 2>&1)"

cfs-vmtool verity-enable $W/os.cfs
D=$(cfs-vmtool verity-measure $W/os.cfs)
expect mount-v1 OK "$(cfsmount $W/os.cfs $M basedir=$R/objects,digest=$D,verity_check=2)"
if grep -q " $M composefs " /proc/mounts; then
	same v1
	expect v1-content "hello from ostree" "$(cat $M/etc/hello)"
	umount $M || fail umount-v1 busy
fi

if cfsctl verify --from-ostree "$R:main" > /tmp/os.out 2> /tmp/os.err; then
	pass verify-chain
else
	fail verify-chain "$(cat /tmp/os.err)"
fi
if cfsctl mount --from-ostree --format=v1 "$R:main" $M 2> /tmp/os.err; then
	pass mount-ostree-v1
	same ostree-v1
	case "$(grep " $M composefs " /proc/mounts)" in
	*basedir=$R/objects*digest=*verity_check=2*) pass ostree-v1-options ;;
	*) fail ostree-v1-options "$(grep " $M " /proc/mounts)" ;;
	esac
	umount $M || fail umount-ostree-v1 busy
else
	fail mount-ostree-v1 "$(cat /tmp/os.err)"
fi
if cfsctl mount --from-ostree "$R:main" $M 2> /tmp/os.err; then
	pass mount-erofs
	same erofs
	case "$(grep " $M overlay " /proc/mounts)" in
	*verity=require*) pass erofs-verity-require ;;
	*) fail erofs-verity-require "$(grep " $M " /proc/mounts)" ;;
	esac
	[ -z "$(ls $R/tmp | grep cfs-image)" ] && pass erofs-image-unlinked || fail erofs-image-unlinked "$(ls $R/tmp)"
else
	fail mount-erofs "$(cat /tmp/os.err)"
fi

# An object replaced by other content of its size, with fs-verity: EIO.
head -c 300000 /dev/zero > $W/other
cfs-vmtool verity-enable $W/other
mv $W/other $R/objects/$obj
echo 3 > /proc/sys/vm/drop_caches
if grep -q " $M overlay " /proc/mounts; then
	expect erofs-changed-object "open EIO" "$(readfile $M/usr/bin/tool)"
	umount $M || fail umount-erofs busy
fi
expect v1-changed-mount OK "$(cfsmount $W/os.cfs $M basedir=$R/objects,digest=$D,verity_check=2)"
expect v1-changed-object "open EIO" "$(readfile $M/usr/bin/tool)"
expect v1-others-fine OK "$(readfile $M/etc/hello)"
umount $M
# the chain no longer holds: nothing is mounted
if cfsctl mount --from-ostree "$R:main" $M 2> /tmp/os.err; then
	fail mount-refused "mounted a changed object"
	umount $M
elif grep -q "link 2, the objects failed" /tmp/os.err; then
	pass mount-refused
else
	fail mount-refused "$(cat /tmp/os.err | tr '\n' '|')"
fi
