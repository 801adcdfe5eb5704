#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Makes the benchmark's input trees on the host, deterministically: the same
# arguments always give the same bytes, names, modes, owners and times.
# File content is synthesized from a seed (the file's content digest where
# the listing has one, so files that shared content still do, else its
# path): each 4 KiB block is 2 KiB of seeded pseudo-random bytes and 2 KiB
# of repeated text, so it compresses about 2:1, roughly like binaries.
#
# Usage:
#   mkinputs.py os DUMP[.gz] OUT --cap BYTES     materialise a dumpfile listing
#   mkinputs.py synth OUT --wide N --depth D --big-mib M
#   mkinputs.py versions OUT-A OUT-B --files N   an update: B shares most of A
#   mkinputs.py sample DIR N                     N paths of DIR, fixed seed
#   mkinputs.py objects DUMP                     the backing object of each
#                                                regular file of a dump
#   mkinputs.py linktree DUMP STORE OUT          a dump's tree as plain
#                                                directories, its files
#                                                hardlinks to STORE's objects
import gzip
import os
import random
import stat
import sys

TEXT = (b"composefs benchmark content: the quick brown fox jumps over the lazy dog. " * 30)[:2048]


def content(seed, size):
    """size bytes from seed: per 4 KiB, 2 KiB random then 2 KiB text."""
    r = random.Random(seed)
    out = bytearray()
    while len(out) < size:
        out += r.randbytes(2048)
        out += TEXT
    return bytes(out[:size])


def unescape(field):
    if "\\" not in field:
        return os.fsencode(field)
    out = bytearray()
    i = 0
    b = field.encode("latin-1", "surrogateescape")
    while i < len(b):
        c = b[i]
        if c == 0x5C:
            n = b[i + 1]
            if n == ord("x"):
                out.append(int(b[i + 2:i + 4], 16))
                i += 4
                continue
            out.append({ord("\\"): 0x5C, ord("n"): 10, ord("r"): 13, ord("t"): 9}[n])
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)


def put_file(path, data, mode, uid, gid, mtime_ns):
    with open(path, "wb") as f:
        f.write(data)
    os.lchown(path, uid, gid)
    os.chmod(path, mode)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def parse_mtime(s):
    sec, _, nsec = s.partition(".")
    return int(sec) * 1000000000 + int(nsec or 0)


def cmd_os(args):
    """Materialise a dumpfile: regular files, dirs, symlinks, hardlinks.
    Sizes above --cap are cut to --cap; devices, fifos, sockets and xattrs
    are left out."""
    dump, out = args[0], args[1]
    cap = int(args[args.index("--cap") + 1])
    opener = gzip.open if dump.endswith(".gz") else open
    out_b = os.fsencode(out)
    dirs = []
    nfiles = nbytes = 0
    with opener(dump, "rt", encoding="latin-1", newline="\n") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 11:
                continue
            path = unescape(fields[0])
            dest = out_b + (b"" if path == b"/" else path)
            size = int(fields[1])
            m = fields[2]
            hard = m.startswith("@")
            mode = int(m.lstrip("@"), 8)
            uid, gid = int(fields[4]), int(fields[5])
            mt = parse_mtime(fields[7])
            payload = fields[8]
            if hard:
                os.link(out_b + unescape(payload), dest)
                continue
            if stat.S_ISDIR(mode):
                os.makedirs(dest, exist_ok=True)
                dirs.append((dest, stat.S_IMODE(mode), uid, gid, mt))
            elif stat.S_ISLNK(mode):
                os.symlink(unescape(payload), dest)
                os.lchown(dest, uid, gid)
                os.utime(dest, ns=(mt, mt), follow_symlinks=False)
            elif stat.S_ISREG(mode):
                seed = fields[10] if fields[10] != "-" else (payload if payload != "-" else fields[0])
                n = min(size, cap)
                put_file(dest, content(seed, n), stat.S_IMODE(mode), uid, gid, mt)
                nfiles += 1
                nbytes += n
    # Directory modes and times last: entries change mtimes, and some
    # directories are not writable.
    for dest, mode, uid, gid, mt in reversed(dirs):
        os.lchown(dest, uid, gid)
        os.chmod(dest, mode)
        os.utime(dest, ns=(mt, mt))
    print(f"os: {nfiles} files, {nbytes} bytes (cap {cap})", file=sys.stderr)


