#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Creates the rich test tree the VM compares a composefs mount against:
# every file type (incl. devices, a fifo, a socket, an overlay whiteout),
# hardlinks, xattrs of the user/trusted/security namespaces and a POSIX
# ACL, 255-byte and non-UTF-8 names, a 3000-entry directory, a 3000-byte
# symlink target, a sparse file over 4 GiB, 60 levels of nesting, and
# nanosecond mtimes. Must run as root (devices, trusted.* xattrs).
#
# Usage: vm/mktree.sh DIR   (DIR must not exist)
set -euo pipefail
d=$1
[ ! -e "$d" ] || { echo "mktree: $d exists" >&2; exit 1; }
mkdir -p "$d"
cd "$d"

printf 'hello composefs\n' > hello.txt
: > empty
head -c 100000 /dev/urandom > random.bin
seq 1 20000 > numbers.txt
mkdir -p sub/inner
printf 'shared content\n' > sub/shared-a
cp sub/shared-a sub/shared-b # same content, separate inode: one object
ln hello.txt sub/hello-hardlink
ln hello.txt sub/inner/hello-hardlink2
ln -s hello.txt rel-link
ln -s /absolute/target abs-link
ln -s "$(head -c 3000 /dev/zero | tr '\0' 'x')" long-target-link
mknod chardev c 1 3
mknod blockdev b 7 200
mknod whiteout c 0 0
mkfifo fifo
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' socket
chmod 4755 hello.txt
chmod 2700 sub/inner
chmod 1777 sub
chown 1234:5678 random.bin
chown 4000000000:4000000001 numbers.txt

# names
long=$(printf 'n%.0s' $(seq 1 255))
echo long > "$long"
printf 'latin1\n' > "$(printf 'caf\xe9-\x01-\x7f')"
printf 'utf8\n' > "$(printf 'gr\xc3\xbc\xc3\x9f')"
printf 'sp\n' > "name with spaces=and=equals"

# a big directory
mkdir big
for i in $(seq -w 1 3000); do : > "big/entry-$i"; done
printf 'in big\n' > big/entry-1500

# deep nesting
p=deep
for i in $(seq 1 60); do p=$p/l$i; done
mkdir -p "$p"
printf 'bottom\n' > "$p/file"

# sparse file over 4 GiB, with data at both ends and past 4 GiB
truncate -s 5G sparse
printf 'start' | dd of=sparse conv=notrunc status=none
printf 'past4g' | dd of=sparse bs=1 seek=$((4 * 1024 * 1024 * 1024 + 12345)) conv=notrunc status=none
printf 'end' | dd of=sparse bs=1 seek=$((5 * 1024 * 1024 * 1024 - 3)) conv=notrunc status=none

# xattrs
setfattr -n user.plain -v value hello.txt
setfattr -n user.empty hello.txt
setfattr -n user.binary -v 0x00ff10 random.bin
setfattr -n trusted.overlay.opaque -v y sub
setfattr -n security.test -v sec hello.txt
setfattr -n user.big -v "$(head -c 2000 /dev/zero | tr '\0' 'v')" numbers.txt
setfattr -n user.on-dir -v d sub/inner
setfattr -h -n trusted.on-link -v l rel-link
setfacl -m u:1234:r-x,g:99:r empty 2>/dev/null || setfattr -n user.no-acl -v 1 empty

# mtimes with nanoseconds, set last (children first)
find . -depth -print0 | xargs -0 touch -h -d '2021-02-03 04:05:06.123456789'
touch -h -d '1999-12-31 23:59:59.999999999' hello.txt sub big
touch -h -d '2038-01-19 03:14:08.5' random.bin
