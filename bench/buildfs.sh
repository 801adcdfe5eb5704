#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A fresh ext4 for each timed build of 'make bench' (hyperfine --prepare):
# unmounts MNT, makes a new ext4 (4 KiB blocks, verity feature, inode
# tables written now rather than by a background thread) on IMG, sized
# SIZE, and mounts it on MNT through a loop device. A build into a
# filesystem that just had a store of many files deleted is slow for
# minutes (ext4 avoids recently freed inodes): each run starts clean.
# Usage: bench/buildfs.sh IMG MNT SIZE   (bench/buildfs.sh --umount MNT)
set -e
if [ "$1" = --umount ]; then
	umount "$2" 2> /dev/null || true
	exit 0
fi
img=$1 mnt=$2 size=$3
umount "$mnt" 2> /dev/null || true
rm -f "$img"
truncate -s "$size" "$img"
mkfs.ext4 -q -F -b 4096 -O verity -E lazy_itable_init=0,lazy_journal_init=0 "$img"
mkdir -p "$mnt"
mount -o loop "$img" "$mnt"
