#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Makes the seed corpora of the fuzz targets, at build time, so that no
# binary corpus is kept in the repository: images that cfsctl builds from
# examples/tree and from a small tree with every file type and awkward case
# (hardlinks, xattrs, long names and targets, a directory of several chunks,
# deep nesting), composefs 1.0 (EROFS) images of some of them, their dumps,
# and the malformed dumps of the tests.
# zstd:chunked tables of contents are written by hand here: every entry
# type, chunks, xattrs, times with fractions and zones.
# Usage: fuzz/make-seeds.sh CFSCTL OUTDIR   (fills OUTDIR/image, OUTDIR/dump, OUTDIR/toc)
set -eu
export LC_ALL=C
cfsctl=$(realpath "${1:?usage: make-seeds.sh CFSCTL OUTDIR}")
out=${2:?usage: make-seeds.sh CFSCTL OUTDIR}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfs-seeds.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

rm -rf "$out"
mkdir -p "$out/image" "$out/dump" "$out/toc"

# A small tree with the cases the reader must handle.
t=$tmp/tree
mkdir -p "$t/dir/sub" "$t/many"
printf 'hello\n' >"$t/file"
printf 'hello\n' >"$t/same"
: >"$t/empty"
ln "$t/file" "$t/dir/hardlink"
ln -s file "$t/symlink"
ln -s "$(printf 't%.0s' $(seq 600))" "$t/longlink"
mkfifo "$t/fifo"
printf 'x' >"$t/$(printf 'n%.0s' $(seq 255))"
printf 'y' >"$t/$(printf 'caf\xe9 a=b')"
for i in $(seq 1 300); do : >"$t/many/entry-$i"; done
p=$t/deep
for i in $(seq 1 20); do p=$p/d$i; done
mkdir -p "$p"
printf 'bottom' >"$p/leaf"
chmod 4755 "$t/file"
if [ "$(id -u)" -eq 0 ]; then
	mknod "$t/null" c 1 3
	mknod "$t/whiteout" c 0 0
	mknod "$t/loop" b 7 0
fi
if command -v setfattr >/dev/null; then
	setfattr -n user.color -v blue "$t/file" 2>/dev/null || :
	setfattr -n user.empty "$t/empty" 2>/dev/null || :
	setfattr -n user.bin -v 0sAAEC "$t/same" 2>/dev/null || :
	setfattr -n user.color -v blue "$t/dir" 2>/dev/null || :
	[ "$(id -u)" -ne 0 ] || setfattr -n trusted.overlay.opaque -v y "$t/dir/sub" 2>/dev/null || :
fi
small=$tmp/small
mkdir -p "$small/d"
printf 'a' >"$small/f"
ln -s f "$small/l"

n=0
for src in "$top/examples/tree" "$t" "$small" "$t/dir"; do
	n=$((n + 1))
	"$cfsctl" build "$src" "$out/image/tree-$n.cfs"
	"$cfsctl" build --use-epoch --skip-xattrs "$src" "$out/image/epoch-$n.cfs"
	"$cfsctl" inspect dump "$out/image/tree-$n.cfs" >"$out/dump/tree-$n.dump"
done
# An image of a single empty directory: the smallest valid input.
mkdir "$tmp/emptydir"
"$cfsctl" build "$tmp/emptydir" "$out/image/emptydir.cfs"
"$cfsctl" inspect dump "$out/image/emptydir.cfs" >"$out/dump/emptydir.dump"
# composefs 1.0 (EROFS) images go through the same reader.
n=0
for src in "$small" "$t/dir" "$tmp/emptydir"; do
	n=$((n + 1))
	"$cfsctl" build --format=erofs "$src" "$out/image/erofs-$n.img"
done
"$cfsctl" build --format=erofs --from-dump "$out/dump/tree-3.dump" "$out/image/erofs-dump.img"
for f in "$top"/tests/data/bad-dumps/*.dump; do
	cp "$f" "$out/dump/bad-$(basename "$f")"
done
d=sha256:$(printf 'ab%.0s' $(seq 32))
cat >"$out/toc/layer.json" <<EOF
{"version":1,"entries":[{"type":"dir","name":"./","mode":493,"modtime":"2024-05-06T07:08:09Z"},
{"type":"reg","name":"./small","mode":420,"size":3,"modtime":"2024-05-06T07:08:09.5+02:00","digest":"$d","offset":94,"endOffset":110},
{"type":"symlink","name":"./link","linkName":"a/f1","mode":511},
{"type":"dir","name":"./a/","mode":493,"uid":1000,"gid":1000,"xattrs":{"user.k":"dg=="}},
{"type":"reg","name":"./a/big","mode":420,"size":57000,"digest":"$d","offset":245,"endOffset":57287,"chunkSize":3065,"chunkDigest":"$d"},
{"type":"chunk","name":"./a/big","offset":3324,"chunkSize":38093,"chunkOffset":3065,"chunkDigest":"$d"},
{"type":"chunk","name":"./a/big","offset":41431,"chunkSize":15842,"chunkOffset":41158,"chunkType":"zeros"},
{"type":"hardlink","name":"./a/hard","linkName":"./a/big","mode":420},
{"type":"reg","name":"./a/.wh.gone","mode":420},
{"type":"char","name":"./null","mode":438,"devMajor":1,"devMinor":3},
{"type":"block","name":"./loop","devMajor":7},{"type":"fifo","name":"./fifo","mode":420}],
"tarSplitDigest":"$d"}
EOF
printf '{"version":1,"entries":[]}' >"$out/toc/empty.json"
echo "seeds: $(ls "$out/image" | wc -l) images, $(ls "$out/dump" | wc -l) dumps, $(ls "$out/toc" | wc -l) TOCs in $out"
