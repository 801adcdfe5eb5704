# SPDX-License-Identifier: GPL-2.0 OR MIT
# A container image pulled from a registry by cfsctl pull (vm/mkdisk.sh,
# three layers made by tests/lib/oci-layers.py) mounts in both formats: v1 through
# the module, EROFS (composefs 1.0) through cfsctl mount. Each mounted tree
# must equal umoci unpack of the same image, as cfs-vmtool walk lists them:
# modes, owners, times, link counts, contents, xattrs, devices; the
# whiteout, the opaque directory and the replaced file are applied.
SUITE=oci
. /tests/lib.sh
need /disk/oci.cfs /disk/oci.erofs /disk/oci.expected /disk/store-oci

# The listing umoci gave has the layers applied, so that an image and a
# listing that both missed them do not pass.
E=/disk/oci.expected
if grep -q '^/lib/new ' $E && ! grep -q -e '^/lib/old ' -e '^/rm-me ' $E &&
	grep -q '^/flip mode=100644 ' $E && grep -q '^/sh-link .* nlink=2 ' $E; then
	pass expected-has-layers-applied
else
	fail expected-has-layers-applied "$(cut -d' ' -f1-2 $E | tr '\n' '|')"
fi

M=/mnt/oci
mkdir -p $M
# same NAME: the walk of $M against umoci's listing
same() {
	cfs-vmtool walk $M > /tmp/oci.got 2>&1
	if cmp -s /tmp/oci.got $E; then
		pass "$1-tree-equals-umoci-unpack ($(wc -l < /tmp/oci.got) paths)"
	else
		fail "$1-tree-equals-umoci-unpack" "$(diff $E /tmp/oci.got | grep '^[-+]/' | head -n 4 | cut -c1-160 | tr '\n' '|')"
	fi
}

expect mount-v1 OK "$(cfsmount /disk/oci.cfs $M basedir=/disk/store-oci,verity_check=0)"
if grep -q " $M composefs " /proc/mounts; then
	same v1
	expect v1-flip-content "a file again" "$(cat $M/flip)"
	expect v1-hardlink-one-inode "$(stat -c %i $M/bin/sh)" "$(stat -c %i $M/sh-link)"
	umount $M && pass umount-v1 || fail umount-v1 busy
fi

if ! command -v cfsctl > /dev/null; then
	skip erofs "no cfsctl in the guest"
	exit 0
fi
out=$(cfsctl mount --basedir /disk/store-oci /disk/oci.erofs $M 2>&1 && echo OK)
expect mount-erofs OK "$out"
if grep -q " $M overlay " /proc/mounts; then
	same erofs
	expect erofs-owned-content "$(printf 'owned%.0s' 1 2 3)" "$(head -c 15 $M/home/f)"
	umount $M && pass umount-erofs || fail umount-erofs busy
fi
