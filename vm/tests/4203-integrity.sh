# SPDX-License-Identifier: GPL-2.0 OR MIT
# fs-verity: digest= against the image, recorded digests against backing
# files, verity_check=0|1|2, objects replaced under a mount (warm and
# cold); every refusal with its errno.
SUITE=integrity
. /tests/lib.sh
need /disk/small.cfs /disk/small.digests

M=/mnt/int
dig() { awk -v f="$1" '$2 == f {print $1}' /disk/small.digests; }
OA=$(object "$(dig a)")

# Stores: with verity, without verity, with a wrong object, for replacing.
for s in v nov bad rep; do rm -rf $W/store-$s; cp -a /disk/store $W/store-$s; done
find $W/store-v $W/store-bad $W/store-rep -type f | xargs cfs-vmtool verity-enable
cp /disk/small.cfs $W/small-v.cfs
cfs-vmtool verity-enable $W/small-v.cfs
D=$(cfs-vmtool verity-measure $W/small-v.cfs)
case "$D" in ????????????????????????????????????????????????????????????????) pass measure ;; *) fail measure "$D" ;; esac
printf 'not the content\n' > $W/other
rm -f $W/store-bad/$OA && cp $W/other $W/store-bad/$OA && cfs-vmtool verity-enable $W/store-bad/$OA

expect digest-ok OK "$(cfsmount $W/small-v.cfs $M basedir=$W/store-v,digest=$D)"
expect digest-ok-read OK "$(readfile $M/a)"
expect digest-ok-content "small file a" "$(cat $M/a)"
case "$(grep " $M " /proc/mounts)" in
*"digest=$D"*verity_check=2*) pass digest-shown ;;
*) fail digest-shown "$(grep " $M " /proc/mounts)" ;;
esac
umount $M

WRONG=$(echo "$D" | sed 's/^./0/; t; s/^/x/')
[ "$WRONG" = "$D" ] && WRONG=$(echo "$D" | sed 's/^./1/')
expect digest-wrong EIO "$(cfsmount $W/small-v.cfs $M basedir=$W/store-v,digest=$WRONG)"
expect digest-no-verity ENODATA "$(cfsmount /disk/small.cfs $M basedir=$W/store-v,digest=$D)"
if dmesg | grep -q 'image has no fs-verity'; then pass digest-no-verity-logged; else fail digest-no-verity-logged "no message"; fi

expect object-no-verity-mount OK "$(cfsmount /disk/small.cfs $M basedir=$W/store-nov,verity_check=1)"
expect object-no-verity "open EIO" "$(readfile $M/a)"
if dmesg | grep -q 'composefs: /a: backing file has no fs-verity'; then pass object-no-verity-logged; else fail object-no-verity-logged "no message naming the file"; fi
umount $M
expect object-no-verity-check0 OK "$(cfsmount /disk/small.cfs $M basedir=$W/store-nov,verity_check=0)"
expect object-no-verity-check0-read OK "$(readfile $M/a)"
umount $M

expect other-content-mount OK "$(cfsmount /disk/small.cfs $M basedir=$W/store-bad,verity_check=1)"
expect other-content "open EIO" "$(readfile $M/a)"
expect other-content-others-fine OK "$(readfile $M/sub/c)"
if dmesg | grep -q 'composefs: /a: backing file has the wrong fs-verity digest'; then pass other-content-logged; else fail other-content-logged "no message"; fi
umount $M

expect replaced-mount OK "$(cfsmount $W/small-v.cfs $M basedir=$W/store-rep,digest=$D)"
expect replaced-before OK "$(readfile $M/a)"
cp $W/other $W/replacement && cfs-vmtool verity-enable $W/replacement && mv $W/replacement $W/store-rep/$OA
# The inode keeps the object its first open checked, until it is evicted.
expect replaced-kept OK "$(readfile $M/a)"
sleep 1 # the close may finish a tick later, in a workqueue
for i in 1 2 3 4; do echo 2 > /proc/sys/vm/drop_caches; done
expect replaced-after "open EIO" "$(readfile $M/a)"
umount $M

