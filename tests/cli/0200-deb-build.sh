#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# make deb builds the packages cfsctl, composefs-dkms, libcfs0 and
# libcfs-dev with debhelper, and
# lintian finds no error in them (make deb fails on one); their version is
# the Debian spelling of what cfsctl --version says, they hold what they
# must (the program, mount.composefs, every man page, the completion, the
# initramfs hook and boot script; the module's source with a dkms.conf
# that builds only for 6.12 kernels), cfsctl inspect --karg gives the
# digest build --print-digest does, cfsctl's dependencies come from
# dpkg-shlibdeps, and the hook and the module trigger update-initramfs;
# libcfs0 holds the library under its SONAME with a symbols file that
# names every symbol it exports, libcfs-dev the headers, the link and
# libcfs.pc.
# test: early (the packages take minutes to build)
. "$(dirname "$0")/../lib/common.sh"
command -v dpkg-buildpackage >/dev/null || skip "needs dpkg-buildpackage (Debian package dpkg-dev; make deps)"
command -v dh_dkms >/dev/null || skip "needs dh_dkms (Debian package dh-dkms; make deps)"
command -v lintian >/dev/null || skip "needs lintian (make deps)"
case $CFSCTL in
*/san/*) skip "the packages are built from the tree, not from this cfsctl: the normal run tests them" ;;
esac

# The version the Makefile was given (test_debs builds them).
version=$(cd "$TOP" && git describe --always --dirty 2>/dev/null || echo 0.1)
d=$(test_debs) || exit 1
debver=$("$TOP/packaging/deb-version.sh" "$version")
bin=$d/cfsctl_${debver}_$(dpkg --print-architecture).deb
dkms=$d/composefs-dkms_${debver}_all.deb
[ -f "$bin" ] || { ls "$d"; fail "no $bin"; }
[ -f "$dkms" ] || { ls "$d"; fail "no $dkms"; }
lib0=$d/libcfs0_${debver}_$(dpkg --print-architecture).deb
libdev=$d/libcfs-dev_${debver}_$(dpkg --print-architecture).deb
[ -f "$lib0" ] || { ls "$d"; fail "no $lib0"; }
[ -f "$libdev" ] || { ls "$d"; fail "no $libdev"; }

# lintian again, here: no error (warnings are listed in the log).
lintian "$bin" "$dkms" "$lib0" "$libdev" > "$T/lintian" 2>&1
grep -q '^E: ' "$T/lintian" && { cat "$T/lintian"; fail "lintian reports errors"; }
# ... and every program has its man page
grep -q 'no-manual-page' "$T/lintian" && { cat "$T/lintian"; fail "lintian: a program without a man page"; }
# The Maintainer is the one make deb was given, as dch takes it.
assert_eq "Pat Packager <pat@example.org>" "$(dpkg-deb -f "$bin" Maintainer)" "the Maintainer field"

dpkg-deb -x "$bin" "$T/bin"
dpkg-deb -x "$dkms" "$T/dkms"
got=$("$T/bin/usr/bin/cfsctl" --version)
case $got in *"$version"*) ;; *) fail "the packaged cfsctl says '$got', not $version" ;; esac
for f in sbin/mount.composefs usr/share/bash-completion/completions/cfsctl usr/lib/cfs/cfs-mount-root \
	usr/share/initramfs-tools/hooks/composefs usr/share/initramfs-tools/scripts/local-bottom/composefs; do
	[ -f "$T/bin/$f" ] || fail "cfsctl has no /$f"
done
for f in usr/share/initramfs-tools/hooks/composefs usr/share/initramfs-tools/scripts/local-bottom/composefs sbin/mount.composefs \
	usr/lib/cfs/cfs-mount-root; do
	[ -x "$T/bin/$f" ] || fail "/$f is not executable"
done
# The kernel parameter of an image (docs/boot.md) is its fs-verity digest.
mkdir -p "$T/tree/etc"
echo cfs > "$T/tree/etc/hostname"
digest=$("$T/bin/usr/bin/cfsctl" build --print-digest "$T/tree" "$T/img") || fail "the packaged cfsctl cannot build"
assert_eq "composefs=$digest" "$("$T/bin/usr/bin/cfsctl" inspect --karg "$T/img")" "cfsctl inspect --karg"
"$T/bin/usr/bin/cfsctl" inspect --karg "$T/tree/etc/hostname" > "$T/karg" 2>&1 && fail "--karg of a file that is no image succeeded"
assert_contains "$T/karg" "^cfsctl: inspect: '.*hostname': "
grep -qx 'cfsctl=/usr/bin/cfsctl' "$T/bin/sbin/mount.composefs" || fail "mount.composefs does not run /usr/bin/cfsctl"
# The initramfs's mount program carries only what a mount needs: none of
# cfsctl's registry, ostree or terminal libraries goes into the initramfs.
libs=$(ldd "$T/bin/usr/lib/cfs/cfs-mount-root") || fail "ldd cannot read the packaged cfs-mount-root"
for lib in libcurl libostree libglib libarchive libncursesw libfuse3 libjansson; do
	case $libs in *"$lib"*) fail "cfs-mount-root links $lib: $libs" ;; esac
done
expect_exit 2 "$T/bin/usr/lib/cfs/cfs-mount-root" 0123 "$T/root" "$T/device"
assert_contains "$T/err" "the digest must be 64 hex digits"
verbs=$("$CFSCTL" --help | sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z-]*\) .*/\1/p')
for p in cfsctl $(printf 'cfsctl-%s\n' $verbs); do
	[ -f "$T/bin/usr/share/man/man1/$p.1.gz" ] || fail "cfsctl has no man page $p.1"
