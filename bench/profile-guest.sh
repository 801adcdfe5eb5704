#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The guest side of bench/profile.sh: mounts each input's composefs image
# as bench/guest.sh does and runs each measured operation under
# 'perf record -a -e cpu-clock', printing the top kernel symbols, the
# composefs inode slab and kmalloc-8k counts around it and how many read
# requests the disk completed meanwhile. /disk/bench.conf
# names the input (INPUT, STORE, WIDEST), the operations (OPS) and the
# systems (SYSTEMS: cfs, the default, and erofs and store, to set beside
# it; store reads the objects straight from the disk, for read-all only,
# tree the image's tree of hardlinks to them on the disk's ext4, cfs-v the
# image copied here, sealed and mounted with digest= as bench/guest.sh
# does, and cfs-c the same copy unsealed, to tell where an image file lies
# from whether it is sealed),
# and CHILDREN, functions whose share with their callees is printed too
# (recorded with call graphs).
export PATH=/bin:/sbin
. /disk/bench.conf
T=cfs-benchtool
echo CFS-PROFILE-BEGIN
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
perf --version 2>&1 | sed 's/^/perf: /'
# read requests completed by the bench disk (the first field of its stat)
disk_reads() { read -r n _ < /sys/block/vda/stat; echo "$n"; }
slabs() { awk '$1 == "composefs_inode" || $1 == "kmalloc-8k" { printf "%s=%s ", $1, $2 }' /proc/slabinfo; echo; }

# prof NAME cold|warm N ARGS...: "cfs-benchtool ARGS" under perf, once
# cold, N times in a row warm (a warm readdir is over too soon for enough
# samples of one run)
prof() {
	name=$1 mode=$2 n=$3
	shift 3
	[ "$mode" = warm ] && $T "$@" > /dev/null
	# twice, as bench/guest.sh drops them
	[ "$mode" = cold ] && { sync; echo 3 > /proc/sys/vm/drop_caches
		echo 3 > /proc/sys/vm/drop_caches; n=1; }
	r0=$(disk_reads)
	echo "== $name $mode (${n}x): $T $*"
	echo "slabs before: $(slabs)"
	if perf record -q -a ${CHILDREN:+-g} -e cpu-clock -F 2000 -o /tmp/perf.data -- \
		sh -c 'n=$1; shift; i=0; while [ $i -lt $n ]; do '$T' "$@" || exit 1; i=$((i + 1)); done' \
		sh "$n" "$@" > /tmp/out 2>/tmp/perf.err; then
		echo "result: $(tail -n 1 /tmp/out)"
		echo "disk read requests: $(($(disk_reads) - r0))"
		echo "slabs after: $(slabs)"
		perf report -i /tmp/perf.data --stdio --no-children --sort dso,sym -g none \
			--percent-limit ${LIMIT:-1.5} 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n ${TOP:-25}
		if [ -n "$CHILDREN" ]; then
			# The share of samples under each named function, its
			# callees included ("children"), then its own ("self").
			echo "under (children, self):"
			perf report -i /tmp/perf.data --stdio --children --sort sym -g none \
				--percent-limit 0 2>/dev/null > /tmp/children
			for f in $CHILDREN; do
				awk -v f="$f" '$NF == f { print "    " $1 " " $2 " " f; found = 1; exit }
					END { if (!found) print "    -      -      " f }' /tmp/children
			done
		fi
	else
		echo "perf record failed: $(tail -n 3 /tmp/perf.err | tr '\n' ' ')"
	fi
}

want() { case " $OPS " in *" $1 "*) return 0 ;; esac; return 1; }

cp "/disk/$INPUT.sample" /tmp/sample
for sys in ${SYSTEMS:-cfs}; do
	M=/mnt/$sys
	mkdir -p $M
	case $sys in
	cfs) r=$(cfs-vmtool mount "/disk/$INPUT.cfs" $M "basedir=/disk/$STORE,verity_check=0") ;;
	cfs-c | cfs-v) # a copy of the image made here, sealed or not
		v=/disk/$INPUT.$sys
		rm -f "$v"
		cp "/disk/$INPUT.cfs" "$v" && sync -f "$v"
		o=
		[ $sys = cfs-v ] && cfs-vmtool verity-enable "$v" > /dev/null &&
			o=,digest=$(cfs-vmtool verity-measure "$v")
		r=$(cfs-vmtool mount "$v" $M "basedir=/disk/$STORE,verity_check=0$o") ;;
	erofs) r=$(mount -t erofs -o loop,ro "/disk/$INPUT.erofs" $M 2>&1 && echo OK) ;;
	store) r=OK ;; # the objects themselves: read-all only
	tree) M=/disk/$TREE; r=OK ;; # the tree of hardlinks to them
	*) r="unknown system" ;;
	esac
	if [ "$r" != OK ]; then
		echo "ERROR mount $sys $INPUT: $r"
		continue
	fi
	for mode in cold warm; do
		want walk && prof "$sys $INPUT walk" $mode 5 walk $M
		want ls-lR && prof "$sys $INPUT ls-lR" $mode 2 run ls -lR $M
		want stat-sample && prof "$sys $INPUT stat-sample" $mode 50 stat $M /tmp/sample
		want readdir-widest && prof "$sys $INPUT readdir-widest" $mode 200 readdir $M/$WIDEST
		if [ $sys = store ]; then
			want read-all && prof "store $INPUT read-all" $mode 3 readlist /disk/$STORE /disk/$INPUT.objects
			continue
		fi
		want read-all && prof "$sys $INPUT read-all" $mode 3 readall $M
	done
	case $sys in cfs* | erofs) umount $M ;; esac
done
echo CFS-PROFILE-END
