# SPDX-License-Identifier: GPL-2.0 OR MIT
# The images vm/cfs-vmfuzz.c mutates, and the mount options every mutant
# is mounted with (all the test disk's stores, so that backing files of the
# seeds are found). Sourced by vm/fuzz-guest.sh and tests/4208-fuzz.sh.
FUZZ_SEEDS="/disk/small.cfs /disk/rich.cfs /disk/plain.cfs /disk/multi.cfs /disk/share1.cfs"
FUZZ_OPTS="basedir=/disk/store:/disk/store-rich:/disk/plain:/disk/storeA,verity_check=0"
