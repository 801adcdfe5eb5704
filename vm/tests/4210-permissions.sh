# SPDX-License-Identifier: GPL-2.0 OR MIT
# Permission checks under the mounter's credentials: a mounter holding
# CAP_SYS_ADMIN but not CAP_DAC_OVERRIDE or CAP_DAC_READ_SEARCH can neither
# read, through the mount, a backing object that is 0600 and owned by
# another uid, nor mount an image it may not read. Root with every
# capability can do both. The module's own reads of an image on tmpfs
# (kernel_read) raise no inotify events on it.
SUITE=permissions
. /tests/lib.sh

command -v cfsctl > /dev/null || { skip all "no cfsctl in the guest"; exit 0; }
P=$W/perm M=/mnt/perm
rm -rf $P && mkdir -p $P/src $M
printf 'secret content\n' > $P/src/f
chmod 0644 $P/src/f
cfsctl build --digest-store $P/store $P/src $P/img.cfs > /dev/null ||
	{ fail build "cfsctl build"; exit 0; }
obj=$(find $P/store -type f)
[ "$(echo "$obj" | wc -l)" = 1 ] || { fail object "want one object, got: $obj"; exit 0; }
chown 1000:1000 "$obj"
chmod 0600 "$obj"
opts=basedir=$P/store,verity_check=0
nodac="cfs-vmtool dropcaps cfs-vmtool"

# The capabilities really are gone: the object cannot be read directly.
expect nodac-direct-read "open EACCES" "$($nodac read "$obj")"

expect nodac-mount OK "$($nodac mount $P/img.cfs $M $opts)"
expect nodac-stat 15 "$(stat -c %s $M/f)"
# Root opens the file here, but the backing file is opened as the mounter.
expect nodac-backing-open "open EACCES" "$(readfile $M/f)"
umount $M

expect root-mount OK "$(cfsmount $P/img.cfs $M $opts)"
expect root-read "secret content" "$(cat $M/f)"
umount $M

# The image itself: 0600 and owned by uid 1000.
cp $P/img.cfs $P/img-600.cfs
chown 1000:1000 $P/img-600.cfs
chmod 0600 $P/img-600.cfs
expect nodac-image EACCES "$($nodac mount $P/img-600.cfs $M $opts)"
expect root-image OK "$(cfsmount $P/img-600.cfs $M $opts)"
umount $M 2> /dev/null

cp /disk/small.cfs /tmp/perm-small.cfs
expect tmpfs-mount OK "$(cfsmount /tmp/perm-small.cfs $M basedir=/disk/store,verity_check=0)"
expect tmpfs-no-events events=0 "$(cfs-vmtool inotify /tmp/perm-small.cfs \
	sh -c "ls -l $M/sub > /dev/null && cfs-vmtool walk $M > /dev/null")"
expect tmpfs-read "small file a" "$(cat $M/a)"
umount $M
rm -f /tmp/perm-small.cfs
rm -rf $P
