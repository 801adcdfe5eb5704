#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Make corrupt variants of a composefs image for the VM's negative tests.

Parses just enough of the format (common/cfs-format.h) to aim at structures:
truncations, random byte flips, a directory entry that points back at the
root or at its own directory (cycles), unsorted and duplicate entries, an
invalid name, a root that is not a directory, an impossible chunk count,
a broken xattr set and a bad magic. Writes OUTDIR/<name>.cfs for each, and
OUTDIR/expect with one line per variant: NAME WHERE ERRNO, where WHERE is
"mount" (the mount must fail with ERRNO), "walk" (the mount succeeds and a
walk of the tree must report ERRNO somewhere) or "any" (anything but a hang
or a kernel warning).

Usage: corrupt-image.py IMAGE OUTDIR [PREFIX [FLIPS]]
       corrupt-image.py --huge-chunks OUT
  PREFIX is put before each variant's name (several images can share one
  OUTDIR; "expect" is appended to); FLIPS is the number of random-flip
  variants (default 100).
  --huge-chunks writes a sparse image whose root directory claims 2^27
  chunks (a 1.5 GiB chunk table of holes) and nothing else.
"""
import os
import random
import struct
import sys

HDR = 40
F_PAYLOAD, F_MODE, F_NLINK, F_UIDGID, F_RDEV, F_TIMES, F_NSEC = 1, 2, 4, 8, 16, 32, 64
F_LOW, F_HIGH, F_XATTRS, F_DIGEST = 128, 256, 512, 1024
DT_DIR = 4


class Image:
    def __init__(self, data):
        self.d = bytearray(data)
        _, _, _, magic, self.data_off, self.root = struct.unpack_from("<BBHIQQ", self.d, 0)
        assert magic == 0xC078629A, "not a composefs image"

    def inode(self, index):
        """Return dict of the fields we need, with file offsets of some."""
        pos = HDR + index
        flags = struct.unpack_from("<I", self.d, pos)[0]
        p = pos + 4
        ino = {"index": index, "flags": flags, "pos": pos, "payload_len": 0,
               "mode": 0o100644}
        if flags & F_PAYLOAD:
            ino["payload_len"] = struct.unpack_from("<I", self.d, p)[0]
            p += 4
        if flags & F_MODE:
            ino["mode_pos"] = p
            ino["mode"] = struct.unpack_from("<I", self.d, p)[0]
            p += 4
        for f, n in ((F_NLINK, 4), (F_UIDGID, 8), (F_RDEV, 4), (F_TIMES, 16),
                     (F_NSEC, 8), (F_LOW, 4), (F_HIGH, 4)):
            if flags & f:
                p += n
        if flags & F_XATTRS:
            ino["xattrs"] = struct.unpack_from("<QI", self.d, p)
        ino["payload_pos"] = pos - ino["payload_len"]
        return ino

    def chunks(self, ino):
        if ino["payload_len"] == 0:
            return []
        pp = ino["payload_pos"]
        n = struct.unpack_from("<I", self.d, pp)[0]
        out = []
        for i in range(n):
            nd, size, off = struct.unpack_from("<HHQ", self.d, pp + 4 + 12 * i)
            out.append((nd, size, self.data_off + off))
        return out

    def entries(self, ino):
        """(dentry file offset, name, index, d_type) of every entry."""
        out = []
        for nd, size, off in self.chunks(ino):
            names = off + 12 * nd
            for i in range(nd):
                idx, dt, nl, no = struct.unpack_from("<QBBH", self.d, off + 12 * i)
                out.append((off + 12 * i, bytes(self.d[names + no:names + no + nl]), idx, dt))
        return out


def huge_chunks(out):
    """A root directory whose chunk table is 2^27 entries of holes."""
    n = 1 << 27
    plen = 4 + 12 * n
    root = plen  # the payload fills the inode section up to the root
    data_off = HDR + root + 12
    with open(out, "wb") as f:
        f.write(struct.pack("<BBHIQQ", 1, 0, 0, 0xC078629A, data_off, root))
        f.write(b"\0" * (HDR - f.tell()))
        f.write(struct.pack("<I", n))
        f.seek(HDR + root)
        f.write(struct.pack("<III", F_PAYLOAD | F_MODE, plen, 0o40755))
        f.truncate(data_off + 4096)


def main():
    if sys.argv[1] == "--huge-chunks":
        huge_chunks(sys.argv[2])
        return
    src, outdir = sys.argv[1], sys.argv[2]
    prefix = sys.argv[3] if len(sys.argv) > 3 else ""
    flips = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    data = open(src, "rb").read()
    os.makedirs(outdir, exist_ok=True)
    expect = []

    def emit(name, blob, where, err):
        name = prefix + name
        with open(os.path.join(outdir, name + ".cfs"), "wb") as f:
            f.write(blob)
        expect.append(f"{name} {where} {err}\n")

    img = Image(data)
    root = img.inode(img.root)
    rents = img.entries(root)
    subdirs = [e for e in rents if e[3] == DT_DIR]
    assert subdirs and len(rents) >= 2, "image needs a subdirectory and two root entries"
    sub = img.inode(subdirs[0][2])
    sents = img.entries(sub)
    assert sents, "first subdirectory must not be empty"

    emit("magic", data[:4] + b"\0\0\0\0" + data[8:], "mount", "EUCLEAN")
    emit("version", b"\x02" + data[1:], "mount", "EUCLEAN")
    for n in sorted({0, 39, HDR + 3, len(data) - 1} | {len(data) * k // 10 for k in range(1, 10)}):
        emit(f"truncated-{n}", data[:n], "any", "-")

    b = bytearray(data)
    struct.pack_into("<Q", b, 8, len(data) + 100)  # data_offset past the end
    emit("data-offset", bytes(b), "mount", "EUCLEAN")
    b = bytearray(data)
    struct.pack_into("<Q", b, 16, img.data_off)  # root outside the inode section
    emit("root-range", bytes(b), "mount", "EUCLEAN")

    if "mode_pos" in root:
        b = bytearray(data)
        struct.pack_into("<I", b, root["mode_pos"], 0o100644)
        emit("root-not-dir", bytes(b), "mount", "EUCLEAN")

    # An entry of the subdirectory pointing back at the root: a cycle.
    b = bytearray(data)
    struct.pack_into("<QB", b, sents[0][0], img.root, DT_DIR)
    emit("cycle-root", bytes(b), "walk", "EUCLEAN")
    # ... and at its own directory.
    b = bytearray(data)
    struct.pack_into("<QB", b, sents[0][0], sub["index"], DT_DIR)
    emit("cycle-self", bytes(b), "walk", "EUCLEAN")

    # Swap the names of the first two root entries: unsorted.
    b = bytearray(data)
    e0, e1 = rents[0][0], rents[1][0]
    n0 = bytes(b[e0 + 9:e0 + 12])
    b[e0 + 9:e0 + 12] = b[e1 + 9:e1 + 12]
    b[e1 + 9:e1 + 12] = n0
    emit("unsorted", bytes(b), "walk", "EUCLEAN")
    # The second entry's name the same as the first: a duplicate.
    b = bytearray(data)
    b[e1 + 9:e1 + 12] = b[e0 + 9:e0 + 12]
    emit("duplicate", bytes(b), "walk", "EUCLEAN")
    # A name with a slash.
    b = bytearray(data)
    nd, size, off = img.chunks(root)[0]
    no = struct.unpack_from("<H", b, e0 + 10)[0]
    b[off + 12 * nd + no] = ord("/")
    emit("slash-name", bytes(b), "walk", "EUCLEAN")
    # A NUL, then a slash, inside a long name, where the module checks a
    # word at a time, and a NUL as a short name's last byte.
    long = [e for e in rents + sents if len(e[1]) >= 16]
    if long:
        pos, name = long[0][0], long[0][1]
        no = struct.unpack_from("<H", data, pos + 10)[0]
        chunk = next(c for c in img.chunks(root) + img.chunks(sub) if c[2] <= pos < c[2] + c[1])
        at = chunk[2] + 12 * chunk[0] + no
        for what, i, byte in (("nul-name-word", 14, 0), ("slash-name-word", 9, ord("/"))):
            b = bytearray(data)
            b[at + i] = byte
            emit(what, bytes(b), "walk", "EUCLEAN")
    b = bytearray(data)
    e = rents[0]
    nd, size, off = next(c for c in img.chunks(root) if c[2] <= e[0] < c[2] + c[1])
    b[off + 12 * nd + struct.unpack_from("<H", b, e[0] + 10)[0] + len(e[1]) - 1] = 0
    emit("nul-name-tail", bytes(b), "walk", "EUCLEAN")
    # A name offset past the chunk.
    b = bytearray(data)
    struct.pack_into("<H", b, e0 + 10, 0xFFF0)
    emit("name-range", bytes(b), "walk", "EUCLEAN")
    # A directory claiming a huge number of chunks.
    b = bytearray(data)
    struct.pack_into("<I", b, sub["payload_pos"], 0x7FFFFFFF)
    emit("chunk-count", bytes(b), "walk", "EUCLEAN")
    # A chunk offset outside the image.
    b = bytearray(data)
    struct.pack_into("<Q", b, sub["payload_pos"] + 4 + 4, 1 << 60)
    emit("chunk-offset", bytes(b), "walk", "EUCLEAN")
    # Unknown inode flags on a subdirectory.
    b = bytearray(data)
    struct.pack_into("<I", b, sub["pos"], sub["flags"] | 0x80000000)
    emit("inode-flags", bytes(b), "walk", "EUCLEAN")

    # A file whose xattr set claims more elements than fit.
    xfile = None
    for e in rents + sents:
        ino = img.inode(e[2])
        if "xattrs" in ino and ino["xattrs"][1] >= 2:
            xfile = ino
            break
    if xfile:
        b = bytearray(data)
        struct.pack_into("<H", b, img.data_off + xfile["xattrs"][0], 0xFFFF)
        emit("xattr-count", bytes(b), "walk", "EUCLEAN")

    # An entry whose d_type is not its inode's type, and a whiteout.
    b = bytearray(data)
    struct.pack_into("<B", b, subdirs[0][0] + 8, 8)  # DT_REG for a directory
    emit("dtype-mismatch", bytes(b), "walk", "EUCLEAN")
    b = bytearray(data)
    struct.pack_into("<B", b, rents[0][0] + 8, 14)  # DT_WHT
    emit("dtype-whiteout", bytes(b), "walk", "EUCLEAN")

    rng = random.Random(1)
    for n in range(flips):
        b = bytearray(data)
        for _ in range(rng.randint(1, 6)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        emit(f"flip-{n}", bytes(b), "any", "-")

    with open(os.path.join(outdir, "expect"), "a") as f:
        f.writelines(expect)


if __name__ == "__main__":
    main()
