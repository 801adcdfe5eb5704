#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Damage a composefs 1.0 (EROFS) image on purpose, one structure at a time.

Usage: damage-erofs.py IMAGE OUTDIR

IMAGE must be built from tests/data/verify/erofs.dump. The image is parsed
here (layout in lib/format/erofs/erofs-format.h), each structure found by walking from
the superblock, and one copy per kind of damage written as OUTDIR/KIND.img,
for tests/cli/3306-verify-erofs-damage.sh.
"""
import os
import struct
import sys

BLK = 4096
SB = 1024


class Image:
    def __init__(self, data):
        self.d = bytearray(data)
        self.root = struct.unpack_from("<H", self.d, SB + 14)[0]
        self.meta = struct.unpack_from("<I", self.d, SB + 40)[0] * BLK
        self.xattr = struct.unpack_from("<I", self.d, SB + 44)[0] * BLK

    def inode(self, nid):
        off = self.meta + nid * 32
        fmt, icount, mode = struct.unpack_from("<HHH", self.d, off)
        compact = (fmt & 1) == 0
        isize = 32 if compact else 64
        size = struct.unpack_from("<I" if compact else "<Q", self.d, off + 8)[0]
        iu = struct.unpack_from("<I", self.d, off + 16)[0]
        xsize = 12 + (icount - 1) * 4 if icount else 0
        return dict(off=off, isize=isize, xoff=off + isize, xsize=xsize, mode=mode,
                    layout=(fmt >> 1) & 7, size=size, iu=iu)

    def data_at(self, ino):
        """File offset of a directory's only block (they are small here)."""
        if ino["layout"] == 2:
            return ino["xoff"] + ino["xsize"]
        return ino["iu"] * BLK

    def dirents(self, nid):
        """[(entry offset, name, name offset, nid, file type)] of a one-block directory."""
        ino = self.inode(nid)
        b = self.data_at(ino)
        first = struct.unpack_from("<H", self.d, b + 8)[0]
        n = first // 12
        out = []
        for i in range(n):
            e = b + i * 12
            child, noff, ft = struct.unpack_from("<QHB", self.d, e)
            end = struct.unpack_from("<H", self.d, e + 12 + 8)[0] if i + 1 < n else ino["size"]
            name = bytes(self.d[b + noff:b + end]).rstrip(b"\0")
            out.append((e, name, b + noff, child, ft))
        return out

    def lookup(self, path):
        nid = self.root
        for part in path.strip("/").split("/"):
            if part:
                nid = next(c for _, n, _, c, _ in self.dirents(nid) if n == part.encode())
        return nid

    def entry(self, path):
        parent, name = path.rsplit("/", 1)
        nid = self.lookup(parent or "/")
        return next(x for x in self.dirents(nid) if x[1] == name.encode())

    def xattrs(self, nid):
        """[(entry offset, index, name, value offset, value length)] inline; shared id offsets."""
        ino = self.inode(nid)
        if not ino["xsize"]:
            return [], []
        shared = self.d[ino["xoff"] + 4]
        p = ino["xoff"] + 12
        ids = [p + 4 * i for i in range(shared)]
        p += 4 * shared
        out = []
        end = ino["xoff"] + ino["xsize"]
        while p < end:
            nlen, idx, vlen = struct.unpack_from("<BBH", self.d, p)
            name = bytes(self.d[p + 4:p + 4 + nlen])
            out.append((p, idx, name, p + 4 + nlen, vlen))
            p += (4 + nlen + vlen + 3) & ~3
        return out, ids

    def xattr_entry(self, nid, name):
        return next(x for x in self.xattrs(nid)[0] if x[2] == name)


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    base = open(src, "rb").read()
    os.makedirs(outdir, exist_ok=True)

    def make(kind, fn):
        img = Image(base)
        fn(img)
        open(os.path.join(outdir, kind + ".img"), "wb").write(img.d)

    def sb_magic(i):
        i.d[SB] ^= 0xff

    def sb_blocks(i):
        struct.pack_into("<I", i.d, SB + 36, len(i.d) // BLK + 1)

    def mode(i):
        struct.pack_into("<H", i.d, i.inode(i.lookup("/a"))["off"] + 4, 0o170644)

    def rename(i, path, new):
        e = i.entry(path)
        i.d[e[2]:e[2] + len(new)] = new

    def cycle(i):
        e = i.entry("/d/f")
        struct.pack_into("<QHB", i.d, e[0], i.root, struct.unpack_from("<H", i.d, e[0] + 8)[0], 2)

    def dot(i):
        e = i.entry("/d/.")
        struct.pack_into("<Q", i.d, e[0], i.root)

    def d_type(i):
        i.d[i.entry("/s")[0] + 10] = 1

    def nid_range(i):
        struct.pack_into("<Q", i.d, i.entry("/d/f")[0], 1 << 40)

    def redirect(i):
        x = i.xattr_entry(i.lookup("/a"), b"overlay.redirect")
        i.d[x[3] + 5] = ord("0") if i.d[x[3] + 5] != ord("0") else ord("1")

    def metacopy(i):
        x = i.xattr_entry(i.lookup("/a"), b"overlay.metacopy")
        i.d[x[3] + 1] = 7

    def xattr_index(i):
        x = i.xattr_entry(i.lookup("/a"), b"overlay.redirect")
        i.d[x[0] + 1] = 9

    def overlay_xattr(i):
        x = i.xattr_entry(i.lookup("/d/f"), b"overlay.overlay.keep")
        i.d[x[0] + 4:x[0] + 4 + 16] = b"overlay.nlink..."

    def shared(i):
        ids = i.xattrs(i.lookup("/a"))[1]
        struct.pack_into("<I", i.d, ids[0], 0xfffffff)

    def dir_block(i):
        b = i.data_at(i.inode(i.lookup("/d")))
        struct.pack_into("<H", i.d, b + 8, 13)

    make("superblock-magic", sb_magic)
    make("superblock-blocks", sb_blocks)
    make("inode-mode", mode)
    make("unsorted", lambda i: rename(i, "/a", b"z"))
    make("duplicate", lambda i: rename(i, "/d/g", b"f"))
    make("entry-name", lambda i: rename(i, "/s", b"/"))
    make("dot", dot)
    make("cycle", cycle)
    make("d_type", d_type)
    make("nid-range", nid_range)
    make("redirect-digest", redirect)
    make("metacopy", metacopy)
    make("xattr-index", xattr_index)
    make("overlay-xattr", overlay_xattr)
    make("shared-xattr", shared)
    make("dir-block", dir_block)


if __name__ == "__main__":
    main()
