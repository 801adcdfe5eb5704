#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Directory images for the VM's directory tests (vm/tests/4214-dirs.sh).

Builds, with cfsctl from a dumpfile, an image whose directories span many
chunks: wide/ (names f0000, f0002, ... f1998) and long/ (names sharing a
40-byte prefix), then writes variants that break a rule across chunks or
make a directory reachable under two names:

  dirs.cfs         the good image; wide.names, long.names list the entries,
                   wide.absent, long.absent names between and around them;
                   huge/ holds HUGE_N names over a couple of thousand chunks:
                   huge.sample lists every 97th, huge.mid the middle one,
                   huge.count the entries and huge.pages the 4 KiB pages its
                   chunks span
  cross-dup.cfs    wide/'s second chunk starts with the first chunk's last name
  cross-order.cfs  wide/'s second chunk starts with a name that sorts inside
                   the first chunk (the list ["b"] ["a", "b"] of the issue)
  huge-cross.cfs   huge/'s second chunk starts with the first chunk's last
                   name (huge-cross.name), huge.last is huge/'s last name
  dirlink.cfs      the root's entry b/ names the inode of a/

Usage: dir-images.py CFSCTL OUTDIR
"""
import os
import struct
import subprocess
import sys

HDR = 40
F_PAYLOAD = 1
WIDE = ["f%04d" % i for i in range(0, 2000, 2)]
LONG = ["p" * 40 + "%03d" % i for i in range(0, 600, 2)]
HUGE_N = 100000
HUGE = ["h" * 60 + "%06d" % i for i in range(HUGE_N)]


def dump(path):
    mt = "1600000000.0"
    lines = ["/ 4096 40755 5 0 0 0 %s - - -" % mt]
    for d, names in (("wide", WIDE), ("long", LONG), ("huge", HUGE)):
        lines.append("/%s 4096 40755 2 0 0 0 %s - - -" % (d, mt))
        lines += ["/%s/%s 0 100644 1 0 0 0 %s - - -" % (d, n, mt) for n in names]
    lines.append("/a 4096 40755 2 0 0 0 %s - - -" % mt)
    lines.append("/a/x 0 100644 1 0 0 0 %s - - -" % mt)
    lines.append("/b 4096 40755 2 0 0 0 %s - - -" % mt)
    lines.append("/b/y 0 100644 1 0 0 0 %s - - -" % mt)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


class Image:
    def __init__(self, data):
        self.d = bytearray(data)
        self.data_off, self.root = struct.unpack_from("<QQ", self.d, 8)

    def payload(self, index):
        pos = HDR + index
        flags = struct.unpack_from("<I", self.d, pos)[0]
        assert flags & F_PAYLOAD
        plen = struct.unpack_from("<I", self.d, pos + 4)[0]
        return pos - plen

    def chunks(self, index):
        pp = self.payload(index)
        n = struct.unpack_from("<I", self.d, pp)[0]
        out = []
        for i in range(n):
            nd, size, off = struct.unpack_from("<HHQ", self.d, pp + 4 + 12 * i)
            out.append((nd, self.data_off + off))
        return out

    def entries(self, off, nd):
        """(dentry offset, name offset, name, index) of a chunk's entries."""
        out = []
        for i in range(nd):
            idx, _, nl, no = struct.unpack_from("<QBBH", self.d, off + 12 * i)
            npos = off + 12 * nd + no
            out.append((off + 12 * i, npos, bytes(self.d[npos:npos + nl]), idx))
        return out

    def lookup(self, dir_index, name):
        for nd, off in self.chunks(dir_index):
            for ent in self.entries(off, nd):
                if ent[2] == name:
                    return ent
        raise KeyError(name)


def main():
    cfsctl, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    dump(os.path.join(out, "dirs.dump"))
    good = os.path.join(out, "dirs.cfs")
    subprocess.run([cfsctl, "build", "--from-dump", os.path.join(out, "dirs.dump"),
                    good], check=True, stdout=subprocess.DEVNULL)
    os.unlink(os.path.join(out, "dirs.dump"))
    with open(good, "rb") as f:
        base = f.read()
    for d, names in (("wide", WIDE), ("long", LONG)):
        with open(os.path.join(out, d + ".names"), "w") as f:
            f.write("\n".join(names) + "\n")
        absent = [n[:-1] + chr(ord(n[-1]) + 1) for n in names] + [names[0][:-1], names[-1] + "z"]
        with open(os.path.join(out, d + ".absent"), "w") as f:
            f.write("\n".join(absent) + "\n")

    img = Image(base)
    huge = img.chunks(img.lookup(img.root, b"huge")[3])
    pages = {off // 4096 for nd, off in huge}
    assert len(pages) >= 1000, "huge/ should span a thousand pages"
    with open(os.path.join(out, "huge.pages"), "w") as f:
        f.write("%d\n" % len(pages))
    with open(os.path.join(out, "huge.count"), "w") as f:
        f.write("%d\n" % HUGE_N)
    with open(os.path.join(out, "huge.mid"), "w") as f:
        f.write(HUGE[HUGE_N // 2] + "\n")
    with open(os.path.join(out, "huge.sample"), "w") as f:
        f.write("\n".join(HUGE[::97]) + "\n")

    wide = img.lookup(img.root, b"wide")[3]
    chunks = img.chunks(wide)
    assert len(chunks) >= 3, "wide/ should span several chunks"
    last0 = img.entries(chunks[0][1], chunks[0][0])[-1]
    first1 = img.entries(chunks[1][1], chunks[1][0])[0]
    assert len(last0[2]) == len(first1[2])

    def variant(name, patch):
        v = Image(base)
        patch(v)
        with open(os.path.join(out, name), "wb") as f:
            f.write(v.d)

    def dup(v):
        v.d[first1[1]:first1[1] + len(last0[2])] = last0[2]
    variant("cross-dup.cfs", dup)

    def order(v):
        # One more than the first chunk's first name: inside chunk 0's range,
        # not one of its names (they are all even), below chunk 1's second.
        inside = b"f0001"
        v.d[first1[1]:first1[1] + len(inside)] = inside
    variant("cross-order.cfs", order)

    hlast0 = img.entries(huge[0][1], huge[0][0])[-1]
    hfirst1 = img.entries(huge[1][1], huge[1][0])[0]
    assert len(hlast0[2]) == len(hfirst1[2])

    def huge_dup(v):
        v.d[hfirst1[1]:hfirst1[1] + len(hlast0[2])] = hlast0[2]
    variant("huge-cross.cfs", huge_dup)
    with open(os.path.join(out, "huge-cross.name"), "w") as f:
        f.write(hlast0[2].decode() + "\n")
    with open(os.path.join(out, "huge.last"), "w") as f:
        f.write(HUGE[-1] + "\n")

    def dirlink(v):
        a = v.lookup(v.root, b"a")
        b = v.lookup(v.root, b"b")
        struct.pack_into("<Q", v.d, b[0], a[3])
    variant("dirlink.cfs", dirlink)
    with open(os.path.join(out, "cross.name"), "w") as f:
        f.write(last0[2].decode() + "\n")


if __name__ == "__main__":
    main()
