#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs the composefs VM tests from the host: builds composefs.ko, cfsctl and
# cfs-vmtool, fetches Debian's matching kernel (vm/fetch-kernel.sh), makes
# the test disk (vm/mkdisk.sh) and the initramfs (vm/mkinitramfs.sh), boots
# QEMU once (KVM when /dev/kvm exists, TCG otherwise) and relays the guest's
# PASS/FAIL/SKIP lines, ending with "N passed, N failed". Exits non-zero on
# any failure, or when the guest does not finish in time.
#
# Usage: vm/run-tests.sh [--shell | --demo | --fuzz | --soak]
#   --shell  boot the same VM to an interactive shell (make vm-shell)
#   --demo   boot it and run the demo script (vm/demo-guest.sh)
#   --fuzz   boot it with slub_debug=FZPU on the caches composefs uses and
#            run the VM fuzzer instead of the tests (make vm-fuzz;
#            vm/fuzz-guest.sh)
#   --soak   boot it with slub_debug=FZPU and run only the soak test
#            (vm/tests/4218-soak.sh) for CFS_SOAK_SECONDS (make vm-soak)
# Environment: KDIR, KREL (a cached kernel release to build for and boot,
# vm/kdir.sh: 6.12's or the newest's of 'make kernels'; 'newest' for that
# one), CFS_VM_TIMEOUT (seconds, default 1800: a hang guard, wide enough
# for a suite that shares the CPUs with make check's other tests; with
# --fuzz the fuzzing time plus 900), CFS_VM_MEM (MiB, default 1024), CFS_VM_ACCEL (kvm
# or tcg), CFSCTL (use this cfsctl instead of building one),
# CFS_VMFUZZ_SECONDS (default 600), CFS_VMFUZZ_SEED (default: a new one,
# printed; give it again to repeat a run's mutants), CFS_VMFUZZ_SLUB (the
# slub_debug= of a --fuzz run, instead of the default list), CFS_VM_TESTS (the
# numbers of the tests to run, such as "02 09"; default all),
# CFS_SOAK_SECONDS (with --soak; default 1200; the timeout is twice that
# plus 900).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
mode=test
case ${1:-} in
--shell) mode=shell ;;
--demo) mode=demo ;;
--fuzz) mode=fuzz ;;
--soak) mode=soak ;;
"") ;;
*) echo "usage: vm/run-tests.sh [--shell | --demo | --fuzz | --soak]" >&2; exit 2 ;;
esac
# Each kernel line has its own folder: the newest kernel's suite (KREL) can
# run beside the 6.12 one.
out=$top/build/vm${KREL:+/$KREL}
mkdir -p "$out"
log=$out/serial.log

die() { echo "FAIL vm/$1"; echo "0 passed, 1 failed"; exit 1; }

# The module's build tree and its release (vm/kdir.sh: KDIR, or the
# headers 'make deps' fetched); the VM boots that very kernel.
kinfo=$("$top/vm/kdir.sh" 2>&1) || die "setup: $kinfo"
kdir=$(sed -n 1p <<<"$kinfo") krel=$(sed -n 2p <<<"$kinfo") kroot=$(sed -n 3p <<<"$kinfo")

# Build what the guest needs. Quietly; on failure show why.
if [ -n "${KREL:-}" ]; then
	modko=$("$top/vm/kmod-build.sh" "$krel" "$out/kmod-$krel" 2> "$out/build.log") || {
		tail -n 20 "$out/build.log" >&2
		die "build-module: the build for $krel failed (log: $out/build.log)"
	}
elif make -s -C "$top" kmod KDIR="$kdir" > "$out/build.log" 2>&1; then
	modko=$top/kmod/composefs.ko
else
	tail -n 20 "$out/build.log" >&2
	die "build-module: make kmod failed (log: $out/build.log)"
fi
cfsctl=${CFSCTL:-}
if [ -z "$cfsctl" ]; then
	if make -s -C "$top" build/cfsctl >> "$out/build.log" 2>&1; then
		cfsctl=$top/build/cfsctl
	fi