# The same for an object replaced by one of its size with other content,
# after the file was read (its pages cached): opens keep reading the
# object they were verified against, a descriptor opened before the
# replacement too, and once the inode is evicted the next open fails with
# EIO, whether the replacement has fs-verity (of another digest) or none.
OB=$(object "$(dig b)")
rm -rf $W/store-same && cp -a /disk/store $W/store-same
find $W/store-same -type f | xargs cfs-vmtool verity-enable
for v in verity no-verity; do
	expect same-size-$v-mount OK "$(cfsmount $W/small-v.cfs $M basedir=$W/store-same,digest=$D)"
	before=$(md5sum < $M/b | cut -d' ' -f1)
	expect same-size-$v-before "$(md5sum < /disk/store/$OB | cut -d' ' -f1)" "$before"
	exec 3< $M/b
	head -c "$(stat -c %s $M/b)" /dev/urandom > $W/replacement
	[ $v = verity ] && cfs-vmtool verity-enable $W/replacement
	mv $W/replacement $W/store-same/$OB
	expect same-size-$v-warm "$before" "$(md5sum < $M/b | cut -d' ' -f1)"
	expect same-size-$v-open-before "$before" "$(md5sum <&3 | cut -d' ' -f1)"
	exec 3<&-
	sleep 1
	for i in 1 2 3 4; do echo 3 > /proc/sys/vm/drop_caches; done
	expect same-size-$v-cold "open EIO" "$(readfile $M/b)"
	umount $M
	cp /disk/store/$OB $W/replacement && cfs-vmtool verity-enable $W/replacement &&
		mv $W/replacement $W/store-same/$OB
done
rm -rf $W/store-same

expect no-digests-check2-mount OK "$(cfsmount /disk/plain.cfs $M basedir=/disk/plain,verity_check=2)"
expect no-digests-check2 "open EIO" "$(readfile $M/file)"
if dmesg | grep -q 'image records no fs-verity digest'; then pass no-digests-logged; else fail no-digests-logged "no message"; fi
umount $M
expect no-digests-check1-mount OK "$(cfsmount /disk/plain.cfs $M basedir=/disk/plain,verity_check=1)"
expect no-digests-check1 OK "$(readfile $M/file)"
umount $M

if [ -x /bin/cfsctl ] && cfsctl mount --help >/dev/null 2>&1; then
	if cfsctl mount --digest auto --basedir $W/store-v $W/small-v.cfs $M; then
		case "$(grep " $M " /proc/mounts)" in
		*"digest=$D"*) pass cfsctl-mount-digest-auto ;;
		*) fail cfsctl-mount-digest-auto "$(grep " $M " /proc/mounts)" ;;
		esac
		umount $M
	else
		fail cfsctl-mount-digest-auto "cfsctl mount failed"
	fi
	cfsctl mount --digest $WRONG --basedir $W/store-v $W/small-v.cfs $M 2>/tmp/err
	expect cfsctl-mount-wrong-exit 1 "$?"
	grep -q "cfsctl: mount" /tmp/err && pass cfsctl-mount-message || fail cfsctl-mount-message "$(cat /tmp/err)"
else
	skip cfsctl-mount "no cfsctl with a mount verb in the VM"
fi

# cfsctl build into a store on ext4 with verity: every new object gets
# fs-verity before its name (it is written as an unnamed file, opened again
# read-only and linked), its measured digest is its name, and a mount with
# verity_check=2 reads it. A second build over the store leaves it alone.
if command -v cfsctl > /dev/null; then
	P=$W/int-build
	rm -rf $P && mkdir -p $P/src
	for i in 1 2 3 4 5 6 7 8; do printf 'object %s\n' $i > $P/src/f$i; done
	head -c 3000000 /dev/urandom > $P/src/large # hashed while copied
	if cfsctl build --require-verity --digest-store $P/store $P/src $P/img.cfs > /dev/null; then
		n=0 bad=
		for o in $(cd $P/store && find . -type f | sed 's,^\./,,'); do
			n=$((n + 1))
			d=$(cfs-vmtool verity-measure $P/store/$o)
			[ "$d" = "${o%%/*}${o#*/}" ] || bad="$bad $o:$d"
		done
		expect build-objects 9 "$n"
		expect build-objects-verity "" "$bad"
		expect build-temporaries "" "$(find $P/store -maxdepth 1 -name '.tmp-*')"
		if cfsmount $P/img.cfs $M basedir=$P/store,verity_check=2 > /dev/null; then
			cmp -s $P/src/large $M/large && pass build-read-large || fail build-read-large "content differs"
			expect build-read-small "object 5" "$(cat $M/f5)"
			umount $M
		else
			fail build-mount "verity_check=2 refused the built store"
		fi
		before=$(ls -li $P/store/*/* | md5sum)
		cfsctl build --require-verity --digest-store $P/store $P/src $P/img2.cfs > /dev/null &&
			cmp -s $P/img.cfs $P/img2.cfs || fail build-again "second build failed or differs"
		expect build-again-untouched "$before" "$(ls -li $P/store/*/* | md5sum)"
	else
		fail build "cfsctl build --require-verity into ext4 with verity"
	fi
	rm -rf $P
else
	skip build "no cfsctl in the guest"
fi
