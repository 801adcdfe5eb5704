# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount --lazy-url: one command starts cfsctl lazy over the first
# basedir and mounts the image over it; a refused mount stops the daemon
# again; unmounting the daemon's directory stops it.
SUITE=lazy-mount
. /tests/lib.sh
need /disk/lazy.cfs /disk/store-lazy /disk/lazy.digests

if [ ! -c /dev/fuse ] || ! grep -qw fuse /proc/filesystems; then
	skip all "the kernel has no FUSE (/dev/fuse, fuse in /proc/filesystems)"
	exit 0
fi
ifconfig lo 127.0.0.1 up

M=/mnt/lazy-mount
S=$W/lazy-mount-store
U=http://127.0.0.1:8082
mkdir -p $M
dig() { awk -v f="$1" '$2 == f {print $1}' /disk/lazy.digests; }
lazy_mounts() { grep -c ' fuse.cfs-lazy ' /proc/mounts; }

httpd -f -p 127.0.0.1:8082 -h /disk/store-lazy &
HTTPD=$!
sleep 1
cp /disk/lazy.cfs $W/lazy-m.cfs
cfs-vmtool verity-enable $W/lazy-m.cfs
rm -rf $S && mkdir -p $S
before=$(lazy_mounts)

cfsctl mount --lazy-url $U $W/lazy-m.cfs $M > $W/lm.out 2> $W/lm.err
expect no-basedir-usage 2 "$?"

# A refused mount (wrong digest) leaves no daemon behind.
WRONG=$(printf '%064d' 0)
cfsctl mount --basedir $S --lazy-url $U --digest $WRONG $W/lazy-m.cfs $M > $W/lm.out 2> $W/lm.err
expect refused-exit 1 "$?"
expect refused-no-daemon "$before" "$(lazy_mounts)"

cfsctl mount --basedir $S --lazy-url $U --digest auto $W/lazy-m.cfs $M > $W/lm.out 2> $W/lm.err
expect mount 0 "$?"
expect daemon-mounted $((before + 1)) "$(lazy_mounts)"
case "$(grep " $M " /proc/mounts)" in
*"basedir=$S:/run/cfs-lazy/"*verity_check=2*) pass options ;;
*) fail options "$(grep " $M " /proc/mounts) $(cat $W/lm.err)" ;;
esac
expect read "lazy file 7" "$(cat $M/etc/f7)"
h=$(dig etc/f7)
expect fetched-verity "$h" "$(cfs-vmtool verity-measure $S/$(object $h) 2>&1)"
umount $M
L=$(grep ' fuse.cfs-lazy ' /proc/mounts | awk '{print $2}' | grep '^/run/cfs-lazy/' | tail -n 1)
umount "$L"
sleep 1
expect daemon-stopped "$before" "$(lazy_mounts)"
if pidof cfsctl > /dev/null; then fail daemon-exited "cfsctl still running: $(pidof cfsctl)"; else pass daemon-exited; fi
rmdir "$L" 2>/dev/null
kill $HTTPD
wait $HTTPD 2>/dev/null
true # the status of "wait" above is the killed httpd's
