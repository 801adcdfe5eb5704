#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The guest half of 'make vm-fuzz' (kernel command line "cfs.fuzz=SECONDS
# cfs.fuzzseed=N slub_debug=FZPU"), installed as /bin/cfs-fuzz: mounts and
# walks mutants of the test disk's images for SECONDS (vm/cfs-vmfuzz.c),
# then, with everything unmounted, checks that no allocation composefs made
# is still live. vm/init then unmounts the disk, removes the module and
# checks the kernel log, as after the tests.
export PATH=/bin:/sbin
secs=$(sed -n 's/.*cfs\.fuzz=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
seed=$(sed -n 's/.*cfs\.fuzzseed=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
. /tests/fuzz-seeds.sh

mkdir -p /disk/work /mnt
if cfs-vmfuzz run --seconds "${secs:-600}" --seed "${seed:-1}" --watchdog 60 \
	--work /disk/work/fuzz.cfs --work /tmp/fuzz.cfs --mnt /mnt/fuzz --opts "$FUZZ_OPTS" \
	$FUZZ_SEEDS; then
	echo "PASS vmfuzz/mutants: no kernel warning, oops or hang"
fi
rm -f /disk/work/fuzz.cfs /tmp/fuzz.cfs

# Inodes are freed after an RCU grace period: let them go first.
sync
echo 3 > /proc/sys/vm/drop_caches
sleep 2
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
# The check must see composefs's allocations at all: with an image
# mounted and walked, its inodes are live and must be listed.
mkdir -p /mnt/live
if [ "$(cfs-vmtool mount /disk/small.cfs /mnt/live basedir=/disk/store,verity_check=0)" = OK ]; then
	cfs-vmtool walk /mnt/live > /dev/null
	live=$(cfs-vmfuzz leaks)
	if echo "$live" | grep -q '^LEAK .*cfs_'; then
		echo "PASS vmfuzz/leak-check-sees-live: a mounted image's allocations are listed"
	elif echo "$live" | grep -q '^SKIP'; then
		:
	else
		echo "FAIL vmfuzz/leak-check-sees-live: a mounted image's allocations are not listed"
	fi
	umount /mnt/live
	sleep 2
else
	echo "FAIL vmfuzz/leak-check-sees-live: cannot mount /disk/small.cfs"
fi
leaks=$(cfs-vmfuzz leaks)
case $leaks in
OK*) echo "PASS vmfuzz/leaks: ${leaks#OK }" ;;
SKIP*) echo "SKIP vmfuzz/leaks: ${leaks#SKIP }" ;;
*) echo "FAIL vmfuzz/leaks: $(echo "$leaks" | head -n 5 | tr '\n' ' ')" ;;
esac
