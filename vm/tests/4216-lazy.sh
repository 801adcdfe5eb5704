# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl lazy as the second basedir of an image mounted with digest= and
# verity_check=2 over an empty local store, with busybox httpd serving the
# full store on the guest's loopback. The first read of a file fetches
# exactly its object, which then has fs-verity in the store; a walk
# compares equal and leaves every object local; parallel readers of one
# object make one download; a killed daemon leaves local objects readable
# and nothing half-written, and a restarted one goes on; a mirror serving
# wrong content makes that file EIO and keeps it out of the store.
SUITE=lazy
. /tests/lib.sh
need /disk/lazy.cfs /disk/lazy.expected /disk/store-lazy /disk/lazy.digests

if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	skip all "the kernel has no FUSE (/dev/fuse, fuse in /proc/filesystems)"
	exit 0
fi
ifconfig lo 127.0.0.1 up

M=/mnt/lazy
L=/mnt/lazy-fuse
S=$W/lazy-store
mkdir -p $M $L
dig() { awk -v f="$1" '$2 == f {print $1}' /disk/lazy.digests; }
obj() { object "$(dig "$1")"; }
# count FILE KEY: a number from the daemon's --stats JSON
count() { sed -n "s/.*\"$2\": \([0-9]*\).*/\1/p" "$1"; }
# store_list: the files in the local store, relative, sorted
store_list() { (cd $S && find . -type f | sed 's|^\./||' | sort); }
# store_verified: every file in the store has the fs-verity digest it is named by
store_verified() {
	for f in $(store_list); do
		[ "$(cfs-vmtool verity-measure "$S/$f" 2>&1)" = "$(echo "$f" | tr -d /)" ] ||
			{ echo "$f: $(cfs-vmtool verity-measure "$S/$f" 2>&1)"; return; }
	done
	echo OK
}

