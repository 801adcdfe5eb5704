#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The measurements of one part of 'make bench', run in the guest by vm/init
# (kernel command line "cfs.bench") as /bin/cfs-bench. /disk/bench.conf
# names the input, the figures (METRICS, each cold and warm) and, for the
# versions part, the pair of trees whose page-cache sharing is measured.
# For an input it mounts the composefs image (over its digest store), the
# same image sealed by fs-verity and mounted with digest= ("cfs-v"), the
# composefs 1.0 image (EROFS + overlayfs over the same store, as cfsctl
# mount does it), the squashfs images (default compression and
# uncompressed) and the erofs image (loop mounts), all from the one bench
# disk, and measures each figure on every system, interleaving the systems
# run by run so drift hits all alike. The read figures are also measured on
# two references on the bench disk's ext4: "tree", the image's tree as plain
# directories whose files are hardlinks to the store's objects (read with
# the same walk and opens as a mount), and "store", each file's object
# opened and read by its path in the store with no walk, the limit for the
# two composefs systems.
# Cold runs drop the page, dentry and inode caches first; warm runs follow
# one unmeasured priming run. A warm run of the random lstats makes
# STAT_PASSES passes over the sample and reports one pass's mean: a single
# pass takes about 15 ms, too short to average out the host's scheduling
# under TCG, which made the medians of five runs bimodal. Prints one line
# per sample:
#   R INPUT METRIC cold|warm SYSTEM RUN NS COUNT BYTES PGPGIN_KIB
# for the page-cache sharing of two versions A and B of a tree:
#   S PAIR SYSTEM RUN GROWTH_A_KIB GROWTH_B_KIB
# and before each figure, for the host's progress line:
#   CFS-BENCH-FIGURE N OF WHAT
export PATH=/bin:/sbin
. /disk/bench.conf
SYSTEMS="cfs cfs-v cfs1 squashfs squashfs-u erofs"
T=cfs-benchtool
STAT_PASSES=20

# Twice: a composefs inode evicted by the first closes the backing file it
# kept only as the writer returns (a delayed fput), so the object's ext4
# dentry and inode stay cached through it, and the next system would read
# the store with its inodes warm. The second drops them.
drop() { sync; echo 3 > /proc/sys/vm/drop_caches; echo 3 > /proc/sys/vm/drop_caches; }

# mount_sys SYSTEM INPUT MNT STORE
mount_sys() {
	mkdir -p "$3"
	case $1 in
	cfs) r=$(cfs-vmtool mount "/disk/$2.cfs" "$3" "basedir=/disk/$4,verity_check=0")
	     [ "$r" = OK ] || { echo "ERROR mount $1 $2: $r"; return 1; } ;;
	# the same image sealed by fs-verity and mounted with its digest=, as
	# it is deployed: the module lists a directory chunk it has checked
	# once in place from then on (the bench disk's ext4 has verity)
	cfs-v) v=/disk/$2.cfs-v
	     if [ ! -e "$v" ]; then
		cp "/disk/$2.cfs" "$v.tmp" && cfs-vmtool verity-enable "$v.tmp" > /dev/null &&
			mv "$v.tmp" "$v" || { echo "ERROR verity $1 $2"; return 1; }
	     fi
	     r=$(cfs-vmtool mount "$v" "$3" "basedir=/disk/$4,digest=$(cfs-vmtool verity-measure "$v"),verity_check=0")
	     [ "$r" = OK ] || { echo "ERROR mount $1 $2: $r"; return 1; } ;;
	cfs1) r=$(cfsctl mount --basedir="/disk/$4" "/disk/$2.cfs1" "$3" 2>&1) ||
	     { echo "ERROR mount $1 $2: $r"; return 1; } ;;
	squashfs) mount -t squashfs -o loop,ro "/disk/$2.sqfs" "$3" ;;
	squashfs-u) mount -t squashfs -o loop,ro "/disk/$2.sqfsu" "$3" ;;
	erofs) mount -t erofs -o loop,ro "/disk/$2.erofs" "$3" ;;
	esac
}

