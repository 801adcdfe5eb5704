# SPDX-License-Identifier: GPL-2.0 OR MIT
# What --digest measured is what is mounted, however the image's name is
# swapped. An attacker who can rename entries in the image's directory
# exchanges the measured image with another one (renameat2 RENAME_EXCHANGE)
# at each moment cfsctl mount opens it: cfs-vmtool swap-on-open holds the
# Nth open of the image on a fanotify permission event, swaps the names,
# and lets the open go on. Whichever open it is, the mount must be refused
# or show the measured tree: never the other image's. Both formats: v1,
# whose digest= the module checks on the file it opens, and composefs 1.0,
# which cfsctl measures and mounts through one open file.
SUITE=mount-swap
. /tests/lib.sh
need /disk/small.cfs /disk/small.erofs /disk/rich.cfs /disk/rich.erofs /disk/store
if ! command -v cfsctl >/dev/null; then
	skip all "no cfsctl in the guest"
	exit 0
fi
M=/mnt/swap
mkdir -p $M
rm -rf $W/swapstore && cp -a /disk/store $W/swapstore
if ! find $W/swapstore -type f | xargs cfs-vmtool verity-enable >/dev/null 2>&1; then
	skip all "fs-verity cannot be enabled on the test disk"
	exit 0
fi
if ! cfs-vmtool swap-on-open 1 /disk/small.cfs /disk/small.cfs true >/dev/null 2>&1; then
	skip all "no fanotify permission events in this kernel"
	exit 0
fi

for fmt in cfs erofs; do
	good=$W/swap-good.$fmt bad=$W/swap-bad.$fmt
	rm -f $good $bad
	cp /disk/small.$fmt $good && cfs-vmtool verity-enable $good >/dev/null
	cp /disk/rich.$fmt $bad
	D=$(cfs-vmtool verity-measure $good)
	gino=$(stat -c %i $good)
	swaps=0 mounted=0 bad_mounts=
	for n in 1 2 3 4 5 6; do
		out=$(cfs-vmtool swap-on-open $n $good $bad \
			cfsctl mount --basedir $W/swapstore --digest $D $good $M 2>&1)
		case "$out" in *swapped=1*) swaps=$((swaps + 1)) ;; esac
		if grep -q " $M " /proc/mounts; then
			mounted=$((mounted + 1))
			# the other image is the rich tree: hello.txt; the measured
			# one is the small tree: a
			if [ -e $M/hello.txt ] || [ "$(cat $M/a 2>/dev/null)" != "small file a" ]; then
				bad_mounts="$bad_mounts $n"
			fi
			umount $M
		fi
		# put the names back for the next round
		if [ "$(stat -c %i $good)" != "$gino" ]; then
			mv $good $W/swap-tmp && mv $bad $good && mv $W/swap-tmp $bad
		fi
	done
	# the attack was made: some open was swapped, and some mount still
	# went through (of the measured image)
	if [ $swaps -ge 2 ] && [ $mounted -ge 1 ]; then
		pass "$fmt-swaps-made ($swaps swaps, $mounted mounts)"
	else
		fail "$fmt-swaps-made" "$swaps swaps, $mounted mounts"
	fi
	expect "$fmt-never-other-image" "" "$bad_mounts"
	rm -f $good $bad
done