def cmd_synth(args):
    """Very wide directories, deep paths and one large file."""
    out = args[0]
    wide = int(args[args.index("--wide") + 1])
    depth = int(args[args.index("--depth") + 1])
    big = int(args[args.index("--big-mib") + 1])
    t = 1700000000 * 1000000000
    r = random.Random("synth")
    for w in ("wide1", "wide2"):
        d = os.path.join(out, w)
        os.makedirs(d)
        for i in range(wide):
            name = f"entry-{i:06d}-{r.getrandbits(32):08x}"
            put_file(os.path.join(d, name), content(f"{w}/{i}", r.randrange(0, 2048)),
                     0o644, 0, 0, t + i)
        # directories in wide2, files in wide1
        if w == "wide2":
            for i in range(wide // 10):
                os.mkdir(os.path.join(d, f"sub-{i:05d}"))
    d = out
    for lvl in range(depth):
        d = os.path.join(d, f"level-{lvl:03d}-{'x' * 40}")
        os.mkdir(d)
        for j in range(4):
            put_file(os.path.join(d, f"f{j}"), content(f"deep/{lvl}/{j}", 3000), 0o644, 0, 0, t)
        os.symlink("../f0", os.path.join(d, "up"))
    put_file(os.path.join(out, "big.bin"), content("big", big << 20), 0o644, 0, 0, t)
    print(f"synth: 2 x {wide} wide, depth {depth}, big {big} MiB", file=sys.stderr)


def cmd_versions(args):
    """B is an update of A: 90% of the files keep their content but get a
    new mtime (and 10% of those a new mode or owner); 10% change content;
    a few are added and removed."""
    a, b = args[0], args[1]
    n = int(args[args.index("--files") + 1])
    r = random.Random("versions")
    ta, tb = 1600000000 * 1000000000, 1650000000 * 1000000000
    for i in range(n):
        sub = f"pkg{i % 40:02d}"
        size = r.choice((1024, 4096, 16384, 32768, 65536, 131072))
        seed = f"v/{i}"
        for root in (a, b):
            os.makedirs(os.path.join(root, sub), exist_ok=True)
        pa = os.path.join(a, sub, f"file{i:05d}")
        put_file(pa, content(seed, size), 0o644, 0, 0, ta)
        roll = r.random()
        if roll < 0.02:
            continue  # removed in B
        pb = os.path.join(b, sub, f"file{i:05d}")
        if roll < 0.12:
            put_file(pb, content(seed + "/b", size), 0o644, 0, 0, tb)
        elif roll < 0.21:
            put_file(pb, content(seed, size), 0o755, 1000, 1000, tb)
        else:
            put_file(pb, content(seed, size), 0o644, 0, 0, tb)
    for i in range(n // 50):
        put_file(os.path.join(b, "pkg00", f"new{i:04d}"), content(f"new/{i}", 8192), 0o644, 0, 0, tb)
    print(f"versions: {n} files", file=sys.stderr)


def cmd_sample(args):
    """N paths (files, dirs, symlinks) under DIR, relative, fixed seed."""
    top, n = args[0], int(args[1])
    paths = []
    for dp, dns, fns in os.walk(top):
        dns.sort()
        for name in sorted(dns + fns):
            paths.append(os.path.relpath(os.path.join(dp, name), top))
    r = random.Random("sample")
    for p in r.sample(paths, min(n, len(paths))):
        print(p)


def cmd_objects(args):
    """The backing path of every regular file of a composefs dump (as
    'cfsctl inspect dump' prints it), in the dump's order, which is the
    order a walk of the mounted image reads them: one line per file, a
    hardlink as its target's object, so that reading the list opens what
    reading every file of the tree opens. Files with no object (empty, or
    inlined in the image) are left out."""
    with open(args[0], errors="surrogateescape") as f:
        lines = f.read().splitlines()
    of = {}
    for line in lines:
        p = line.split(" ")
        if len(p) < 11:
            continue
        path, mode, payload = p[0], p[2], p[8]
        if mode.startswith("@"):
            obj = of.get(payload)
        elif stat.S_ISREG(int(mode, 8)) and payload != "-":
            obj = of[path] = payload
        else:
            continue
        if obj:
            print(obj)


def cmd_linktree(args):
    """The tree of a composefs dump laid out under OUT as plain directories
    beside the store, for the benchmark's "tree" system: each regular file
    with an object is a hardlink to that object in STORE (the same inode,
    so the same page cache and disk blocks), a hardlink line a hardlink to
    its target's name, an empty file an empty file, a symlink a symlink,
    and a device, fifo or socket a node made with mknod. Directories are
    plain 0755 directories and no mode, owner, time or xattr of the image
    is copied: the objects' inodes are shared with the store, and the
    walk and reads measured on the tree do not depend on them."""
    dump, store, out = args[0], os.fsencode(args[1]), os.fsencode(args[2])
    with open(dump, errors="surrogateescape") as f:
        lines = f.read().splitlines()
    n = {"dirs": 0, "links": 0, "empty": 0, "symlinks": 0, "hardlinks": 0, "nodes": 0}
    for line in lines:
        p = line.split(" ")
        if len(p) < 11:
            continue
        path = unescape(p[0])
        dest = out + (b"" if path == b"/" else path)
        mode, payload = p[2], p[8]
        if mode.startswith("@"):
            os.link(out + unescape(payload), dest)
            n["hardlinks"] += 1
            continue
        m = int(mode, 8)
        if stat.S_ISDIR(m):
            os.makedirs(dest, exist_ok=path == b"/")
            n["dirs"] += 1
        elif stat.S_ISREG(m) and payload != "-":
            os.link(os.path.join(store, unescape(payload)), dest)
            n["links"] += 1
        elif stat.S_ISREG(m):
            if int(p[1]) != 0:
                sys.exit(f"mkinputs.py: {dump}: {p[0]}: a non-empty file with no object")
            open(dest, "xb").close()
            n["empty"] += 1
        elif stat.S_ISLNK(m):
            os.symlink(unescape(payload), dest)
            n["symlinks"] += 1
        else:
            os.mknod(dest, m, int(p[6]))
            n["nodes"] += 1
    print("linktree: " + ", ".join(f"{v} {k}" for k, v in n.items()), file=sys.stderr)


if __name__ == "__main__":
    cmds = {"os": cmd_os, "synth": cmd_synth, "versions": cmd_versions, "sample": cmd_sample,
            "objects": cmd_objects, "linktree": cmd_linktree}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        sys.stderr.write(__doc__ if __doc__ else "usage: mkinputs.py os|synth|versions|sample|objects|linktree ...\n")
        sys.exit(2)
    cmds[sys.argv[1]](sys.argv[2:])