# The mirror: busybox httpd on the loopback, serving the full store.
httpd -f -p 127.0.0.1:8080 -h /disk/store-lazy &
HTTPD=$!
mkdir -p $W/bad-mirror && rm -rf $W/bad-mirror/*
cp -a /disk/store-lazy/. $W/bad-mirror/
BADOBJ=$(obj usr/lib/libmid.so)
rm -f $W/bad-mirror/$BADOBJ
head -c 200000 /dev/zero > $W/bad-mirror/$BADOBJ
httpd -f -p 127.0.0.1:8081 -h $W/bad-mirror &
HTTPD_BAD=$!
sleep 1

# start_lazy URL: the daemon on $L, stats in $W/lazy.stats; sets LAZY
start_lazy() {
	cfsctl lazy --store $S --url "$1" --timeout 20 --stats $W/lazy.stats $L \
		> $W/lazy.out 2> $W/lazy.err &
	LAZY=$!
	for i in $(seq 50); do
		grep -q " $L fuse" /proc/mounts && return 0
		sleep 0.2
	done
	return 1
}

cp /disk/lazy.cfs $W/lazy-v.cfs
cfs-vmtool verity-enable $W/lazy-v.cfs
D=$(cfs-vmtool verity-measure $W/lazy-v.cfs)
rm -rf $S && mkdir -p $S $W/lazy-stats
if start_lazy http://127.0.0.1:8080; then pass daemon-mounted; else fail daemon-mounted "$(cat $W/lazy.err)"; fi
expect mount OK "$(cfsmount $W/lazy-v.cfs $M basedir=$S:$L,digest=$D,verity_check=2)"

# The first read fetches exactly its object; it has fs-verity in the store.
expect first-read "lazy file 1" "$(cat $M/etc/f1)"
expect first-read-one-object "$(obj etc/f1)" "$(store_list)"
expect first-read-verity "$(dig etc/f1)" "$(cfs-vmtool verity-measure $S/$(obj etc/f1) 2>&1)"
expect first-read-fetched 1 "$(count $W/lazy.stats fetched)"
# Read again: the store answers, no second download.
expect second-read "lazy file 1" "$(cat $M/etc/f1)"
expect second-read-no-fetch 1 "$(count $W/lazy.stats fetched)"

# Eight readers at once of one missing object: one download.
pids=
for i in 1 2 3 4 5 6 7 8; do
	cfs-vmtool read $M/usr/bin/app > $W/par.$i &
	pids="$pids $!"
done
wait $pids
wait_ok=OK
for i in 1 2 3 4 5 6 7 8; do
	[ "$(cat $W/par.$i)" = OK ] || wait_ok="reader $i: $(cat $W/par.$i)"
done
expect parallel-readers OK "$wait_ok"
expect parallel-one-download 2 "$(count $W/lazy.stats fetched)"
expect parallel-verity "$(dig usr/bin/app)" "$(cfs-vmtool verity-measure $S/$(obj usr/bin/app) 2>&1)"

# Killed in the middle: local objects still read, missing ones fail
# promptly, nothing half-written is left; a restart goes on.
cfs-vmtool read $M/usr/lib/libbig.so > $W/killed-read 2>&1 &
kill -9 $LAZY
wait $LAZY 2>/dev/null
sleep 1
expect killed-local-reads "lazy file 1" "$(cat $M/etc/f1)"
expect killed-local-reads-big OK "$(readfile $M/usr/bin/app)"
t0=$(date +%s)
r=$(timeout 30 cfs-vmtool read $M/etc/f2)
t1=$(date +%s)
# the FUSE connection is gone: the lookup there fails, so does the open
expect killed-missing-fails "open ENOTCONN" "$r"
[ $((t1 - t0)) -le 20 ] && pass killed-no-hang || fail killed-no-hang "$((t1 - t0)) s"
expect killed-store-verified OK "$(store_verified)"
umount $L 2>/dev/null || umount -l $L
umount $M
if start_lazy http://127.0.0.1:8080; then pass restart-mounted; else fail restart-mounted "$(cat $W/lazy.err)"; fi
expect restart-mount OK "$(cfsmount $W/lazy-v.cfs $M basedir=$S:$L,digest=$D,verity_check=2)"
cfs-vmtool walk $M > $W/lazy.walk
if cmp -s /disk/lazy.expected $W/lazy.walk; then pass walk-equal; else
	fail walk-equal "$(diff /disk/lazy.expected $W/lazy.walk | head -n 4 | tr '\n' ' ')"; fi
expect walk-all-local "$(cut -d' ' -f1 /disk/lazy.digests | sed 's|^\(..\)|\1/|' | sort -u)" "$(store_list)"
expect walk-store-verified OK "$(store_verified)"
umount $M
kill -TERM $LAZY
wait $LAZY
expect sigterm-exit 0 "$?"
grep -q " $L fuse" /proc/mounts && fail sigterm-unmounted "still mounted" || pass sigterm-unmounted

# A mirror serving wrong content for one object: EIO, not stored; the
# others read.
rm -rf $S && mkdir -p $S
start_lazy http://127.0.0.1:8081 || fail bad-mirror-mounted "$(cat $W/lazy.err)"
expect bad-mount OK "$(cfsmount $W/lazy-v.cfs $M basedir=$S:$L,digest=$D,verity_check=2)"
expect bad-object-eio "open EIO" "$(readfile $M/usr/lib/libmid.so)"
[ -e $S/$BADOBJ ] && fail bad-object-not-stored "$S/$BADOBJ exists" || pass bad-object-not-stored
if grep -q "fs-verity digest" $W/lazy.err; then pass bad-object-reason; else fail bad-object-reason "$(cat $W/lazy.err)"; fi
expect bad-others-read "lazy file 3" "$(cat $M/etc/f3)"
expect bad-store-verified OK "$(store_verified)"
umount $M
kill -TERM $LAZY
wait $LAZY
expect bad-sigterm-exit 0 "$?"
expect bad-failed-count 1 "$(count $W/lazy.stats failed)"

kill $HTTPD $HTTPD_BAD
wait $HTTPD $HTTPD_BAD 2>/dev/null
grep -q " $L fuse\| $M " /proc/mounts && fail unmounted "$(grep " $L \| $M " /proc/mounts)" || pass unmounted