done
[ -f "$T/bin/usr/share/man/man8/mount.composefs.8.gz" ] || fail "cfsctl has no man page mount.composefs.8"

# Dependencies from dpkg-shlibdeps: one for each library cfsctl links.
deps=$(dpkg-deb -f "$bin" Depends)
for lib in libfsverity0 libarchive13 libcurl4 libfuse3-3 libssl3 libc6; do
	case $deps in *"$lib "* | *"$lib,"* | *"$lib") ;; *) fail "cfsctl does not depend on $lib: $deps" ;; esac
done
case $(dpkg-deb -f "$dkms" Depends) in *dkms*) ;; *) fail "composefs-dkms does not depend on dkms" ;; esac

src=$T/dkms/usr/src/composefs-$debver
[ -f "$src/dkms.conf" ] || fail "no /usr/src/composefs-$debver/dkms.conf"
for f in Kbuild super.c reader.c compat.h cfs-format.h; do
	[ -f "$src/$f" ] || fail "the module source has no $f"
done
( set +u; . "$src/dkms.conf"
  [ "$PACKAGE_VERSION" = "$debver" ] || fail "dkms.conf says version $PACKAGE_VERSION"
  [[ 6.12.118+deb12-amd64 =~ $BUILD_EXCLUSIVE_KERNEL ]] || fail "dkms.conf excludes 6.12"
  [[ 6.1.0-37-amd64 =~ $BUILD_EXCLUSIVE_KERNEL ]] && fail "dkms.conf does not exclude 6.1"
  [[ 6.11.11 =~ $BUILD_EXCLUSIVE_KERNEL ]] && fail "dkms.conf does not exclude 6.11"
  [[ 6.13.1 =~ $BUILD_EXCLUSIVE_KERNEL ]] || fail "dkms.conf excludes 6.13"
  [[ 7.2.13+deb14-amd64 =~ $BUILD_EXCLUSIVE_KERNEL ]] || fail "dkms.conf excludes 7.2"
  true ) || exit 1

# The library: under its SONAME, with a symbols file for every export;
# the development files beside it; cfsctl holds none of them.
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
dpkg-deb -x "$lib0" "$T/lib0"
dpkg-deb -x "$libdev" "$T/libdev"
so=$(cd "$T/lib0/usr/lib/$ma" && ls libcfs.so.[0-9]*) || fail "libcfs0 has no usr/lib/$ma/libcfs.so.N"
readelf -d "$T/lib0/usr/lib/$ma/$so" | grep -q "(SONAME).*\[$so\]" || fail "libcfs0's $so has another SONAME"
for f in usr/include/cfs/image.h usr/include/cfs/version.h usr/lib/$ma/libcfs.so usr/lib/$ma/pkgconfig/libcfs.pc; do
	[ -e "$T/libdev/$f" ] || [ -L "$T/libdev/$f" ] || fail "libcfs-dev has no /$f"
done
grep -q "^libdir=/usr/lib/$ma\$" "$T/libdev/usr/lib/$ma/pkgconfig/libcfs.pc" || fail "libcfs.pc names another libdir"
if dpkg-deb -c "$bin" | grep -E 'libcfs\.so|include/cfs|libcfs\.pc'; then fail "cfsctl holds library files"; fi
dpkg-deb -e "$lib0" "$T/ctrl-lib0"
nm -D --defined-only "$T/lib0/usr/lib/$ma/$so" | awk '$2 ~ /^[TDBR]$/ {print $3}' | sort >"$T/exports"
sed -n 's/^ \([^@]*\)@Base .*/\1/p' "$T/ctrl-lib0/symbols" | sort >"$T/symbols"
cmp -s "$T/exports" "$T/symbols" || { diff "$T/symbols" "$T/exports"; fail "libcfs0's symbols file is not its exports"; }
# The source's symbols file too, header and all: dpkg-gensymbols fills in
# an export it lacks, so the package alone would not show it stale.
src=$TOP/packaging/debian/libcfs0.symbols
[ "$(head -1 "$src")" = "libcfs.so.0 libcfs0 #MINVER#" ] || fail "$src: its first line is not 'libcfs.so.0 libcfs0 #MINVER#'"
sed -n 's/^ \([^@]*\)@Base .*/\1/p' "$src" | sort >"$T/src-symbols"
cmp -s "$T/exports" "$T/src-symbols" || { diff "$T/src-symbols" "$T/exports"; fail "$src does not list the library's exports"; }
case $(dpkg-deb -f "$libdev" Depends) in *"libcfs0 (= $debver)"*) ;; *) fail "libcfs-dev does not depend on its libcfs0" ;; esac

for p in "$bin" "$dkms"; do
	dpkg-deb -e "$p" "$T/ctrl-${p##*/}"
	grep -qx 'activate-noawait update-initramfs' "$T/ctrl-${p##*/}/triggers" 2>/dev/null ||
		fail "$(basename "$p") does not trigger update-initramfs"
done
grep -q 'common.postinst' "$T/ctrl-${dkms##*/}/postinst" ||
	fail "composefs-dkms's postinst does not build the module with dkms"
echo "ok: $(basename "$bin") $(basename "$dkms") $(basename "$lib0") $(basename "$libdev")"
