#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The packages install into a Debian 12 root (debootstrap'd once and cached,
# vm/debian-root.sh) the way a user installs them, in a chroot:
# 'apt-get install ./cfsctl*.deb ./composefs-dkms*.deb' with the headers of
# Debian's 6.12 kernel pulls in what they need (dkms, a compiler, the 6.1
# headers dkms recommends); dkms builds and installs the module for 6.12
# and skips 6.1 without failing the install; cfsctl runs there; purging the
# packages leaves none of their files, nor of the module dkms built, and
# the root's file list has nothing of theirs it had not before.
# test: early (dkms builds the module in a chroot)
. "$(dirname "$0")/../lib/common.sh"
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
deb=$(test_debs) || exit 1
debver=$(dpkg-deb -f "$deb"/cfsctl_*.deb Version) || fail "make deb made no cfsctl package"

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
cp "$deb"/*.deb "$r/tmp/debs/"
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

# What the packages installed, and what dkms made of them, must go with
# them. Everything apt pulled in goes too (also what only another pulled
# package recommends, which apt would keep; sudo, which dkms recommends, is
# told that leaving a root with no password is meant), but for the kernel
# the 6.12 headers depend on: apt never autoremoves a kernel image, and
# its own packages are not what is tested here.
in_root dpkg -L cfsctl composefs-dkms > "$T/owned"
in_root env SUDO_FORCE_REMOVE=yes apt-get purge -y --autoremove -o APT::AutoRemove::RecommendsImportant=false \
	-o APT::AutoRemove::SuggestsImportant=false cfsctl composefs-dkms "linux-headers-$krel" \
	> "$T/purge.log" 2>&1 ||
	{ tail -n 40 "$T/purge.log"; fail "apt-get purge failed"; }
rm -rf "$r/tmp/debs"
while read -r f; do
	# the directories (/sbin, /usr/share/...) are others' too
	[ -d "$r$f" ] && continue
	[ -e "$r$f" ] || [ -L "$r$f" ] || continue
	fail "the purge left $f"
done < "$T/owned"
files > "$T/after"
# Every file the install added whose path names the packages, the
# module or its dkms tree is gone again.
diff "$T/before" "$T/after" | sed -n 's/^> //p' | grep -E 'composefs|cfsctl|/cfs([/-]|$)' > "$T/left" &&
	{ cat "$T/left"; fail "the purge left these behind"; }
kept=$(diff "$T/before" "$T/after" | grep -c '^> ')
echo "note: $kept files of the kernel image and what it needs stay (never autoremoved), none of the packages'"
echo "ok: installed, built for $krel${old:+, skipped $old}, purged with nothing of theirs left"