fi
if [ -n "$cfsctl" ] && ! "$cfsctl" build --help > /dev/null 2>&1; then
	cfsctl=
fi
vmtool=$out/cfs-vmtool
if [ ! -x "$vmtool" ] || [ "$top/vm/cfs-vmtool.c" -nt "$vmtool" ]; then
	${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$vmtool" "$top/vm/cfs-vmtool.c" ||
		die "build-vmtool: cannot build cfs-vmtool"
fi
vmfuzz=$out/cfs-vmfuzz
if [ ! -x "$vmfuzz" ] || [ "$top/vm/cfs-vmfuzz.c" -nt "$vmfuzz" ] ||
	[ "$top/common/cfs-format.h" -nt "$vmfuzz" ]; then
	${CC:-cc} -static -O2 -Wall -Wextra -Werror -I "$top/common" -o "$vmfuzz" "$top/vm/cfs-vmfuzz.c" ||
		die "build-vmfuzz: cannot build cfs-vmfuzz"
fi

kcache=$("$top/vm/fetch-kernel.sh" "$krel") || die "fetch-kernel: cannot fetch linux-image-$krel-unsigned"
vmlinuz=$kcache/boot/vmlinuz-$krel

# The disk depends on cfsctl and the scripts that make its content. The
# demo has a small disk of its own.
disk=disk demo_only=
if [ "$mode" = demo ]; then
	disk=demo-disk demo_only=1
	[ -n "$cfsctl" ] || die "demo: needs 'cfsctl build'"
fi
stamp=$out/$disk.stamp
want_stamp=$(cat "$top/vm/mkdisk.sh" "$top/vm/mktree.sh" "$top/vm/corrupt-image.py" "$top/vm/dir-images.py" \
	"$top/tests/lib/oci-layers.py" "$top/tests/lib/mkoci.py" "$top/tests/lib/oci-push.py" \
	${cfsctl:+"$cfsctl"} "$vmtool" 2>/dev/null | md5sum | cut -d' ' -f1)
if [ ! -f "$out/$disk.img" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want_stamp" ]; then
	if [ -z "$cfsctl" ]; then
		echo "note: no 'cfsctl build' yet: the disk has no images and their tests skip" >&2
	fi
	CFS_DISK_DEMO_ONLY=$demo_only "$top/vm/mkdisk.sh" "$out/work" "$cfsctl" "$vmtool" \
		> "$out/mkdisk.log" 2>&1 ||
		{ tail -n 20 "$out/mkdisk.log" >&2; die "mkdisk: cannot make the test disk (log: $out/mkdisk.log)"; }
	mv "$out/work/disk.img" "$out/$disk.img"
	echo "$want_stamp" > "$stamp"
fi
# Each run starts from the pristine disk: tests write to it.
cp --sparse=always "$out/$disk.img" "$out/run.img"

# The module as 'dkms build' makes it for a user, loaded by 4200-dkms.sh.
dkms_ko="SKIP dkms is not installed (Debian package dkms; make deps)"
if [ -n "$kroot" ]; then
	dkms_ko="SKIP dkms builds here for this machine's releases; $krel's tree runs in its own root"
elif [ "$mode" = test ] && command -v dkms >/dev/null; then
	if ko=$("$top/vm/dkms-build.sh" "$out/dkms" "$kdir" "$krel" 2> "$out/dkms.log"); then
		dkms_ko=$ko
	else
		dkms_ko="FAIL dkms build failed: $(tail -n 3 "$out/dkms.log" | tr '\n' ' ')"
	fi
fi
CFS_INITRAMFS_DKMS=$dkms_ko \
"$top/vm/mkinitramfs.sh" "$out/initramfs.cpio.gz" "$kcache" "$krel" \
	"$modko" "$vmtool" "$cfsctl" || die "initramfs: cannot build it"

# KVM only where it can work: a /dev/kvm node alone is not enough (nested
# setups without vmx/svm fail with "KVM internal error").
accel=${CFS_VM_ACCEL:-tcg}
if [ -z "${CFS_VM_ACCEL:-}" ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=kvm
fi
append="console=ttyS0 panic=-1 rdinit=/init"
if [ "$mode" = soak ]; then
	CFS_VM_TESTS=4218
fi
if [ -n "${CFS_VM_TESTS:-}" ]; then
	append="$append cfs.only=$(tr -s ' ,' ',' <<<"$CFS_VM_TESTS" | sed 's/^,//;s/,$//')"
fi
qemu=(qemu-system-x86_64 -accel "$accel" -m "${CFS_VM_MEM:-1024}" -smp 2
	-nographic -no-reboot -serial mon:stdio
	-kernel "$vmlinuz" -initrd "$out/initramfs.cpio.gz"
	-drive "file=$out/run.img,if=virtio,format=raw")
[ "$accel" = tcg ] && qemu+=(-cpu max)

if [ "$mode" = shell ]; then
	exec "${qemu[@]}" -append "$append loglevel=4 cfs.shell"
fi
if [ "$mode" = demo ]; then
	"${qemu[@]}" -append "$append loglevel=1 cfs.demo" < /dev/null 2>&1 | tr -d '\r' |
		sed -n '/^CFS-DEMO-BEGIN/,/^CFS-DEMO-END/p' | grep -v '^CFS-DEMO-'
	exit "${PIPESTATUS[0]}"
fi

timeout=${CFS_VM_TIMEOUT:-1800}
relay='^(PASS|FAIL|SKIP) '
# Slab debugging for the fuzzer: red zones, poison, checks and alloc traces
# (the leak check) on the caches composefs allocates from or hands objects
# of to the VFS; the rest of the kernel runs at full speed.
fuzz_slub=${CFS_VMFUZZ_SLUB:-FZPU,kmalloc-*,composefs_inode,dentry,filp,bfilp,ext4_inode_cache,shmem_inode_cache}
if [ "$mode" = fuzz ]; then
	secs=${CFS_VMFUZZ_SECONDS:-600}
	seed=${CFS_VMFUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
	echo "vm-fuzz: $secs s, seed $seed (CFS_VMFUZZ_SEED=$seed repeats these mutants)"
	append="$append cfs.fuzz=$secs cfs.fuzzseed=$seed slub_debug=$fuzz_slub"
	timeout=${CFS_VM_TIMEOUT:-$((secs + 900))}
	relay='^(PASS|FAIL|SKIP|vmfuzz:) '
fi
if [ "$mode" = soak ]; then
	secs=${CFS_SOAK_SECONDS:-1200}
	echo "vm-soak: $secs s"
	append="$append cfs.soak=$secs slub_debug=FZPU"
	timeout=${CFS_VM_TIMEOUT:-$((secs * 2 + 900))}
fi

# loglevel=1 keeps kernel messages off the console, so they cannot split
# the result lines; the guest prints its kernel log at the end instead.
# Emptied first: the relay below must not read a previous run's log before
# the guest's redirection truncates it.
: > "$log"
timeout "$timeout" "${qemu[@]}" -append "$append loglevel=1" \
	< /dev/null > "$log" 2>&1 &
qpid=$!
# Relay results as they come.
tail -n +1 -F --pid=$qpid "$log" 2>/dev/null | sed -u 's/\r$//' |
	grep --line-buffered -E "$relay" &
tpid=$!
wait $qpid
qrc=$?
sleep 1
kill $tpid 2>/dev/null
wait $tpid 2>/dev/null

passed=$(tr -d '\r' < "$log" | grep -c '^PASS ')
failed=$(tr -d '\r' < "$log" | grep -c '^FAIL ')
if ! tr -d '\r' < "$log" | grep -q '^CFS-VM-DONE'; then
	if [ $qrc -eq 124 ]; then
		echo "FAIL vm/timeout: the guest did not finish in $timeout s (log: $log)"
	else
		echo "FAIL vm/incomplete: the guest stopped early, qemu exit $qrc (log: $log)"
	fi
	tr -d '\r' < "$log" | grep -v -E '^(PASS|FAIL|SKIP) ' | tail -n 15 | sed 's/^/    /'
	failed=$((failed + 1))
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
