#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""Random composefs dumpfiles, and what the dump of their image must say.

  gendump.py gen SEED DUMP EXPECT   write a dumpfile with every file type,
                                    inline contents of 0 to 64 bytes,
                                    hardlinks, long and odd names and xattrs
                                    of every namespace; and, one line a path,
                                    what the dump of its composefs 1.0 image
                                    must hold for it (normalized as below)
  gendump.py norm DUMP              the same normalized lines for a dump

A normalized line is PATH, then '@' and the target for a hardlink, then
CONTENT, DIGEST and the xattrs sorted, tab-separated, escaped as dumps
escape them. An image's dump names the first path of an inode in walk
order, so the generator makes that path the one the others link to.
"""
import random
import sys


def esc(b, equal=False):
    out = []
    for c in b:
        if c == 0x5C:
            out.append("\\\\")
        elif c == 10:
            out.append("\\n")
        elif c == 13:
            out.append("\\r")
        elif c == 9:
            out.append("\\t")
        elif c <= 0x20 or c >= 0x7F or (equal and c == 0x3D):
            out.append("\\x%02x" % c)
        else:
            out.append(chr(c))
    return "".join(out)


def field(b):
    """An optional field: '-' when unset, a lone '-' escaped."""
    if not b:
        return "-"
    return "\\x2d" if b == b"-" else esc(b)


def xattr(k, v):
    """KEY=VALUE as both mkcomposefs and cfsctl read it: a value of '-' escaped."""
    return esc(k, True) + "=" + ("\\x2d" if v == b"-" else esc(v, True))


def gen(seed, dump_path, expect_path):
    r = random.Random(seed)
    odd = [b"-", b" ", b"a b", b"new\nline", b"back\\slash", b"eq=ual", b"\xff\xfe",
           b"tab\there", b"x" * 255, b"\xc3\xa9t\xc3\xa9", b"--", b"@at", b"%25",
           b"y" * 200 + b"\x01", b"cr\r"]
    acl = bytes([2, 0, 0, 0, 1, 0, 6, 0, 255, 255, 255, 255, 4, 0, 4, 0, 255, 255, 255, 255,
                 32, 0, 4, 0, 255, 255, 255, 255])
    # on many inodes, so that the image shares them, beside inline ones
    shared = [(b"user.shared", b"s"), (b"security.selinux", b"system_u:object_r:usr_t:s0\x00"),
              (b"trusted.shared", b"=x=")]

    def rand_bytes(n):
        return bytes(r.choice(b"ab-=\\ \n\t\r\x00\xff/") if r.random() < 0.3 else r.randrange(256)
                     for _ in range(n))

    def xattrs():
        xs = {}
        for k, v in shared:
            if r.random() < 0.5:
                xs[k] = v
        for _ in range(r.randrange(4)):
            k = r.choice([b"user.", b"trusted.", b"security.", b"user.overlay.",
                          b"trusted.overlay."]) + \
                r.choice([b"a", b"b=c", b"odd\\name", b"\xe2\x82\xac", b"k" * 40, b"opaque",
                          b"redirect", b"sp ace"])
            xs[k] = r.choice([b"", b"-", b"=", b"v=w", rand_bytes(r.randrange(1, 40)), b"x" * 300])
        if r.random() < 0.15:
            xs[b"system.posix_acl_access"] = acl
        if r.random() < 0.1:
            xs[b"system.posix_acl_default"] = acl
        return xs

    dirs, names, entries = [b""], set(), []

    def newpath():
        while True:
            n = r.choice(odd) if r.random() < 0.3 else b"f%d" % r.randrange(100000)
            p = r.choice(dirs) + b"/" + n
            if p not in names:
                names.add(p)
                return p

    for _ in range(8):
        p = newpath()
        dirs.append(p)
        entries.append({"path": p, "kind": "dir"})
    for size in range(65):
        c = rand_bytes(size) if size != 1 else r.choice([b"-", b"x", b"\\"])
        entries.append({"path": newpath(), "kind": "inline", "content": c})
    for _ in range(6):
        entries.append({"path": newpath(), "kind": "ext", "size": r.randrange(65, 1 << 40),
                        "digest": "%064x" % r.randrange(1 << 256)})
    for kind in ["sym", "chr", "blk", "fifo", "sock", "wh", "sym", "chr", "wh"]:
        entries.append({"path": newpath(), "kind": kind})
    for e in entries:
        e["xattrs"] = xattrs()

    links = []
    targets = [e for e in entries if e["kind"] != "dir"]
    for _ in range(14):
        e, p = r.choice(targets), newpath()
        if p.split(b"/") < e["path"].split(b"/"):
            e["path"], p = p, e["path"]  # earlier links follow the entry
        links.append((p, e))

    nlink = {id(e): 1 for e in entries}
    for _, e in links:
        nlink[id(e)] += 1
    subdirs = {d: 0 for d in dirs}
    for e in entries:
        if e["kind"] == "dir":
            subdirs[e["path"].rsplit(b"/", 1)[0]] += 1

    def mtime():
        return r.choice(["1000.0", "1000.0", "%d.%d" % (r.randrange(1 << 33), r.randrange(10 ** 9))])

    def owner():
        return r.choice(["0 0", "0 0", "%d %d" % (r.randrange(1 << 32), r.randrange(70000))])

    # composefs marks the parent of each whiteout opaque; the dump shows that
    opaque = set()
    for e in entries:
        if e["kind"] == "wh":
            opaque.add(e["path"].rsplit(b"/", 1)[0])
    root_x = xattrs()
    lines = ["/ 4096 40755 %d 0 0 0 1000.0 - - -%s" % (
        2 + subdirs[b""], "".join(" " + xattr(k, v) for k, v in sorted(root_x.items())))]
    expect = {}

    def expected(e_path, xs, content, digest):
        xs = dict(xs)
        if e_path in opaque:
            xs[b"trusted.overlay.opaque"] = b"x"
            xs[b"user.overlay.opaque"] = b"x"
        return "\t".join([field(content), digest] + sorted(xattr(k, v) for k, v in xs.items()))

    expect[b"/"] = expected(b"", root_x, None, "-")
    for e in entries:
        p, k, n = e["path"], e["kind"], nlink[id(e)]
        content, digest = None, "-"
        if k == "dir":
            line = "%s 4096 40%03o %d %s 0 %s - - -" % (field(p), r.randrange(512), 2 + subdirs[p],
                                                       owner(), mtime())
        elif k == "inline":
            content = e["content"]
            line = "%s %d 100%03o %d %s 0 %s - %s -" % (field(p), len(content), r.randrange(512), n,
                                                       owner(), mtime(), field(content))
        elif k == "ext":
            digest = e["digest"]
            line = "%s %d 100%03o %d %s 0 %s - - %s" % (field(p), e["size"], r.randrange(512), n,
                                                       owner(), mtime(), digest)
        elif k == "sym":
            target = rand_bytes(r.randrange(1, 100)).replace(b"\x00", b"z")
            line = "%s 0 120777 %d %s 0 %s %s - -" % (field(p), n, owner(), mtime(), field(target))
        elif k in ("chr", "blk"):
            line = "%s 0 %s0%03o %d %s %d %s - - -" % (field(p), "2" if k == "chr" else "6",
                                                      r.randrange(512), n, owner(),
                                                      r.randrange(1, 1 << 20), mtime())
        elif k == "fifo":
            line = "%s 0 10%03o %d %s 0 %s - - -" % (field(p), r.randrange(512), n, owner(), mtime())
        elif k == "sock":
            line = "%s 0 140%03o %d %s 0 %s - - -" % (field(p), r.randrange(512), n, owner(), mtime())
        else:  # an overlayfs whiteout, a 0/0 character device
            line = "%s 0 20000 %d 0 0 0 %s - - -" % (field(p), n, mtime())
        xs = e["xattrs"]
        lines.append(line + "".join(" " + xattr(k2, v) for k2, v in sorted(xs.items())))
        expect[p] = expected(p, xs, content, digest)
        e["expect"] = expect[p]
    for p, e in links:
        lines.append("%s 0 @100644 1 0 0 0 0.0 %s - -" % (field(p), field(e["path"])))
        expect[p] = "@" + field(e["path"]) + "\t" + e["expect"]
    with open(dump_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(expect_path, "w") as f:
        for p in sorted(expect, key=lambda p: p.split(b"/")):
            f.write(field(p or b"/") + "\t" + expect[p] + "\n")


def norm(dump_path):
    for line in open(dump_path):
        f = line.rstrip("\n").split(" ")
        head = f[0]
        if f[2].startswith("@"):
            head += "\t@" + f[8]
        print("\t".join([head, f[9], f[10]] + sorted(f[11:])))


if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        norm(sys.argv[2])
