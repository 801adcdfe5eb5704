# SPDX-License-Identifier: GPL-2.0 OR MIT
# The soak: 8 processes walk two images that share one store and hash
# every file in them, by read, mmap and sendfile in turn (cfs-vmfuzz soak),
# against the sha256 sums of the source trees. Meanwhile a loop drops the
# caches every 2 s, a memory cgroup (memory.max) squeezes the readers,
# and halfway one image is lazily unmounted while the readers still walk
# it. Then every hash must have been right, each reader must have read
# every file of both images at least once, the detached mount must go
# away when the last reader lets go, and no composefs allocation may stay
# live (the leak check of vm-fuzz, when the kernel keeps alloc traces:
# make vm-soak boots with slub_debug). The kernel log and rmmod are
# checked by vm/init after the tests. CFS_SOAK_SECONDS (make vm-soak)
# sets the reading time; 120 s by default (a reader that has not read
# every file of both images by then goes on for up to half that again).
SUITE=soak
. /tests/lib.sh
need /disk/soak1.cfs /disk/soak2.cfs /disk/soak1.sha256 /disk/soak2.sha256
secs=${CFS_SOAK_SECONDS:-120}
readers=8
mem_max=8M

# fs-verity on every object and on the first image, so that reads go
# through ext4's verification and the mounts check digests.
find /disk/store-soak -type f | xargs cfs-vmtool verity-enable ||
	{ fail setup "cannot enable fs-verity on the soak store"; exit 0; }
cp /disk/soak1.cfs $W/soak1.cfs
cfs-vmtool verity-enable $W/soak1.cfs
D=$(cfs-vmtool verity-measure $W/soak1.cfs)
expect mount-1 OK "$(cfsmount $W/soak1.cfs /mnt/soak1 basedir=/disk/store-soak,digest=$D)"
expect mount-2 OK "$(cfsmount /disk/soak2.cfs /mnt/soak2 basedir=/disk/store-soak,verity_check=1)"

# The memory cgroup the readers run in.
CG=/sys/fs/cgroup
mkdir -p $CG
grep -q " $CG cgroup2 " /proc/mounts || mount -t cgroup2 none $CG
echo +memory > $CG/cgroup.subtree_control 2>/dev/null
mkdir -p $CG/soak
if ! echo $mem_max > $CG/soak/memory.max 2>/dev/null; then
	fail cgroup "cannot set memory.max (no memory controller?)"
	umount /mnt/soak1; umount /mnt/soak2
	exit 0
fi

rm -f /tmp/soak.*
t0=$(date +%s)
i=0
while [ $i -lt $readers ]; do
	sh -c "echo \$\$ > $CG/soak/cgroup.procs && exec cfs-vmfuzz soak --seconds $secs --id $i \
		/mnt/soak1 /disk/soak1.sha256 /mnt/soak2 /disk/soak2.sha256" \
		> /tmp/soak.out.$i 2>&1 &
	echo $! > /tmp/soak.pid.$i
	i=$((i + 1))
done
(
	n=0
	while [ ! -e /tmp/soak.stop ]; do
		echo 3 > /proc/sys/vm/drop_caches
		n=$((n + 1))
		echo $n > /tmp/soak.drops
		sleep 2
	done
) &
dropper=$!

sleep $((secs / 2))
if umount -l /mnt/soak2; then
	pass lazy-umount
else
	fail lazy-umount "umount -l /mnt/soak2 failed"
fi
grep -q ' /mnt/soak2 ' /proc/mounts && fail lazy-umount-gone "/mnt/soak2 is still in /proc/mounts"

files=0 bytes=0 bad=0
i=0
while [ $i -lt $readers ]; do
	wait "$(cat /tmp/soak.pid.$i)"
	rc=$?
	line=$(grep '^OK ' /tmp/soak.out.$i)
	if [ $rc -ne 0 ] || [ -z "$line" ]; then
		bad=$((bad + 1))
		grep '^FAIL ' /tmp/soak.out.$i | head -n 3
		grep -q '^FAIL ' /tmp/soak.out.$i ||
			fail reader-$i "exit $rc: $(tail -n 2 /tmp/soak.out.$i | tr '\n' ' ')"
	else
		set -- $line
		files=$((files + $3)) bytes=$((bytes + $5))
	fi
	i=$((i + 1))
done
t1=$(date +%s)
touch /tmp/soak.stop
wait $dropper

events=$(tr '\n' ' ' < $CG/soak/memory.events)
high=$(awk '$1 == "max" { print $2 }' $CG/soak/memory.events)
ooms=$(awk '$1 == "oom_kill" { print $2 }' $CG/soak/memory.events)
peak=$(cat $CG/soak/memory.peak 2>/dev/null || echo ?)
if [ $bad -eq 0 ]; then
	pass "readers ($readers readers, $((t1 - t0)) s: $files files read, $bytes bytes hashed, every sha256 right; caches dropped $(cat /tmp/soak.drops) times)"
else
	fail readers "$bad of $readers readers failed"
fi
# The squeeze must have happened, or the test did not test it.
if [ "${high:-0}" -gt 0 ] && [ "${ooms:-0}" -eq 0 ]; then
	pass "memory-squeeze (memory.max $mem_max hit $high times, peak $peak bytes, no OOM kill)"
else
	fail memory-squeeze "memory.events: $events"
fi
rmdir $CG/soak

umount /mnt/soak1 || fail umount-1 "umount /mnt/soak1 failed"
# The lazily unmounted superblock goes when its last reader has gone: then
# nothing holds the module.
sleep 2
ref=$(cat /sys/module/composefs/refcnt)
expect module-unused 0 "$ref"

# No composefs allocation left live (slub_debug=U keeps the traces).
sync
echo 3 > /proc/sys/vm/drop_caches
sleep 2
grep -q ' /sys/kernel/debug ' /proc/mounts || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
leaks=$(cfs-vmfuzz leaks)
case $leaks in
OK*) pass "leaks (${leaks#OK })" ;;
SKIP*) skip leaks "${leaks#SKIP }; make vm-soak runs it" ;;
*) fail leaks "$(echo "$leaks" | head -n 5 | tr '\n' ' ')" ;;
esac
rm -f $W/soak1.cfs /tmp/soak.*
