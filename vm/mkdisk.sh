#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Builds the test data for the VM on the host and packs it into an ext4
# disk image with the verity feature (4 KiB blocks: fs-verity needs block
# size = page size). Images are made by 'cfsctl build'; the guest enables
# fs-verity where a test needs it (the host filesystem may not support it).
#
# Contents of the disk (mounted at /disk in the guest):
#   rich.cfs, rich.expected, store-rich/  the rich tree (vm/mktree.sh), its
#                                          listing by cfs-vmtool walk, objects
#   rich.erofs                             the rich tree as an EROFS image,
#                                          objects in store-rich/
#   small.cfs, small.erofs, store/         a small tree (v1, EROFS), digest store
#   share1.cfs, share2.cfs                 two trees sharing one 4 MiB object
#   nest1.cfs, store-nest/                 images inside images: nest1.cfs
#                                          holds nest2.cfs, which holds
#                                          nest3.cfs (vm/tests/4223-stacking.sh)
#   xattrs.cfs, store-xattrs/              xattrs of every namespace on every
#                                          type (vm/tests/4224-xattrs.sh)
#   multi.cfs, storeA/, storeB/            objects split over two basedirs,
#                                          one object missing
#   plain.cfs, plain/, outside             by-path backing files without
#                                          digests; escapes and symlinks
#   soak1.cfs, soak2.cfs, store-soak/      two trees of about 11 MiB for the
#   soak1.sha256, soak2.sha256             soak, half of their files in both,
#                                          one store; sha256sum of each tree
#   corrupt/                               vm/corrupt-image.py variants
#   dirs/                                  vm/dir-images.py: many-chunk
#                                          directories and their variants
#   demo.cfs, store-demo/                  examples/tree, for vm/demo.sh
#   lazy.cfs, lazy.expected, store-lazy/   a tree for cfsctl lazy: its
#                                          listing, and the full store the
#                                          guest's httpd serves
#   oci.cfs, oci.erofs, store-oci/,        a 3-layer container image pulled
#   oci.expected                           from a registry (v1, EROFS), and
#                                          the listing of umoci unpack of it
#   ostree/repo, ostree/checkout           a bare-user ostree repository with
#                                          branch main, and ostree checkout
#                                          --force-copy of it (4222-ostree.sh)
#
# Usage: vm/mkdisk.sh WORKDIR CFSCTL CFS-VMTOOL   (writes WORKDIR/disk.img)
#   An empty CFSCTL makes a disk with no images (their tests then skip);
#   CFS_DISK_DEMO_ONLY=1 one with only the demo image.
set -euo pipefail
w=$1 cfsctl=$2 vmtool=$3
here=$(cd "$(dirname "$0")" && pwd)
d=$w/disk
rm -rf "$w/src" "$d" "$w/disk.img"
mkdir -p "$w/src" "$d"
head -c 10000 /dev/urandom > "$d/junk"

build() { "$cfsctl" build "$@" >/dev/null; }

if [ "${CFS_DISK_DEMO_ONLY:-}" = 1 ]; then
	# Just the demo (vm/demo.sh): examples/tree with its own store.
	build --digest-store "$d/store-demo" "$here/../examples/tree" "$d/demo.cfs"
	mke2fs -q -F -t ext4 -b 4096 -O verity -L cfsdemo -d "$d" "$w/disk.img" 64M
	exit 0
fi

if [ -z "$cfsctl" ]; then
	# No cfsctl build yet: a disk without images; image tests skip.
	mke2fs -q -F -t ext4 -b 4096 -O verity -L cfstest -d "$d" "$w/disk.img" 64M
	exit 0
fi

