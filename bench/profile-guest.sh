#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The guest side of bench/profile.sh: mounts each input's composefs image
# as bench/guest.sh does and runs each measured operation under
# 'perf record -a -e cpu-clock', printing the top kernel symbols and the
# composefs inode slab and kmalloc-8k counts around it.
export PATH=/bin:/sbin
. /disk/bench.conf
T=cfs-benchtool
echo CFS-PROFILE-BEGIN
echo 0 > /proc/sys/kernel/kptr_restrict
echo -1 > /proc/sys/kernel/perf_event_paranoid
perf --version 2>&1 | sed 's/^/perf: /'
slabs() { awk '$1 == "composefs_inode" || $1 == "kmalloc-8k" { printf "%s=%s ", $1, $2 }' /proc/slabinfo; echo; }

# prof NAME cold|warm ARGS...: one run of "cfs-benchtool ARGS" under perf
prof() {
	name=$1 mode=$2
	shift 2
	[ "$mode" = warm ] && $T "$@" > /dev/null
	[ "$mode" = cold ] && { sync; echo 3 > /proc/sys/vm/drop_caches; }
	echo "== $name $mode: $T $*"
	echo "slabs before: $(slabs)"
	if perf record -q -a -e cpu-clock -F 2000 -o /tmp/perf.data -- $T "$@" > /tmp/out 2>/tmp/perf.err; then
		echo "result: $(cat /tmp/out)"
		echo "slabs after: $(slabs)"
		perf report -i /tmp/perf.data --stdio --no-children --sort dso,sym \
			--percent-limit 1.5 2>/dev/null | grep -v '^#' | grep -v '^$' | head -n 25
	else
		echo "perf record failed: $(tail -n 3 /tmp/perf.err | tr '\n' ' ')"
	fi
}

for in in $INPUTS; do
	eval "store=\$${in}_store widest=\$${in}_widest"
	M=/mnt/cfs
	mkdir -p $M
	r=$(cfs-vmtool mount "/disk/$in.cfs" $M "basedir=/disk/$store,verity_check=0")
	[ "$r" = OK ] || { echo "ERROR mount $in: $r"; continue; }
	cp "/disk/$in.sample" /tmp/sample
	for mode in cold warm; do
		prof "$in walk" $mode walk $M
		prof "$in ls-lR" $mode run ls -lR $M
		prof "$in stat-sample" $mode stat $M /tmp/sample
		prof "$in readdir-widest" $mode readdir $M/$widest
		prof "$in read-all" $mode readall $M
	done
	umount $M
done
echo CFS-PROFILE-END
