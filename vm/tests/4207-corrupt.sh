# SPDX-License-Identifier: GPL-2.0 OR MIT
# Corrupt images (vm/corrupt-image.py): each must fail cleanly, with the
# expected errno where one is expected, never hang, and unmount cleanly.
# The kernel log is checked for warnings after all tests.
SUITE=corrupt
. /tests/lib.sh
need /disk/corrupt/expect

M=/mnt/bad
while read -r name where err; do
	got=$(cfsmount /disk/corrupt/$name.cfs $M basedir=/disk/store:/disk/store-rich,verity_check=0)
	if [ "$got" != OK ]; then
		if [ "$where" = mount ] && [ "$got" != "$err" ]; then
			fail $name "mount: want $err, got $got"
		elif [ "$where" = walk ]; then
			fail $name "mount failed ($got), want a walk reporting $err"
		else
			pass "$name (mount $got)"
		fi
		continue
	fi
	timeout 60 cfs-vmtool walk $M > /tmp/walk.out 2>&1
	rc=$?
	if [ $rc -gt 1 ]; then
		fail $name "walk exit $rc (hang or crash)"
	elif [ "$where" = mount ]; then
		fail $name "mounted, want mount to fail with $err"
	elif [ "$where" = walk ] && ! grep -q "$err" /tmp/walk.out; then
		fail $name "walk did not report $err: $(grep -v '^/' /tmp/walk.out | head -n 2 | tr '\n' ' ')"
	else
		pass "$name"
	fi
	umount $M || fail $name-umount "umount failed"
done < /disk/corrupt/expect

# A sparse image whose root claims 2^27 chunks: refused before any table
# is allocated, so no allocation warning and no memory taken. On ext4 and
# on tmpfs (read by kernel_read), as a sparse copy there: its first page
# and its last two, holes between.
huge_chunks() { # NAME IMAGE
	mem() { awk '/^MemAvailable:/ { print $2 }' /proc/meminfo; }
	warns=$(dmesg | grep -c 'WARNING:')
	before=$(mem)
	got=$(cfsmount $2 $M basedir=/disk/store,verity_check=0)
	after=$(mem)
	[ "$got" = OK ] && umount $M
	expect $1-mount EUCLEAN "$got"
	if [ "$(dmesg | grep -c 'WARNING:')" = "$warns" ]; then
		pass $1-no-warning
	else
		fail $1-no-warning "$(dmesg | grep 'WARNING:' | tail -n 1)"
	fi
	if [ $((before - after)) -lt 8192 ]; then
		pass "$1-memory (MemAvailable $before -> $after kB)"
	else
		fail $1-memory "MemAvailable $before -> $after kB"
	fi
}
if [ -e /disk/huge-chunks.cfs ]; then
	huge_chunks huge-chunks /disk/huge-chunks.cfs
	size=$(stat -c %s /disk/huge-chunks.cfs)
	last=$((size / 4096 - 1))
	dd if=/disk/huge-chunks.cfs of=/tmp/huge.cfs bs=4096 count=1 2>/dev/null
	truncate -s "$size" /tmp/huge.cfs
	dd if=/disk/huge-chunks.cfs of=/tmp/huge.cfs bs=4096 skip=$last seek=$last conv=notrunc 2>/dev/null
	tailsum() { dd if=$1 bs=4096 skip=$last 2>/dev/null | md5sum; }
	if [ "$(du -k /tmp/huge.cfs | cut -f1)" -le 64 ] && [ "$(stat -c %s /tmp/huge.cfs)" = "$size" ] &&
		[ "$(tailsum /tmp/huge.cfs)" = "$(tailsum /disk/huge-chunks.cfs)" ]; then
		huge_chunks huge-chunks-tmpfs /tmp/huge.cfs
	else
		fail huge-chunks-tmpfs "cannot make a sparse copy on tmpfs ($(du -k /tmp/huge.cfs | cut -f1) kB)"
	fi
	rm -f /tmp/huge.cfs
else
	skip huge-chunks "no /disk/huge-chunks.cfs"
fi

# The image changes while mounted: values are read once and checked each
# time they are read, so this is just another corrupt image.
cp /disk/small.cfs $W/changing.cfs
expect changed-under-mount-mount OK "$(cfsmount $W/changing.cfs $M basedir=/disk/store,verity_check=0)"
cfs-vmtool walk $M > /dev/null
dd if=/dev/urandom of=$W/changing.cfs bs=1 seek=40 count=1000 conv=notrunc 2>/dev/null
truncate -s 300 $W/changing.cfs
echo 3 > /proc/sys/vm/drop_caches
timeout 60 cfs-vmtool walk $M > /tmp/walk.out 2>&1
rc=$?
if [ $rc -le 1 ]; then pass "changed-under-mount (walk exit $rc)"; else fail changed-under-mount "walk exit $rc"; fi
umount $M && pass changed-under-mount-umount || fail changed-under-mount-umount "umount failed"

# Images on tmpfs, whose page cache has no read_folio: a hole in the image
# (here every page after the first) must read as zeros, never reach the
# missing read_folio. The header is valid, the inodes are zeros: corrupt.
size=$(stat -c %s /disk/rich.cfs)
head -c 4096 /disk/rich.cfs > /tmp/holes.cfs
truncate -s "$size" /tmp/holes.cfs
got=$(cfsmount /tmp/holes.cfs $M basedir=/disk/store-rich,verity_check=0)
if [ "$got" = OK ]; then
	timeout 60 cfs-vmtool walk $M > /tmp/walk.out 2>&1
	rc=$?
	umount $M
	if [ $rc -le 1 ]; then pass "tmpfs-holes (walk exit $rc)"; else fail tmpfs-holes "walk exit $rc"; fi
else
	pass "tmpfs-holes (mount $got)"
fi
# And a whole image on tmpfs works like one on ext4.
cp /disk/rich.cfs /tmp/rich.cfs
expect tmpfs-mount OK "$(cfsmount /tmp/rich.cfs $M basedir=/disk/store-rich,verity_check=0)"
cfs-vmtool walk $M > /tmp/walk.out 2>&1
if cmp -s /tmp/walk.out /disk/rich.expected; then pass tmpfs-walk; else fail tmpfs-walk "listing differs from rich.expected"; fi
umount $M
rm -f /tmp/holes.cfs /tmp/rich.cfs
