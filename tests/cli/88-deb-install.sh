#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The packages install into a Debian 12 root (debootstrap'd once and cached,
# vm/debian-root.sh) the way a user installs them, in a chroot:
# 'apt-get install ./cfsctl*.deb ./composefs-dkms*.deb' with the headers of
# Debian's 6.12 kernel pulls in what they need (dkms, a compiler, the 6.1
# headers dkms recommends); dkms builds and installs the module for 6.12
# and skips 6.1 without failing the install; cfsctl runs there; purging the
# packages, and what apt pulled in for them, leaves the root's file list as
# it was.
. "$(dirname "$0")/../lib.sh"
[ "$(id -u)" = 0 ] || skip "needs root (chroot, mounts)"
command -v dpkg-buildpackage >/dev/null || skip "needs dpkg-buildpackage (make deps)"
case $CFSCTL in
*/san/*) skip "the packages are built from the tree, not from this cfsctl: the normal run tests them" ;;
esac
root=$("$TOP/vm/debian-root.sh" base 2> "$T/root.log")
rc=$?
[ $rc -eq 77 ] && skip "$(tail -n 1 "$T/root.log")"
[ $rc -eq 0 ] || { cat "$T/root.log"; fail "cannot make the Debian 12 root"; }
krel=$("$TOP/vm/kdir.sh" | sed -n 2p)

version=$(cd "$TOP" && git describe --always --dirty 2>/dev/null || echo 0.1)
make -s -C "$TOP" deb-run DEB_DIR="$T/deb" VERSION="$version" > "$T/make.log" 2>&1 ||
	{ tail -n 30 "$T/make.log"; fail "make deb failed"; }
debver=$("$TOP/packaging/deb-version.sh" "$version")

r=$T/root
cp -a "$root" "$r"
rm -f "$r/.complete" "$r/.key"
cleanup() { umount "$r/proc" 2>/dev/null; }
trap 'cleanup; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
mount -t proc proc "$r/proc"
in_root() { chroot "$r" env DEBIAN_FRONTEND=noninteractive LC_ALL=C.UTF-8 "$@"; }
# Every file and symlink, but the package manager's own records and logs,
# and initramfs images: the packages' update-initramfs trigger makes one
# for the 6.12 modules dkms installed (in this root with no kernel), which
# initramfs-tools keeps, as it keeps any it made, when the kernel's
# modules go.
files() {
	(cd "$r" && find . -xdev \( -path ./proc -o -path ./var/lib/dpkg -o -path ./var/lib/apt \
		-o -path ./var/cache -o -path ./var/log -o -path ./tmp -o -path './boot/initrd.img-*' \) -prune -o \
		\( -type f -o -type l \) -print | LC_ALL=C sort)
}
files > "$T/before"

mkdir -p "$r/tmp/debs"
cp "$T/deb"/*.deb "$r/tmp/debs/"
in_root apt-get install -y ./tmp/debs/cfsctl_"$debver"_"$(dpkg --print-architecture)".deb ./tmp/debs/composefs-dkms_"$debver"_all.deb \
	"linux-headers-$krel" > "$T/install.log" 2>&1 || { tail -n 40 "$T/install.log"; fail "apt-get install failed"; }
for p in dkms gcc make; do
	in_root dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed ||
		{ tail -n 40 "$T/install.log"; fail "apt did not pull in $p"; }
done
in_root dkms status composefs > "$T/status" 2>&1
grep -F "composefs/$debver, $krel, " "$T/status" | grep -q ': installed' ||
	{ cat "$T/status"; fail "dkms did not install the module for $krel"; }
[ -n "$(find "$r/lib/modules/$krel" -name 'composefs.ko*')" ] || fail "no composefs.ko for $krel"
old=$(ls "$r/lib/modules" | grep '^6\.1\.' | head -n 1)
if [ -n "$old" ]; then
	grep -qF "composefs/$debver, $old" "$T/status" && { cat "$T/status"; fail "dkms built the module for $old"; }
	[ -z "$(find "$r/lib/modules/$old" -name 'composefs.ko*')" ] || fail "a composefs.ko for $old"
else
	echo "note: apt brought no 6.1 headers (no recommends?): the skip is not tested"
fi
got=$(in_root cfsctl --version)
case $got in *"$version"*) ;; *) fail "the installed cfsctl says '$got', not $version" ;; esac
in_root man -w cfsctl-inspect > /dev/null 2>&1 || [ -f "$r/usr/share/man/man1/cfsctl-inspect.1.gz" ] ||
	fail "no man page cfsctl-inspect(1) installed"
[ -x "$r/sbin/mount.composefs" ] || fail "no /sbin/mount.composefs"

# sudo (dkms recommends it) refuses to go from a root with no password
# unless told that is meant.
in_root env SUDO_FORCE_REMOVE=yes apt-get purge -y --autoremove cfsctl composefs-dkms "linux-headers-$krel" \
	> "$T/purge.log" 2>&1 ||
	{ tail -n 40 "$T/purge.log"; fail "apt-get purge failed"; }
rm -rf "$r/tmp/debs"
files > "$T/after"
if ! diff -u "$T/before" "$T/after" > "$T/diff"; then
	cat "$T/diff"
	fail "the purge left the root different"
fi
echo "ok: installed, built for $krel${old:+, skipped $old}, purged without a trace"
