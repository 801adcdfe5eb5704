#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# libcfs as other programs use it: make install puts libcfs.so.N (its
# SONAME), the headers and libcfs.pc under DESTDIR/PREFIX; a program
# outside the tree (examples/libcfs/cfs-list.c) builds against the
# installed headers with pkg-config alone, lists an image of each format
# and verifies it and its objects, and needs none of the network or ostree
# libraries. The library exports exactly what its installed headers
# declare: nm -D against the headers, both ways. And make -q all is
# satisfied once the build is done.
# test: exclusive (it runs make in the tree)
. "$(dirname "$0")/../lib/common.sh"
command -v pkg-config >/dev/null || skip "needs pkg-config"

# The build is done: a make with nothing to do runs nothing. Without the
# packages' pkg-config files, a build says what to run.
expect_exit 0 make -s -C "$TOP" all
expect_exit 0 make -q -C "$TOP" all
expect_exit 2 env PKG_CONFIG_LIBDIR="$T/none" PKG_CONFIG_PATH= make -s -C "$TOP" all
assert_contains "$T/err" "run 'make deps' \(as root\) first"

d=$T/dest
expect_exit 0 make -s -C "$TOP" install DESTDIR="$d" PREFIX=/usr
lib=$d/usr/lib
so=$(cd "$lib" && ls libcfs.so.[0-9]* 2>/dev/null)
[ -n "$so" ] && [ -f "$lib/$so" ] || fail "no libcfs.so.N installed in usr/lib"
[ "$(readlink "$lib/libcfs.so")" = "$so" ] || fail "usr/lib/libcfs.so does not link to $so"
readelf -d "$lib/$so" | grep -q "(SONAME).*\[$so\]" || fail "$so has not SONAME $so"
[ -f "$d/usr/include/cfs/image.h" ] && [ -f "$d/usr/include/cfs/version.h" ] ||
	fail "no headers in usr/include/cfs"

# Every exported symbol is declared in an installed header, and every
# function an installed header declares is exported.
nm -D --defined-only "$lib/$so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort -u >"$T/exported"
[ "$(wc -l <"$T/exported")" -ge 50 ] || fail "only $(wc -l <"$T/exported") symbols exported"
cat "$d"/usr/include/cfs/*.h | sed 's|/\*.*\*/||; /^[[:space:]]*\*/d; /^\/\*/d' |
	grep -o '^[a-z][^(]*\bcfs_[a-z0-9_]*(' | grep -o 'cfs_[a-z0-9_]*($' | tr -d '(' |
	sort -u >"$T/declared"
[ "$(wc -l <"$T/declared")" -ge 50 ] || fail "only $(wc -l <"$T/declared") functions found in the headers"
extra=$(comm -23 "$T/exported" "$T/declared")
[ -z "$extra" ] || fail "exported but declared in no installed header:" $extra
missing=$(comm -13 "$T/exported" "$T/declared")
[ -z "$missing" ] || fail "declared in an installed header but not exported:" $missing

# A program outside the tree, built with pkg-config against this install.
pc() { PKG_CONFIG_SYSROOT_DIR=$d PKG_CONFIG_PATH=$lib/pkgconfig PKG_CONFIG_LIBDIR= pkg-config "$@"; }
expect_exit 0 pc --modversion libcfs
grep -qx "$(sed -n 's/^#define CFS_VERSION_MAJOR //p' "$TOP/include/cfs/version.h").$(sed -n 's/^#define CFS_VERSION_MINOR //p' "$TOP/include/cfs/version.h")" "$T/out" ||
	fail "libcfs.pc's version is not CFS_VERSION_MAJOR.MINOR: $(cat "$T/out")"
cp "$TOP/examples/libcfs/cfs-list.c" "$T/"
# shellcheck disable=SC2046
(cd "$T" && ${CC:-cc} -std=c11 -Wall -Wextra -Werror -o cfs-list cfs-list.c $(pc --cflags --libs libcfs)) ||
	fail "cfs-list does not build against the installed libcfs"
needed=$(readelf -d "$T/cfs-list" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed " in *" $so "*) ;; *) fail "cfs-list does not link $so: $needed" ;; esac
LD_LIBRARY_PATH=$lib ldd "$T/cfs-list" >"$T/ldd"
grep -q "$so => $lib/$so" "$T/ldd" || { cat "$T/ldd"; fail "cfs-list does not load the installed $so"; }
if grep -E 'libcurl|libarchive|libjansson|libostree|libzstd|libglib|libfuse' "$T/ldd"; then
	fail "a reader of images loads network, archive or ostree libraries"
fi

for fmt in v1 erofs; do
	store=$T/store-$fmt
	"$CFSCTL" build --format=$fmt --digest-store "$store" "$TOP/examples/tree" "$T/t.$fmt" >/dev/null ||
		fail "cfsctl build --format=$fmt"
	expect_exit 0 env LD_LIBRARY_PATH="$lib" "$T/cfs-list" "$T/t.$fmt" "$store"
	# the paths it lists are the image's, as cfsctl lists them
	"$CFSCTL" inspect dump "$T/t.$fmt" | awk '{print $1}' | sort >"$T/want"
	grep -v '^verify:' "$T/out" | awk '{print $2}' | sort >"$T/got"
	cmp -s "$T/want" "$T/got" || { diff "$T/want" "$T/got"; fail "cfs-list's paths of the $fmt image differ"; }
	assert_contains "$T/out" '^verify: 0 errors, [1-9][0-9]* inodes, [1-9][0-9]* objects checked$'
	# a changed object is found through the library too
	obj=$(find "$store" -type f -name '[0-9a-f]*' | head -n 1)
	chmod u+w "$obj" "$(dirname "$obj")" 2>/dev/null
	printf 'changed' >>"$obj"
	expect_exit 1 env LD_LIBRARY_PATH="$lib" "$T/cfs-list" "$T/t.$fmt" "$store"
	assert_contains "$T/err" '^cfs-list: error: '
done
