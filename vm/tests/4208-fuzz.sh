# SPDX-License-Identifier: GPL-2.0 OR MIT
# A short run of the VM fuzzer ('make vm-fuzz' runs it for longer, with a
# random seed and the leak check): mutants of the test images, mounted and
# walked, must not make the kernel warn, oops or hang. A fixed seed, so
# every run tries the same first mutants.
SUITE=vmfuzz
. /tests/lib.sh
. /tests/fuzz-seeds.sh
need /disk/small.cfs /disk/rich.cfs

# Mutants alternate between the ext4 disk and tmpfs, which the module reads
# differently (page cache, kernel_read).
if cfs-vmfuzz run --seconds 40 --seed 1 --watchdog 60 --work $W/fuzz.cfs --work /tmp/fuzz.cfs \
	--mnt /mnt/fuzz --opts "$FUZZ_OPTS" $FUZZ_SEEDS > /tmp/fuzz.out 2>&1; then
	pass "smoke ($(sed -n 's/^vmfuzz: \([0-9]* mutants in [0-9.]* s ([0-9.]* per second)\).*/\1/p' /tmp/fuzz.out))"
else
	grep '^FAIL ' /tmp/fuzz.out
	grep -q '^FAIL ' /tmp/fuzz.out || fail smoke "cfs-vmfuzz: $(tail -n 2 /tmp/fuzz.out | tr '\n' ' ')"
fi
rm -f $W/fuzz.cfs /tmp/fuzz.cfs
