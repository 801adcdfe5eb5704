#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Assembles the guest's initramfs: busybox (static), the kernel modules the
# tests need (decompressed, for busybox insmod), composefs.ko, cfsctl and
# the shared libraries it links, cfs-vmtool, cfs-vmfuzz, vm/init and the
# tests.
#
# Usage: vm/mkinitramfs.sh OUT.cpio.gz KERNEL_DIR KREL COMPOSEFS.KO CFS-VMTOOL [CFSCTL]
#   KERNEL_DIR is what vm/fetch-kernel.sh printed; CFSCTL may be omitted.
#   cfs-vmfuzz is taken from beside CFS-VMTOOL when it is there.
#   CFS_INITRAMFS_BIN="SRC=NAME ..." installs more programs as /bin/NAME,
#   with the shared libraries they link (the benchmark uses it).
#   CFS_INITRAMFS_DKMS is the module 'dkms build' made (vm/dkms-build.sh),
#   installed as /lib/modules/composefs-dkms.ko, or "SKIP why" / "FAIL why"
#   in /lib/modules/dkms.status when there is none (vm/tests/4200-dkms.sh).
set -euo pipefail
out=$1 kdir=$2 krel=$3 ko=$4 vmtool=$5 cfsctl=${6:-}
here=$(cd "$(dirname "$0")" && pwd)
# Load order matters: dependencies first. The CRC helpers 6.12 builds as
# modules are library code built in from 7.x on: absent, they are skipped.
modules="crc32c_generic crc16 mbcache jbd2 ext4 loop squashfs libcrc32c erofs overlay virtio_blk"
optional=" crc32c_generic libcrc32c "

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root" # the guest's /: tests run commands as other users too
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,mnt,disk,lib/modules,tests}

cp /bin/busybox "$root/bin/busybox"
for app in $(/bin/busybox --list); do
	[ "$app" = busybox ] || ln -sf busybox "$root/bin/$app"
done

mdir=$kdir/lib/modules/$krel/kernel
loaded=
for m in $modules; do
	f=$(find "$mdir" -name "$m.ko.xz" -print -quit)
	if [ -z "$f" ] && [ "${optional#* "$m" }" != "$optional" ]; then
		continue
	fi
	[ -n "$f" ] || { echo "mkinitramfs: module $m not in $mdir" >&2; exit 1; }
	xz -dc "$f" > "$root/lib/modules/$m.ko"
	loaded="$loaded $m"
done
echo "$loaded" > "$root/lib/modules/order"
cp "$ko" "$root/lib/modules/composefs.ko"
dkms=${CFS_INITRAMFS_DKMS:-SKIP not built by this harness}
case $dkms in
SKIP* | FAIL*) echo "$dkms" > "$root/lib/modules/dkms.status" ;;
*) cp "$dkms" "$root/lib/modules/composefs-dkms.ko" ;;
esac

install -m 0755 "$vmtool" "$root/bin/cfs-vmtool"
vmfuzz=$(dirname "$vmtool")/cfs-vmfuzz
[ ! -x "$vmfuzz" ] || install -m 0755 "$vmfuzz" "$root/bin/cfs-vmfuzz"
if [ -n "$cfsctl" ] && [ -x "$cfsctl" ]; then
	install -m 0755 "$cfsctl" "$root/bin/cfsctl"
	# mount -t composefs runs it (busybox mount tries /sbin/mount.TYPE).
	sed 's|@CFSCTL@|/bin/cfsctl|' "$(dirname "$0")/../cmd/mount.composefs" >"$root/sbin/mount.composefs"
	chmod 0755 "$root/sbin/mount.composefs"
	# Its shared libraries, at the paths the dynamic linker looks for.
	ldd "$cfsctl" | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
	# The fsverity tool, for a person using vm-shell.
	if [ -x /usr/bin/fsverity ]; then
		install -m 0755 /usr/bin/fsverity "$root/bin/fsverity"
		ldd /usr/bin/fsverity | awk '/=> \//{print $3}' | while read -r lib; do
			mkdir -p "$root$(dirname "$lib")"
			cp -L "$lib" "$root$lib"
		done
	fi
fi

# copy_libs PROGRAM: its shared libraries, at the paths the dynamic linker
# looks for (nothing for a static program).
copy_libs() {
	{ ldd "$1" 2>/dev/null || true; } | awk '/=> \//{print $3} /^\t\/.*ld-linux/{print $1}' |
	while read -r lib; do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
}
for spec in ${CFS_INITRAMFS_BIN:-}; do
	install -m 0755 "${spec%%=*}" "$root/bin/${spec#*=}"
	copy_libs "${spec%%=*}"
done

install -m 0755 "$here/init" "$root/init"
cp "$here"/tests/*.sh "$root/tests/"
[ ! -f "$here/demo-guest.sh" ] || install -m 0755 "$here/demo-guest.sh" "$root/bin/cfs-demo"
install -m 0755 "$here/fuzz-guest.sh" "$root/bin/cfs-fuzz"

(cd "$root" && find . | cpio -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
