# SPDX-License-Identifier: GPL-2.0 OR MIT
# Idmapped mounts through cfsctl mount --idmap, for a v1 image (the module)
# and an EROFS image (overlayfs over erofs): with a user namespace mapping
# 0 to 1000, a file of uid and gid 0 in the image shows as 1000:1000, an
# unmapped owner as the overflow id, and permission checks follow: the
# 0600 file is readable by uid 1000 and not by uid 1001. Without --idmap
# uid 1000 cannot read it.
SUITE=idmap
. /tests/lib.sh

command -v cfsctl > /dev/null || { skip all "no cfsctl in the guest"; exit 0; }
P=$W/idmap M=/mnt/idmap
rm -rf $P && mkdir -p $P/src $M
printf 'for uid 0\n' > $P/src/secret
chown 0:0 $P/src/secret
chmod 0600 $P/src/secret
printf 'uid 5 owns this\n' > $P/src/other
chown 5:5 $P/src/other
chmod 0644 $P/src/other
cfsctl build --digest-store $P/store $P/src $P/img.cfs > /dev/null &&
	cfsctl build --format=erofs --digest-store $P/store $P/src $P/img.erofs > /dev/null ||
	{ fail build "cfsctl build"; exit 0; }
overflow=$(cat /proc/sys/fs/overflowuid)

for fmt in cfs erofs; do
	# No fs-verity on the objects: v1 mounts must not check them.
	vc=
	[ $fmt = cfs ] && vc=--verity-check=0
	expect $fmt-plain-mount "" "$(cfsctl mount $vc --basedir=$P/store $P/img.$fmt $M 2>&1)"
	expect $fmt-plain-owner 0:0 "$(stat -c %u:%g $M/secret)"
	expect $fmt-plain-uid1000 "open EACCES" "$(cfs-vmtool asuser 1000 cfs-vmtool read $M/secret)"
	umount $M

	out=$(cfs-vmtool userns "0 1000 1" sh -c \
		"cfsctl mount $vc --idmap=\$CFS_USERNS --basedir=$P/store $P/img.$fmt $M" 2>&1)
	expect $fmt-idmap-mount "" "$out"
	grep -q " $M " /proc/mounts || { fail $fmt-idmap-mounted "nothing on $M"; continue; }
	expect $fmt-idmap-owner 1000:1000 "$(stat -c %u:%g $M/secret)"
	expect $fmt-idmap-unmapped $overflow "$(stat -c %u $M/other)"
	expect $fmt-idmap-uid1000 OK "$(cfs-vmtool asuser 1000 cfs-vmtool read $M/secret)"
	expect $fmt-idmap-content "for uid 0" "$(cfs-vmtool asuser 1000 cat $M/secret)"
	expect $fmt-idmap-uid1001 "open EACCES" "$(cfs-vmtool asuser 1001 cfs-vmtool read $M/secret)"
	expect $fmt-idmap-other OK "$(cfs-vmtool asuser 1001 cfs-vmtool read $M/other)"
	umount $M
done
rm -rf $P
