# SPDX-License-Identifier: GPL-2.0 OR MIT
# Shared by the benchmark scripts: what a result is labelled with
# (bench_commit: bench/pull.sh, push.sh, scale.sh) and, for bench/run.sh
# and bench/lazy.sh, building what the guest needs and booting the vm/
# harness's kernel with "cfs.bench". Sourced, not run; the caller sets
# $top and defines say/die.

# bench_commit CFSCTL: the commit a host benchmark measures, printed: the
# checkout's, with "-dirty" when its tree differs from it (results and
# documents aside); or, for another cfsctl than the checkout's build, the
# version that cfsctl says it is.
bench_commit() {
	local c
	if [ "$1" != "$top/build/cfsctl" ]; then
		c=$("$1" --version 2> /dev/null | awk 'NR == 1 { print $2 }')
		echo "${c:-unknown}"
		return
	fi
	c=$(git -C "$top" log -1 --format=%h 2> /dev/null || echo unknown)
	[ -z "$(git -C "$top" status --porcelain --untracked-files=no -- . ':(exclude)bench/results' \
		':(exclude)docs' ':(exclude)README.md' 2> /dev/null)" ] || c=$c-dirty
	echo "$c"
}

# bench_setup OUT: builds cfsctl, composefs.ko, cfs-vmtool and
# cfs-benchtool into OUT and fetches the kernel; sets kdir, krel, modko,
# cfsctl, kcache and accel. With KREL=<release> (KREL=newest: the one
# 'make kernels' resolved), the module is built for that cached kernel,
# as 'make vm-test KREL=' builds it (vm/kmod-build.sh), and it boots.
bench_setup() {
	local out=$1 kinfo
	mkdir -p "$out"
	kinfo=$("$top/vm/kdir.sh" 2>&1) || die "$kinfo"
	kdir=$(sed -n 1p <<<"$kinfo") krel=$(sed -n 2p <<<"$kinfo")
	say "building cfsctl, composefs.ko and the guest tools"
	if [ -n "${KREL:-}" ]; then
		make -s -C "$top" build/cfsctl > "$out/build.log" 2>&1 &&
			modko=$("$top/vm/kmod-build.sh" "$krel" "$out/kmod-$krel" 2>> "$out/build.log")
	else
		make -s -C "$top" build/cfsctl kmod KDIR="$kdir" > "$out/build.log" 2>&1 &&
			modko=$top/kmod/composefs.ko
	fi || { tail -n 20 "$out/build.log" >&2; die "build failed (log: $out/build.log)"; }
	cfsctl=$top/build/cfsctl
	${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/cfs-vmtool" "$top/vm/cfs-vmtool.c"
	${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$out/cfs-benchtool" "$top/bench/cfs-benchtool.c"
	kcache=$("$top/vm/fetch-kernel.sh" "$krel") || die "cannot fetch linux-image-$krel-unsigned"
	accel=${CFS_VM_ACCEL:-tcg}
	if [ -z "${CFS_VM_ACCEL:-}" ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
		accel=kvm
	fi
}

# bench_boot INITRAMFS DISK LOG MEM_MIB TIMEOUT_S [LABEL EXPECTED_S]: boots
# the guest with DISK as its virtio disk, the serial console to LOG, and
# waits for it. With LABEL, prints a progress line on a terminal as the
# guest announces each figure (CFS-BENCH-FIGURE N OF WHAT). Fails unless
# the guest printed CFS-BENCH-END and no ERROR line. TCG with two CPUs now
# and then faults patching the kernel's own code early in boot (an oops in
# the idle task, before the initramfs runs, so before the disk is touched):
# such a boot is done again, once, and said (as bench/boot.sh does).
bench_boot() {
	if bench_boot_once "$@"; then
		return 0
	fi
	grep -q 'Comm: swapper' "$3" && ! grep -aq '^CFS-BENCH' "$3" ||
		{ tail -n 20 "$3" >&2; die "the guest did not finish (log: $3)"; }
	cp "$3" "$3.panic"
	say "the guest's kernel panicked before the initramfs ran (log: $3.panic); booting again"
	bench_boot_once "$@" ||
		{ tail -n 20 "$3" >&2; die "the guest did not finish (log: $3)"; }
}

# One boot of bench_boot: 1 when the guest printed no CFS-BENCH-END.
bench_boot_once() {
	local initrd=$1 disk=$2 log=$3 mem=$4 tmo=$5 label=${6:-} expected=${7:-0}
	local qemu start pid now line last=
	qemu=(qemu-system-x86_64 -accel "$accel" -m "$mem" -smp 2
		-nographic -no-reboot -serial mon:stdio
		-kernel "$kcache/boot/vmlinuz-$krel" -initrd "$initrd"
		-drive "file=$disk,if=virtio,format=raw,cache=none")
	[ "$accel" = tcg ] && qemu+=(-cpu max)
	say "booting the guest ($accel); its console is in $log"
	start=$(date +%s)
	timeout "$tmo" "${qemu[@]}" \
		-append "console=ttyS0 panic=-1 rdinit=/init loglevel=1 cfs.bench" < /dev/null > "$log" 2>&1 &
	pid=$!
	trap 'kill $pid 2> /dev/null' EXIT
	while kill -0 "$pid" 2> /dev/null; do
		sleep 5
		[ -n "$label" ] || continue
		line=$(grep -a '^CFS-BENCH-FIGURE' "$log" 2> /dev/null | tail -n 1) || line=
		now=$(( $(date +%s) - start ))
		if [ -t 2 ]; then
			printf '\rbench: %s: %s, %d:%02d elapsed%s\033[K' "$label" \
				"$(bench_figure "$line")" $((now / 60)) $((now % 60)) \
				"$([ "$expected" -gt 0 ] && printf ', about %d min expected' $(( (expected + 59) / 60 )))" >&2
		elif [ -n "$line" ] && [ "$line" != "$last" ]; then
			say "$label: $(bench_figure "$line"), $((now / 60)) min elapsed"
		fi
		last=$line
	done
	wait "$pid" || true
	trap - EXIT
	[ -n "$label" ] && [ -t 2 ] && printf '\n' >&2
	grep -q '^CFS-BENCH-END' "$log" || return 1
	if grep -q '^ERROR\|^R .* ERROR' "$log"; then
		grep '^ERROR\|^R .* ERROR' "$log" | head -n 5 >&2
		die "the guest reported errors (log: $log)"
	fi
	say "guest done in $(( $(date +%s) - start )) s"
}

# "CFS-BENCH-FIGURE 3 8 os walk cold" -> "figure 3 of 8 (os walk cold)"
bench_figure() {
	set -- $1
	[ $# -ge 3 ] || { echo "booting"; return; }
	shift
	local n=$1 m=$2
	shift 2
	echo "figure $n of $m ($*)"
}