# The rich tree. Its objects are copied here rather than by --digest-store
# so that the 5 GiB sparse file stays sparse.
"$here/mktree.sh" "$w/src/rich"
build "$w/src/rich" "$d/rich.cfs"
"$vmtool" walk "$w/src/rich" > "$d/rich.expected"
mkdir -p "$d/store-rich"
(cd "$w/src/rich" && find . -type f -print0 | xargs -0 -r fsverity digest) |
while read -r dig path; do
	hex=${dig#sha256:}
	obj=$d/store-rich/${hex:0:2}/${hex:2}
	mkdir -p "${obj%/*}"
	[ -e "$obj" ] || cp --sparse=always "$w/src/rich/$path" "$obj"
done
build --format=erofs --digest-store "$d/store-rich" "$w/src/rich" "$d/rich.erofs"

# A small tree for the integrity tests, with a digest store.
s=$w/src/small
mkdir -p "$s/sub"
printf 'small file a\n' > "$s/a"
head -c 65536 /dev/urandom > "$s/b"
printf 'nested c\n' > "$s/sub/c"
printf 'nested d\n' > "$s/sub/d"
setfattr -n user.tag -v small "$s/a"
build --digest-store "$d/store" "$s" "$d/small.cfs"
build --format=erofs --digest-store "$d/store" "$s" "$d/small.erofs"
(cd "$s" && fsverity digest a b sub/c sub/d) | sed 's/^sha256://' > "$d/small.digests"

# Two images reaching one object.
head -c $((4 << 20)) /dev/urandom > "$w/big.bin"
for i in 1 2; do
	mkdir -p "$w/src/share$i/dir$i"
	cp "$w/big.bin" "$w/src/share$i/dir$i/big-$i.bin"
	printf 'only in %s\n' "$i" > "$w/src/share$i/own"
	build --digest-store "$d/store" "$w/src/share$i" "$d/share$i.cfs"
done
fsverity digest "$w/big.bin" | sed 's/^sha256://; s/ .*//' > "$d/share.digest"

# Objects split over two basedirs, one missing from both.
m=$w/src/multi
mkdir -p "$m"
printf 'in store A\n' > "$m/m1"
printf 'in store B\n' > "$m/m2"
printf 'nowhere\n' > "$m/m3"
build --digest-store "$d/storeA" "$m" "$d/multi.cfs"
mkdir -p "$d/storeB"
for f in m2 m3; do
	hex=$(fsverity digest "$m/$f" | sed 's/^sha256://; s/ .*//')
	mkdir -p "$d/storeB/${hex:0:2}"
	if [ "$f" = m2 ]; then
		mv "$d/storeA/${hex:0:2}/${hex:2}" "$d/storeB/${hex:0:2}/${hex:2}"
	else
		rm "$d/storeA/${hex:0:2}/${hex:2}"
	fi
done

# Images inside images, all objects in one store: nest3.cfs holds a file,
# nest2.cfs holds nest3.cfs, nest1.cfs holds nest2.cfs.
n=$w/src/nest
mkdir -p "$n/1" "$n/2" "$n/3"
printf 'three images down\n' > "$n/3/leaf"
build --digest-store "$d/store-nest" "$n/3" "$n/2/nest3.cfs"
build --digest-store "$d/store-nest" "$n/2" "$n/1/nest2.cfs"
build --digest-store "$d/store-nest" "$n/1" "$d/nest1.cfs"

# Xattrs of the user, trusted and security namespaces, of namespaces the
# kernel has no handler for, on a file, a directory, a symlink and a
# device: only a dumpfile can put user.* on the last two.
cat > "$w/xattrs.dump" <<'DUMP'
/ 4096 40755 3 0 0 0 1000000000.0 - - -
/d 4096 40755 2 0 0 0 1000000000.0 - - - user.dir=d trusted.overlay.opaque=y
/f 3 100644 1 0 0 0 1000000000.5 - abc - user.file=f trusted.t=t security.s=s foo.bar=x system.other=o
/l 1 120777 1 0 0 0 1000000000.5 f - - user.link=l security.ls=ls
/c 0 20644 1 0 0 259 1000000000.5 - - - user.dev=c security.cs=cs
DUMP
build --from-dump --digest-store "$d/store-xattrs" "$w/xattrs.dump" "$d/xattrs.cfs"

# Backing files by path, no digests; paths that try to leave the basedir
# or go through symlinks.
mkdir -p "$d/plain/dir"
printf 'plain file\n' > "$d/plain/file"
printf 'outside the basedir\n' > "$d/outside"
ln -s file "$d/plain/link"
ln -s dir "$d/plain/dirlink"
printf 'in dir\n' > "$d/plain/dir/f"
mkdir -p "$d/plain/a/b/c/d"
printf 'plain file\n' > "$d/plain/a/b/c/d/file"
mt=1600000000.0
cat > "$w/plain.dump" <<DUMP
/ 4096 40755 2 0 0 0 $mt - - -
/file 11 100644 1 0 0 0 $mt file - -
/dotdot 20 100644 1 0 0 0 $mt ../outside - -
/dotdot2 20 100644 1 0 0 0 $mt dir/../../outside - -
/absolute 11 100644 1 0 0 0 $mt /file - -
/absolute-dotdot 20 100644 1 0 0 0 $mt /../outside - -
/symlink 11 100644 1 0 0 0 $mt link - -
/dirsymlink 7 100644 1 0 0 0 $mt dirlink/f - -
/notreg 4096 100644 1 0 0 0 $mt dir - -
/wrongsize 99 100644 1 0 0 0 $mt file - -
/deep 11 100644 1 0 0 0 $mt a/b/c/d/file - -
/dotted 11 100644 1 0 0 0 $mt ./dir/../file - -
DUMP
build --from-dump "$w/plain.dump" "$d/plain.cfs"

# The soak (vm/tests/4218-soak.sh): two trees in one store, dirs a to d the
# same in both, e to h each its own; sizes around page and read-buffer
# boundaries up to 1 MiB. The sums are of the source, to compare with what
# the mounts give.
sizes="0 1 100 4095 4096 4097 65535 65537 262144 1048576"
mkdir -p "$w/src/soak1" "$w/src/soak2"
for dir in a b c d e f g h; do
	for t in 1 2; do
		i=0
		for size in $sizes; do
			f=$w/src/soak$t/$dir/sub$((i % 3))/f$i
			mkdir -p "${f%/*}"
			head -c "$size" /dev/urandom > "$f"
			i=$((i + 1))
		done
		if [[ $dir < e ]]; then
			cp -a "$w/src/soak1/$dir" "$w/src/soak2/"
			break
		fi
	done
done
for t in 1 2; do
	build --digest-store "$d/store-soak" "$w/src/soak$t" "$d/soak$t.cfs"
	(cd "$w/src/soak$t" && find . -type f | LC_ALL=C sort | xargs sha256sum) > "$d/soak$t.sha256"
done

"$here/corrupt-image.py" "$d/small.cfs" "$d/corrupt"
"$here/corrupt-image.py" "$d/rich.cfs" "$d/corrupt" rich- 30
"$here/corrupt-image.py" --huge-chunks "$d/huge-chunks.cfs"
"$here/dir-images.py" "$cfsctl" "$d/dirs"

# For cfsctl lazy (vm/tests/4216-lazy.sh): files of distinct content, two of
# 1 MiB, whose store the guest serves over HTTP on its loopback.
l=$w/src/lazy
mkdir -p "$l/etc" "$l/usr/bin" "$l/usr/lib"
for i in $(seq 1 24); do
	printf 'lazy file %d\n' "$i" > "$l/etc/f$i"
done
head -c $((1 << 20)) /dev/urandom > "$l/usr/bin/app"
head -c $((1 << 20)) /dev/urandom > "$l/usr/lib/libbig.so"
head -c 200000 /dev/urandom > "$l/usr/lib/libmid.so"
build --digest-store "$d/store-lazy" "$l" "$d/lazy.cfs"
"$vmtool" walk "$l" > "$d/lazy.expected"
(cd "$l" && find . -type f | sed 's|^\./||' | sort | xargs fsverity digest) |
	sed 's/^sha256://' > "$d/lazy.digests"

# A container image of three layers (tests/lib/oci-layers.py), for
# vm/tests/4221-oci.sh: cfsctl pull fetches it in both formats from a
# docker-registry started here for the purpose (the guest has no registry
# to pull from), and the listing of umoci unpack of the same layout is the
# tree the mounts must show. Without docker-registry or umoci the disk has
# no OCI image and the test skips.
oci_image() {
	local o=$w/oci port pid= i tries ok=
	rm -rf "$o"
	mkdir -p "$o/layers"
	python3 "$here/../tests/lib/oci-layers.py" "$o/layers"
	# gzip and plain layers: umoci takes no zstd
	cat > "$o/spec.json" <<EOF
[{"tag": "v1", "layers": [["$o/layers/1.tar", "gzip"], ["$o/layers/2.tar", "gzip"],
                          ["$o/layers/3.tar", "none"]]}]
EOF
	python3 "$here/../tests/lib/mkoci.py" "$o/layout" "$o/spec.json"
	umoci unpack --image "$o/layout:v1" "$o/bundle" > /dev/null
	"$vmtool" walk "$o/bundle/rootfs" > "$d/oci.expected"
	for tries in 1 2 3 4 5; do
		port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		printf 'version: 0.1\nlog: {level: error}\nstorage: {filesystem: {rootdirectory: %s}}\nhttp: {addr: 127.0.0.1:%s}\n' \
			"$o/registry" "$port" > "$o/registry.yml"
		docker-registry serve "$o/registry.yml" >> "$o/registry.log" 2>&1 &
		pid=$!
		for i in $(seq 100); do
			curl -sf -o /dev/null "http://127.0.0.1:$port/v2/" && { ok=1; break; }
			kill -0 "$pid" 2> /dev/null || break
			sleep 0.1
		done
		[ -n "$ok" ] && break
		kill "$pid" 2> /dev/null || true
		wait "$pid" 2> /dev/null || true
	done
	if [ -z "$ok" ]; then
		cat "$o/registry.log" >&2
		echo "mkdisk: docker-registry did not start" >&2
		return 1
	fi
	if python3 "$here/../tests/lib/oci-push.py" "$o/layout" v1 "http://127.0.0.1:$port" cfs/oci v1 > /dev/null &&
		"$cfsctl" pull --plain-http --digest-store "$d/store-oci" "127.0.0.1:$port/cfs/oci:v1" "$d/oci.cfs" &&
		"$cfsctl" pull --plain-http --format=erofs --digest-store "$d/store-oci" \
			"127.0.0.1:$port/cfs/oci:v1" "$d/oci.erofs"; then
		ok=2
	fi
	kill "$pid" 2> /dev/null || true
	wait "$pid" 2> /dev/null || true
	[ "$ok" = 2 ]
}
if command -v docker-registry > /dev/null && command -v umoci > /dev/null && command -v curl > /dev/null; then
	oci_image
else
	echo "mkdisk: no docker-registry, umoci or curl (make deps): no OCI image on the disk" >&2
fi

# An ostree repository (bare-user: its objects keep the owners in
# user.ostreemeta, which mke2fs copies) and its checkout, for
# vm/tests/4222-ostree.sh. The guest builds and mounts the images itself.
ostree_repo() {
	local o=$d/ostree s=$w/ostree-src
	rm -rf "$s" && mkdir -p "$s/etc/sub" "$s/usr/bin" "$o"
	echo "hello from ostree" > "$s/etc/hello"
	head -c 300000 /dev/urandom > "$s/usr/bin/tool"
	chmod 4755 "$s/usr/bin/tool"
	printf 'x' > "$s/etc/sub/one"
	: > "$s/etc/empty"
	ln -s ../etc/hello "$s/usr/link"
	chown 12:34 "$s/etc/sub" "$s/etc/sub/one"
	setfattr -n user.color -v blue "$s/etc/hello"
	ostree --repo="$o/repo" init --mode=bare-user &&
		ostree --repo="$o/repo" commit -b main --tree=dir="$s" -s "vm test" > /dev/null &&
		ostree --repo="$o/repo" checkout --force-copy main "$o/checkout"
}
if command -v ostree > /dev/null && [ "$(id -u)" = 0 ]; then
	ostree_repo || { echo "mkdisk: making the ostree repository failed" >&2; rm -rf "$d/ostree"; }
else
	echo "mkdisk: no ostree, or not root (make deps): no ostree repository on the disk" >&2
fi

# The demo (vm/demo.sh): examples/tree with its own store.
if [ -d "$here/../examples/tree" ]; then
	build --digest-store "$d/store-demo" "$here/../examples/tree" "$d/demo.cfs"
fi

mke2fs -q -F -t ext4 -b 4096 -O verity -L cfstest -d "$d" "$w/disk.img" 1G
