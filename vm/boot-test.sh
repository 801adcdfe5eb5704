#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Boots a Debian 12 from a composefs root in QEMU, with Debian's own 6.12
# kernel and initramfs (docs/boot.md), and checks what the boot did.
#
# On the host: make deb; the cached Debian 12 root with systemd and the
# kernel (vm/debian-root.sh boot) copied, the packages installed into it
# with apt (dkms builds the module, update-initramfs puts the module, the
# hook's programs and the boot script in the initramfs), a report service
# added (vm/boot/guest-check.sh); images of that root in both formats with
# their objects in a repository; an ext4 disk with verity holding it, plus
# two repositories for refusals (cfs-changed: another image under the
# digest; cfs-noverity: the image without fs-verity). fs-verity is enabled
# in a helper boot (vm/boot/verity-init). All of it is kept in BUILD/vm-boot
# and made again only when the packages or the root change.
#
# The boots, each printing PASS/FAIL lines:
#   v1      composefs=<v1 image>: multi-user reached, is-system-running
#           running or degraded (the failed units named), / is composefs
#           with the digest and verity_check=2, a program of the image
#           runs, /etc and /var are the state's; a second boot of the same
#           disk finds the mark the first wrote to /etc, and a changed
#           object then reads EIO
#   erofs   the same of the composefs 1.0 image: / is overlayfs with
#           verity=require, over erofs; a changed object reads EIO
#   refusals: a wrong digest, a changed image, an image without fs-verity,
#           a v1 image with its module kept from loading (module_blacklist=): each stops in
#           the initramfs with "composefs: cannot boot image <digest>"
# --quick: only the first v1 boot (make check, tests/cli/0202-boot.sh).
# --prepare: only the setup, then the directory holding it on stdout (the
# boot benchmark, bench/boot.sh, boots what it made).
#
# Usage: vm/boot-test.sh [--quick | --prepare]
#   CFS_VM_ACCEL (kvm or tcg), CFS_VM_MEM (MiB, default 1024),
#   CFS_BOOT_TIMEOUT (seconds per boot, default 600).
#   CFS_BOOT_DEBS: a directory with the packages of this tree already made
#   (make deb-run DEB_DIR=...), used instead of making them.
# Exits 0 when all passed, 77 (the last line saying why) when it cannot run
# here, 1 otherwise.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
quick= prepare=
case ${1:-} in
--quick) quick=1 ;;
--prepare) prepare=1 ;;
"") ;;
*) echo "usage: vm/boot-test.sh [--quick | --prepare]" >&2; exit 2 ;;
esac
out=$top/build/vm-boot
mkdir -p "$out"
passed=0 failed=0
pass() { echo "PASS boot/$1"; passed=$((passed + 1)); }
failt() { echo "FAIL boot/$1"; failed=$((failed + 1)); }
die() { echo "FAIL boot/$1"; echo "$passed passed, $((failed + 1)) failed"; exit 1; }
skip() { echo "$1"; exit 77; }

[ "$(id -u)" = 0 ] || skip "needs root (chroot, mounts)"
command -v qemu-system-x86_64 >/dev/null || skip "needs qemu-system-x86_64 (make deps)"
kinfo=$("$top/vm/kdir.sh" 2>&1) || skip "$kinfo"
krel=$(sed -n 2p <<<"$kinfo")

base=$("$top/vm/debian-root.sh" boot 2> "$out/root.log")
rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$out/root.log")"
[ $rc -eq 0 ] || { tail -n 20 "$out/root.log" >&2; die "setup/root: cannot make the Debian 12 root (log: $out/root.log)"; }

# The packages of this tree, or those made of it in CFS_BOOT_DEBS.
debdir=${CFS_BOOT_DEBS:-$out/deb}
if [ -z "${CFS_BOOT_DEBS:-}" ]; then
	make -s -C "$top" deb-run DEB_DIR="$out/deb" > "$out/deb.log" 2>&1 ||
		{ tail -n 20 "$out/deb.log" >&2; die "setup/deb: make deb failed (log: $out/deb.log)"; }
fi
arch=$(dpkg --print-architecture)
debs=("$debdir"/cfsctl_*_"$arch".deb "$debdir"/composefs-dkms_*_all.deb)
[ -f "${debs[0]}" ] && [ -f "${debs[1]}" ] || die "setup/deb: no cfsctl and composefs-dkms packages in $debdir"
cfsctl=$top/build/cfsctl
make -s -C "$top" build/cfsctl > /dev/null 2>&1 || die "setup/cfsctl: cannot build cfsctl"
vmtool=$out/cfs-vmtool
if [ ! -x "$vmtool" ] || [ "$top/vm/cfs-vmtool.c" -nt "$vmtool" ]; then
	${CC:-cc} -static -O2 -Wall -Wextra -Werror -o "$vmtool" "$top/vm/cfs-vmtool.c" ||
		die "setup/vmtool: cannot build cfs-vmtool"
