#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The guest half of bench/lazy.sh, run by vm/init ("cfs.bench") as
# /bin/cfs-bench. busybox httpd on the loopback serves the full store
# /disk/store-os. For each run: an image over an empty local store with
# cfsctl lazy as its second basedir (digest=, verity_check=2), timed from
# nothing to the first successful read of one file, then to the end of
# reading a 5% sample of the files; then a full cfsctl fetch into an empty
# store and the same reads over it. Page, dentry and inode caches are
# dropped before each phase. Prints one line per figure:
#   L RUN METRIC VALUE
export PATH=/bin:/sbin
. /disk/lazy.conf
U=http://127.0.0.1:8080
W=/disk/work
S=$W/store
M=/mnt/os
L=/mnt/lazy
mkdir -p $W $M $L
now() { cfs-vmtool now; }
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
ms() { echo $((($2 - $1) / 1000000)); }
err() { echo "ERROR $*"; }

ifconfig lo 127.0.0.1 up
httpd -p 127.0.0.1:8080 -h /disk/store-os || err "httpd did not start"
cp /disk/os.cfs $W/os.cfs
cfs-vmtool verity-enable $W/os.cfs
D=$(cfs-vmtool verity-measure $W/os.cfs)
head -n 1 /disk/os.sample > $W/first
echo "L 0 sample_files $(wc -l < /disk/os.sample)"

for run in $(seq 1 "$RUNS"); do
	# lazy: nothing local
	rm -rf $S && mkdir -p $S
	drop
	t0=$(now)
	cfsctl lazy --store $S --url $U --jobs 16 --stats $W/stats $L 2> $W/lazy.err &
	lazy=$!
	while ! grep -q " $L fuse" /proc/mounts; do
		kill -0 $lazy 2>/dev/null || { err "cfsctl lazy: $(cat $W/lazy.err)"; break; }
		usleep 10000
	done
	r=$(cfs-vmtool mount $W/os.cfs $M "basedir=$S:$L,digest=$D,verity_check=2")
	[ "$r" = OK ] || err "mount lazy: $r"
	cfs-vmtool readlist $M $W/first > $W/r1 || err "lazy first read: $(head -n 2 $W/r1)"
	t1=$(now)
	cfs-vmtool readlist $M /disk/os.sample > $W/r2 || err "lazy sample: $(head -n 2 $W/r2)"
	t2=$(now)
	umount $M
	kill -TERM $lazy
	wait $lazy
	echo "L $run lazy_first_ms $(ms $t0 $t1)"
	echo "L $run lazy_sample_ms $(ms $t0 $t2)"
	echo "L $run lazy_sample_read $(tail -n 1 $W/r2)"
	echo "L $run lazy_objects $(sed -n 's/.*"fetched": \([0-9]*\).*/\1/p' $W/stats)"
	echo "L $run lazy_bytes $(sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' $W/stats)"
	echo "L $run lazy_first_open_mean_ms $(sed -n 's/.*"mean": \([0-9.]*\).*/\1/p' $W/stats)"

	# full fetch, then the same reads from the local store
	rm -rf $S && mkdir -p $S
	drop
	t0=$(now)
	cfsctl fetch --json --jobs 16 --basedir $S --url $U $W/os.cfs > $W/fetch.json 2> $W/fetch.err ||
		err "fetch: $(tail -n 2 $W/fetch.err)"
	t1=$(now)
	drop
	t2=$(now)
	r=$(cfs-vmtool mount $W/os.cfs $M "basedir=$S,digest=$D,verity_check=2")
	[ "$r" = OK ] || err "mount local: $r"
	cfs-vmtool readlist $M $W/first > $W/r1 || err "local first read: $(head -n 2 $W/r1)"
	t3=$(now)
	cfs-vmtool readlist $M /disk/os.sample > $W/r2 || err "local sample: $(head -n 2 $W/r2)"
	t4=$(now)
	umount $M
	echo "L $run fetch_ms $(ms $t0 $t1)"
	echo "L $run fetch_objects $(sed -n 's/.*"fetched": \([0-9]*\).*/\1/p' $W/fetch.json)"
	echo "L $run fetch_bytes $(sed -n 's/.*"bytes": \([0-9]*\).*/\1/p' $W/fetch.json)"
	echo "L $run local_first_ms $(ms $t2 $t3)"
	echo "L $run local_sample_ms $(ms $t2 $t4)"
done
echo "CFS-BENCH-END"