umount_all() {
	# (its own loop variable: sh has no locals, callers loop over $s)
	for u in $SYSTEMS; do umount "/mnt/$u" 2>/dev/null; done
	# busybox leaves the loop devices bound
	for l in /dev/loop[0-9]*; do losetup -d "$l" 2>/dev/null; done
}

fig=0
figure() { fig=$((fig + 1)); echo "CFS-BENCH-FIGURE $fig $FIGURES $*"; }

# measure INPUT METRIC cold|warm: runs "cfs-benchtool $ARGS", "@" = the
# mount point, on every system, "cfs-benchtool $TARGS" as the system "tree"
# if TARGS is set and "cfs-benchtool $SARGS" as the system "store" if SARGS
# is set
measure() {
	in=$1 metric=$2 mode=$3
	figure "$in $metric $mode"
	if [ "$mode" = warm ]; then
		for s in $SYSTEMS ${TARGS:+tree} ${SARGS:+store}; do
			$T $(args_of $s) > /dev/null
		done
	fi
	run=1
	while [ $run -le "$RUNS" ]; do
		for s in $SYSTEMS ${TARGS:+tree} ${SARGS:+store}; do
			[ "$mode" = cold ] && drop
			line=$($T $(args_of $s)) || line="ERROR"
			echo "R $in $metric $mode $s $run $line"
		done
		run=$((run + 1))
	done
}

args_of() {
	case $1 in
	tree) echo "$TARGS" ;;
	store) echo "$SARGS" ;;
	*) echo "$ARGS" | sed "s|@|/mnt/$1|g" ;;
	esac
}

# The figures of one input: METRICS, each cold then warm.
if [ -n "$INPUT" ]; then
	in=$INPUT
	umount_all
	for s in $SYSTEMS; do mount_sys "$s" "$in" "/mnt/$s" "$STORE"; done
	cp "/disk/$in.sample" /tmp/sample
	cp "/disk/$in.objects" /tmp/objects
	S=/disk/$STORE
	X=${TREE:+/disk/$TREE}
	for mode in cold warm; do
		for metric in $METRICS; do
			SARGS= TARGS=
			case $metric in
			walk) ARGS="walk @" ;;
			ls-lR) ARGS="run ls -lR @" ;;
			stat-sample) ARGS="stat @ /tmp/sample $([ $mode = warm ] && echo $STAT_PASSES)" ;;
			readdir-widest) ARGS="readdir @/$WIDEST" ;;
			read-all) SARGS="readlist $S /tmp/objects" ARGS="readall @" ;;
			seq-4k) SARGS="seq $S/$BIGOBJ" ARGS="seq @/$BIG" ;;
			rand-4k) SARGS="rand $S/$BIGOBJ $RAND" ARGS="rand @/$BIG $RAND" ;;
			*) echo "ERROR unknown metric $metric"; continue ;;
			esac
			# the read figures: the tree as if it were a mount
			[ -n "$SARGS" ] && [ -n "$X" ] && TARGS=$(echo "$ARGS" | sed "s|@|$X|g")
			measure "$in" "$metric" $mode
		done
	done
	umount_all
fi

# Page-cache sharing: read all of version A, then all of B; how much the
# page cache (Cached + Buffers) grew each time. The loop-mounted systems
# cache their image file's pages on the disk's filesystem as well as their
# own, which counts: it is memory they take.
if [ -n "$PAIR" ]; then
	set -- $PAIR
	a=$1 b=$2
	figure "$a+$b sharing"
	run=1
	while [ $run -le "$RUNS" ]; do
		for s in $SYSTEMS; do
			umount_all
			mount_sys "$s" "$a" /mnt/a "$STORE" && mount_sys "$s" "$b" /mnt/b "$STORE" || continue
			drop
			c0=$($T cached)
			$T readall /mnt/a > /dev/null
			c1=$($T cached)
			$T readall /mnt/b > /dev/null
			c2=$($T cached)
			echo "S $a+$b $s $run $((c1 - c0)) $((c2 - c1))"
			umount /mnt/a; umount /mnt/b
		done
		run=$((run + 1))
	done
	umount_all
fi
echo "CFS-BENCH-END"
