#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The demo, inside the VM (run by vm/init for "cfs.demo"): seal the demo
# image and its objects with fs-verity, mount it with digest= and
# verity_check=2, list it and read a file, then tamper with an object and
# show that reading it fails with EIO and the kernel says why.
set -u
echo CFS-DEMO-BEGIN
say() { printf '\n$ %s\n' "$*"; }
run() { say "$*"; sh -c "$*" 2>&1; }
if [ ! -f /disk/demo.cfs ]; then
	echo "no demo image on the test disk (cfsctl build was not available)"
	echo CFS-DEMO-END
	exit 1
fi
W=/disk/work
mkdir -p $W /mnt/demo
cp /disk/demo.cfs $W/demo.cfs
cp -a /disk/store-demo $W/store
echo "# enable fs-verity on the image and on every object"
find $W/store -type f | xargs cfs-vmtool verity-enable
cfs-vmtool verity-enable $W/demo.cfs
D=$(cfs-vmtool verity-measure $W/demo.cfs)
run "cfs-vmtool verity-measure $W/demo.cfs"
# (busybox mount would put a loop device under a regular file; cfsctl
# mount calls mount(2) with the file itself, as util-linux mount does.)
run "cfsctl mount --basedir $W/store --digest $D --verity-check 2 $W/demo.cfs /mnt/demo"
run "grep composefs /proc/mounts"
run "find /mnt/demo | sort"
run "ls -l /mnt/demo/etc/app /mnt/demo/usr/lib"
run "cat /mnt/demo/etc/app/app.conf"
echo
echo "# tamper: replace the object behind etc/app/app.conf with other content"
obj=$(grep -rl . $W/store | while read -r f; do cmp -s "$f" /mnt/demo/etc/app/app.conf && echo "$f" && break; done)
echo "tampered" > $W/evil && cfs-vmtool verity-enable $W/evil && mv $W/evil "$obj"
run "cat /mnt/demo/etc/app/app.conf"
run "dmesg | grep 'composefs:' | tail -n 1"
umount /mnt/demo
echo CFS-DEMO-END