fi

key=$(cat "${debs[@]}" "$base/.key" "$0" "$top"/vm/boot/* "$cfsctl" | md5sum | cut -d' ' -f1)
if [ "$(cat "$out/prepared" 2>/dev/null)" != "$key" ]; then
	rm -f "$out/prepared"
	r=$out/root
	umount "$r/proc" 2>/dev/null
	rm -rf "$r" "$out/disk" "$out/disk.img"
	echo "boot: preparing the root, the images and the disk (minutes)" >&2
	cp -a "$base" "$r"
	rm -f "$r/.complete" "$r/.key"
	mount -t proc proc "$r/proc"
	mkdir -p "$r/tmp/debs"
	cp "${debs[@]}" "$r/tmp/debs/"
	if ! chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 apt-get install -y \
		--no-install-recommends $(cd "$r" && ls ./tmp/debs/*.deb) "linux-headers-$krel" \
		> "$out/install.log" 2>&1; then
		umount "$r/proc"
		tail -n 30 "$out/install.log" >&2
		die "setup/install: apt-get install of the packages failed (log: $out/install.log)"
	fi
	rm -rf "$r/tmp/debs"
	umount "$r/proc"
	initrd=$r/boot/initrd.img-$krel
	[ -f "$initrd" ] && cp "$initrd" "$out/initrd.img" && cp "$r/boot/vmlinuz-$krel" "$out/vmlinuz" ||
		die "setup/initramfs: the root has no $initrd"
	# What the booted system does not need, out of the image: apt's
	# downloads and lists, the headers and dkms's build tree, the kernel
	# and initramfs (QEMU is given them), documentation.
	rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* "$r"/usr/src/* \
		"$r"/var/lib/dkms/composefs/*/build "$r"/boot/* "$r"/usr/share/doc "$r"/usr/share/man
	lsinitramfs "$out/initrd.img" > "$out/initrd.list" 2>/dev/null
	for f in scripts/local-bottom/composefs usr/lib/cfs/initramfs/cfs-mount-root usr/lib/cfs/initramfs/umount \
		usr/lib/cfs/initramfs/cp '/composefs.ko' '/sha256-ssse3.ko'; do
		grep -q -- "$f" "$out/initrd.list" || die "setup/initramfs: Debian's initramfs has no $f"
	done
	pass "initramfs-holds-module-script-programs"

	# The report service, and a file of known content for the checks.
	install -m 0755 "$top/vm/boot/guest-check.sh" "$r/usr/local/sbin/cfs-boot-check"
	install -m 0644 "$top/vm/boot/cfs-boot-check.service" "$r/etc/systemd/system/"
	mkdir -p "$r/etc/systemd/system/multi-user.target.wants" "$r/usr/share/cfs-boot"
	ln -sf ../cfs-boot-check.service "$r/etc/systemd/system/multi-user.target.wants/"
	head -c 100000 /dev/urandom > "$r/usr/share/cfs-boot/canary"

	d=$out/disk
	mkdir -p "$d/cfs/objects" "$d/cfs/images" "$d/cfs-changed/objects" "$d/cfs-changed/images" \
		"$d/cfs-noverity/objects" "$d/cfs-noverity/images"
	v1=$("$cfsctl" build --digest-store="$d/cfs/objects" --print-digest "$r" "$d/cfs/images/new") ||
		die "setup/build-v1: cfsctl build failed"
	mv "$d/cfs/images/new" "$d/cfs/images/$v1"
	erofs=$("$cfsctl" build --format=erofs --digest-store="$d/cfs/objects" --print-digest "$r" \
		"$d/cfs/images/new") || die "setup/build-erofs: cfsctl build --format=erofs failed"
	mv "$d/cfs/images/new" "$d/cfs/images/$erofs"
	# Another image under v1's name, and v1's image without fs-verity.
	mkdir -p "$out/other/etc"
	echo other > "$out/other/etc/hostname"
	"$cfsctl" build "$out/other" "$d/cfs-changed/images/$v1" > /dev/null || die "setup/build-other: cfsctl build failed"
	cp "$d/cfs/images/$v1" "$d/cfs-noverity/images/$v1"
	[ "$("$cfsctl" inspect --karg "$d/cfs/images/$v1")" = "composefs=$v1" ] ||
		die "setup/karg: cfsctl inspect --karg does not give the digest --print-digest did"
	echo "$v1" > "$out/v1.digest"
	echo "$erofs" > "$out/erofs.digest"
	sha256sum "$r/usr/share/cfs-boot/canary" | cut -d' ' -f1 > "$out/canary.sha256"
	mb=$(du -sm "$d" | cut -f1)
	mke2fs -q -F -t ext4 -b 4096 -O verity -L cfsroot -d "$d" "$out/disk.img" $((mb * 13 / 10 + 512))M ||
		die "setup/mkfs: mke2fs failed"

	# The helper boot: fs-verity on the repositories' files.
	kcache=$("$top/vm/fetch-kernel.sh" "$krel") || die "setup/kernel: cannot fetch the kernel's modules"
	ir=$out/verity-initramfs
	rm -rf "$ir"
	mkdir -p "$ir/bin" "$ir/lib/modules" "$ir/proc" "$ir/sys" "$ir/dev"
	cp /bin/busybox "$ir/bin/busybox" || die "setup/verity: no /bin/busybox (busybox-static)"
	for app in sh mount umount insmod find xargs sync poweroff mkdir cat echo; do
		ln -s busybox "$ir/bin/$app"
	done
	install -m 0755 "$vmtool" "$ir/bin/cfs-vmtool"
	mods="crc32c_generic crc16 mbcache jbd2 ext4 virtio_blk"
	for m in $mods; do
		f=$(find "$kcache/lib/modules/$krel/kernel" -name "$m.ko.xz" -print -quit)
		[ -n "$f" ] || die "setup/verity: no module $m"
		xz -dc "$f" > "$ir/lib/modules/$m.ko"
	done
	echo "$mods" > "$ir/lib/modules/order"
	install -m 0755 "$top/vm/boot/verity-init" "$ir/init"
	(cd "$ir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out/verity-initramfs.cpio.gz"
	rm -rf "$ir"
fi

accel=${CFS_VM_ACCEL:-tcg}
if [ -z "${CFS_VM_ACCEL:-}" ] && [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
	accel=kvm
fi
timeout=${CFS_BOOT_TIMEOUT:-600}
qemu() { # DISK LOG KERNEL INITRD APPEND
	local q=(qemu-system-x86_64 -accel "$accel" -m "${CFS_VM_MEM:-1024}" -smp "${smp:-2}" -nographic
		-no-reboot -serial mon:stdio -kernel "$3" -initrd "$4" -append "$5"
		-drive "file=$1,if=virtio,format=raw")
	[ "$accel" = tcg ] && q+=(-cpu max)
	timeout "$timeout" "${q[@]}" < /dev/null 2>&1 | tr -d '\r' > "$2"
	return "${PIPESTATUS[0]}"
}

# int3_again LOG TRY: true when TRY 1 of a boot under TCG ran into an int3
# of the kernel's own code patching. TCG with two CPUs now and then runs a
# stale copy of code the kernel was patching, and the kernel oopses on the
# int3 it had put there ("Oops: int3"; in an interrupt, a panic). That boot
# is done again, once, and said; the first log is kept beside.
int3_again() {
	[ "$2" = 1 ] && [ "$accel" = tcg ] && grep -q 'Oops: int3' "$1" || return 1
	cp "$1" "$1.int3"
	echo "boot: the kernel oopsed on an int3 of its own code patching (log: $1.int3); booting again" >&2
}

if [ ! -f "$out/prepared" ]; then
	# The helper needs one CPU, and one CPU has no stale code to run.
	for try in 1 2; do
		smp=1 qemu "$out/disk.img" "$out/verity.log" "$out/vmlinuz" "$out/verity-initramfs.cpio.gz" \
			"console=ttyS0 panic=-1 rdinit=/init loglevel=4" ||
			true
		grep -q 'CFS-VERITY ok' "$out/verity.log" && break
		int3_again "$out/verity.log" "$try" || break
	done
	grep -q 'CFS-VERITY ok' "$out/verity.log" ||
		{ tail -n 20 "$out/verity.log" >&2; die "setup/verity: the helper boot did not enable fs-verity (log: $out/verity.log)"; }
	echo "$key" > "$out/prepared"
fi
if [ -n "$prepare" ]; then
	echo "$out"
	exit 0
fi
v1=$(cat "$out/v1.digest") erofs=$(cat "$out/erofs.digest") canary=$(cat "$out/canary.sha256")
cmdline="root=/dev/vda rw console=ttyS0 panic=5"

# A report line may follow a getty's prompt on the console line.
val() { sed -n "s/.*CFS-BOOT $2=//p" "$1" | tail -n 1; }

# boot NAME DIGEST FSCHECK [EXTRA]: a boot that must reach the report;
# checks what every such boot must show.
boot() {
	local name=$1 digest=$2 fscheck=$3 extra=${4:-} log=$out/$1.log st try
	for try in 1 2; do
		qemu "$out/run.img" "$log" "$out/vmlinuz" "$out/initrd.img" "$cmdline composefs=$digest $extra"
		grep -q 'CFS-BOOT DONE' "$log" && break
		int3_again "$log" "$try" || break
	done
	if ! grep -q 'CFS-BOOT DONE' "$log"; then
		failt "$name: no report from the booted system (log: $log)"
		grep -E 'composefs|panic|Kernel|EXT4-fs error' "$log" | tail -n 10 | sed 's/^/    /'
		return 1
	fi
	st=$(val "$log" state)
	case $st in
	running) pass "$name/multi-user: running" ;;
	degraded) pass "$name/multi-user: degraded; failed: $(val "$log" failed)" ;;
	*) failt "$name/multi-user: is-system-running says '$st'; failed: $(val "$log" failed)" ;;
	esac
	root=$(val "$log" root)
	if [[ " $root " =~ $fscheck ]]; then pass "$name/root: $root"; else failt "$name/root: / is '$root'"; fi
	if [ "$(val "$log" program)" = "$canary" ]; then
		pass "$name/program: sha256sum of the image ran and read its file"
	else
		failt "$name/program: got '$(val "$log" program)'"
	fi
	case $(val "$log" etc) in
	"overlay var=/dev/vda[/cfs/state/var]"*) pass "$name/state: /etc an overlay, /var the state's" ;;
	*) failt "$name/state: $(val "$log" etc)" ;;
	esac
}

cp --sparse=always "$out/disk.img" "$out/run.img"
boot v1 "$v1" "^ composefs .*digest=$v1.*verity_check=2"
if [ -z "$quick" ]; then
	boot v1-again "$v1" "^ composefs .*digest=$v1" cfs.eio
	case $(val "$out/v1-again.log" mark) in
	"written by boot "*) pass "v1-again/etc: the first boot's file in /etc is there" ;;
	*) failt "v1-again/etc: /etc holds no file of the first boot: $(val "$out/v1-again.log" mark)" ;;
	esac
	if [ "$(val "$out/v1-again.log" eio)" = ok ]; then pass "v1-again/eio: a changed object reads EIO"; else
		failt "v1-again/eio: $(val "$out/v1-again.log" eio)"; fi

	cp --sparse=always "$out/disk.img" "$out/run.img"
	boot erofs "$erofs" "^ overlay .*verity=require" cfs.eio
	if [ "$(val "$out/erofs.log" eio)" = ok ]; then pass "erofs/eio: a changed object reads EIO"; else
		failt "erofs/eio: $(val "$out/erofs.log" eio)"; fi

	# refuse NAME DIGEST WHY DETAIL [EXTRA]: the boot must stop in the
	# initramfs, the panic saying WHY and the log DETAIL (cfsctl's reason).
	refuse() {
		local name=$1 digest=$2 why=$3 detail=$4 extra=${5:-} log=$out/$1.log
		cp --sparse=always "$out/disk.img" "$out/run.img"
		qemu "$out/run.img" "$log" "$out/vmlinuz" "$out/initrd.img" "$cmdline composefs=$digest $extra"
		if grep -q 'CFS-BOOT' "$log" || grep -q 'Welcome to' "$log"; then
			failt "$name: the system booted (log: $log)"
		elif grep -q "composefs: cannot boot image $digest: .*$why" "$log" && grep -q -- "$detail" "$log"; then
			pass "$name: $(grep -o "composefs: cannot boot image $digest: .*" "$log" | head -n 1 | cut -c1-40)... $why; $detail"
		else
			failt "$name: no 'composefs: cannot boot image $digest: ...$why' with '$detail' (log: $log)"
			tail -n 8 "$log" | sed 's/^/    /'
		fi
	}
	wrong=${v1:0:63}$(printf '%x' $(((16#${v1:63:1} + 1) % 16)))
	refuse wrong-digest "$wrong" "no image /cfs/images/$wrong" "no image"
	refuse changed-image "$v1" "was refused" "fs-verity digest is not the one given" cfs.repo=/cfs-changed
	refuse no-verity "$v1" "was refused" "has no fs-verity" cfs.repo=/cfs-noverity
	refuse no-module "$v1" "composefs module is missing" "this is a v1 image" module_blacklist=composefs
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
