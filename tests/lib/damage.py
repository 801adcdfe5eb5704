#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Makes damaged copies of a clean image, one kind of structural damage each,
# for the cfsctl verify tests. The clean image must be built from
# tests/data/verify/base.dump (a root holding files "a" and "b", a directory
# "d" with a file "f", xattrs on "a"). Usage: damage.py CLEAN OUTDIR; writes
# OUTDIR/<kind>.img for every kind below.
import os
import struct
import sys

FLAGS = ["PAYLOAD", "MODE", "NLINK", "UIDGID", "RDEV", "TIMES", "TIMES_NSEC",
         "LOW_SIZE", "HIGH_SIZE", "XATTRS", "DIGEST", "DIGEST_FROM_PAYLOAD"]
SIZES = [4, 4, 4, 8, 4, 16, 8, 4, 4, 12, 32, 0]
SECTION = 40
PAGE = 4096


def u16(d, o): return struct.unpack_from("<H", d, o)[0]
def u32(d, o): return struct.unpack_from("<I", d, o)[0]
def u64(d, o): return struct.unpack_from("<Q", d, o)[0]


class Image:
    def __init__(self, data):
        self.d = bytearray(data)
        self.doff = u64(self.d, 8)
        self.root = u64(self.d, 16)

    def fields(self, ino):
        """file offset of each present field of inode @ino, and the flags"""
        off = SECTION + ino
        flags = u32(self.d, off)
        pos, where = off + 4, {}
        for i, name in enumerate(FLAGS):
            if flags & (1 << i):
                where[name] = pos
                pos += SIZES[i]
        return flags, where

    def payload_len(self, ino):
        flags, f = self.fields(ino)
        return u32(self.d, f["PAYLOAD"]) if "PAYLOAD" in f else 0

    def chunks(self, ino):
        """(offset of the chunk table entry, n, size, file offset of the chunk)"""
        plen = self.payload_len(ino)
        table = SECTION + ino - plen
        out = []
        for i in range(u32(self.d, table)):
            e = table + 4 + 12 * i
            out.append((e, u16(self.d, e), u16(self.d, e + 2), self.doff + u64(self.d, e + 4)))
        return out

    def entries(self, ino):
        """name -> (file offset of the dentry, inode, name file offset)"""
        out = {}
        for _, n, _, coff in self.chunks(ino):
            names = coff + 12 * n
            for j in range(n):
                e = coff + 12 * j
                nlen, noff = self.d[e + 9], u16(self.d, e + 10)
                name = bytes(self.d[names + noff:names + noff + nlen]).decode()
                out[name] = (e, u64(self.d, e), names + noff)
        return out


def main():
    clean, outdir = sys.argv[1], sys.argv[2]
    base = open(clean, "rb").read()
    os.makedirs(outdir, exist_ok=True)

    def make(kind, fn):
        img = Image(base)
        fn(img)
        open(os.path.join(outdir, kind + ".img"), "wb").write(img.d)

    def unsorted(img):  # swap the names "a" and "b": the root lists b, a
        ents = img.entries(img.root)
        pa, pb = ents["a"][2], ents["b"][2]
        img.d[pa], img.d[pb] = img.d[pb], img.d[pa]

    def duplicate(img):  # rename "b" to "a"
        img.d[img.entries(img.root)["b"][2]] = ord("a")

    def move_chunk(img, to_end_of_page, size=None):
        e, n, csize, coff = img.chunks(img.root)[0]
        chunk = bytes(img.d[coff:coff + csize])
        end = len(img.d)
        # place the chunk so that it starts 8 bytes before a page boundary
        new = (end // PAGE + 1) * PAGE - 8 if to_end_of_page else end
        img.d.extend(b"\0" * (new - end))
        img.d.extend(chunk)
        if size:
            img.d.extend(b"\0" * (size - csize))
            struct.pack_into("<H", img.d, e + 2, size)
        struct.pack_into("<Q", img.d, e + 4, new - img.doff)

    def chunk_page(img):
        move_chunk(img, True)

    def chunk_oversized(img):
        move_chunk(img, False, 5000)

    def xattr_bounds(img):  # the value of the first xattr of "a" runs past its set
        _, f = img.fields(img.entries(img.root)["a"][1])
        xoff = img.doff + u64(img.d, f["XATTRS"])
        struct.pack_into("<H", img.d, xoff + 2 + 2, 4000)

    def cycle(img):  # /d/f names the root directory
        d = img.entries(img.root)["d"][1]
        e = img.entries(d)["f"][0]
        struct.pack_into("<Q", img.d, e, img.root)
        img.d[e + 8] = 4  # DT_DIR

    def dir_hardlink(img):  # /b names the directory /d as well
        ents = img.entries(img.root)
        struct.pack_into("<Q", img.d, ents["b"][0], ents["d"][1])
        img.d[ents["b"][0] + 8] = 4

    def unreachable(img):  # the root is now /d: the old root, a and b are unreachable
        struct.pack_into("<Q", img.d, 16, img.entries(img.root)["d"][1])

    def noncanonical(img):  # an unused header byte set, and a digest flag on a directory
        img.d[1] = 7
        off = SECTION + img.root
        struct.pack_into("<I", img.d, off, u32(img.d, off) | (1 << 11))

    def d_type(img):  # /a is listed as a symlink
        img.d[img.entries(img.root)["a"][0] + 8] = 10

    def bad_name(img):  # /b renamed "/"
        img.d[img.entries(img.root)["b"][2]] = ord("/")

    def several(img):  # unsorted, a chunk crossing a page and an xattr out of bounds at once
        xattr_bounds(img)
        unsorted(img)
        chunk_page(img)

    for kind, fn in [("unsorted", unsorted), ("duplicate", duplicate),
                     ("chunk-page", chunk_page), ("chunk-oversized", chunk_oversized),
                     ("xattr-bounds", xattr_bounds), ("cycle", cycle),
                     ("dir-hardlink", dir_hardlink), ("unreachable", unreachable),
                     ("noncanonical", noncanonical), ("d_type", d_type),
                     ("entry-name", bad_name), ("several", several)]:
        make(kind, fn)


if __name__ == "__main__":
    main()
