# SPDX-License-Identifier: GPL-2.0 OR MIT
# chunked-tree.py DIR: two versions of one layer for the zstd:chunked tests,
# DIR/A.tar and DIR/B.tar (pax), written with fixed seeds and times: B is A
# rebuilt with 12 files changed, 12 added and 8 removed. Regular files of
# many sizes (empty, inline-small, several MiB of little entropy), two
# files with the same content, directories, symlinks, a hardlink, a fifo, a
# character device, xattrs, uids and gids, mtimes with nanoseconds.
import io, random, sys, tarfile

out = sys.argv[1]
rng = random.Random(33)


def content(n, seed):
    r = random.Random(seed)
    words = [bytes(r.choice(b"abcdefghijklmnopqrstuvwxyz") for _ in range(r.randint(2, 9)))
             for _ in range(200)]
    buf = bytearray()
    while len(buf) < n:
        buf += r.choice(words) + (b"\n" if r.random() < 0.1 else b" ")
        if r.random() < 0.02:
            buf += r.randbytes(64)
    return bytes(buf[:n])


files = {}
for i in range(160):
    size = rng.choice([0, 5, 60, 65, 300, 4096, 20000, 70000, 200000])
    files[f"usr/share/f{i:03d}"] = (size, i)
files["usr/lib/big"] = (3 << 20, 1000)
files["usr/lib/same1"] = (9000, 2000)
files["usr/lib/same2"] = (9000, 2000)

changed = {f"usr/share/f{i:03d}" for i in range(0, 60, 5)}
removed = {f"usr/share/f{i:03d}" for i in range(3, 43, 5)}
B = {k: v for k, v in files.items() if k not in removed}
for k in changed:
    B[k] = (B[k][0] or 100, B[k][1] + 50000)
for i in range(12):
    B[f"usr/new/n{i:02d}"] = (rng.choice([10, 3000, 50000]), 90000 + i)


def write(path, tree):
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tf:
        def add(name, type_, **kw):
            ti = tarfile.TarInfo(name)
            ti.type = type_
            ti.mode = kw.pop("mode", 0o755 if type_ == tarfile.DIRTYPE else 0o644)
            ti.mtime = kw.pop("mtime", 1700000000)
            data = kw.pop("data", None)
            pax = kw.pop("pax", {})
            for k, v in kw.items():
                setattr(ti, k, v)
            ti.pax_headers = dict(pax)
            if data is not None:
                ti.size = len(data)
                tf.addfile(ti, io.BytesIO(data))
            else:
                tf.addfile(ti)
        add("./", tarfile.DIRTYPE)
        dirs = sorted({n.rsplit("/", 1)[0] for n in tree} | {"usr", "etc", "dev"})
        for d in dirs:
            add(f"./{d}/", tarfile.DIRTYPE, uid=0, gid=0,
                pax={"SCHILY.xattr.user.dir": "d"} if d == "etc" else {})
        add("./etc/conf", tarfile.REGTYPE, data=b"key=value\n", mode=0o600, uid=1000,
            gid=100, pax={"SCHILY.xattr.user.k": "v", "mtime": "1700000000.123456789"})
        add("./etc/stamp", tarfile.REGTYPE, data=b"nanoseconds, no xattrs\n",
            pax={"mtime": "1700000001.000000042"})
        add("./etc/link", tarfile.SYMTYPE, linkname="../usr/lib/big", mode=0o777)
        add("./dev/null", tarfile.CHRTYPE, devmajor=1, devminor=3, mode=0o666)
        add("./dev/pipe", tarfile.FIFOTYPE, mode=0o600)
        for name in sorted(tree):
            size, seed = tree[name]
            add("./" + name, tarfile.REGTYPE, data=content(size, seed),
                mode=0o755 if seed % 7 == 0 else 0o644, uid=seed % 3, gid=seed % 5)
        add("./usr/lib/hard", tarfile.LNKTYPE, linkname="./usr/lib/big")


write(f"{out}/A.tar", files)
write(f"{out}/B.tar", B)
