#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
"""treewalk.py [--no-owners] DIR: one line per path below DIR, as the user running it
sees it, for comparing a mount with the tree its image was built from.

Each line holds the path (escaped), the type and mode, owner, group,
nlink, mtime in nanoseconds, the size (not of directories, whose size
each filesystem chooses), a device's major:minor, a symlink's target, the
first path of the same inode (hardlinks: one inode number for all of
them), every xattr the user can list with its value in hex, and a
regular file's sha256, or the error a read or a listing met instead.
--no-owners leaves out owner and group, which a user namespace maps.
"""
import hashlib
import os
import stat
import sys


def esc(b):
    return b.decode("utf-8", "backslashreplace").encode("unicode_escape").decode()


def err(e):
    return "E" + (os.strerror(e.errno) if e.errno else str(e))


def main():
    owners = sys.argv[1] != "--no-owners"
    top = os.fsencode(sys.argv[-1])
    inodes = {}
    out = []

    def visit(rel):
        path = os.path.join(top, rel) if rel else top
        st = os.lstat(path)
        t = stat.S_IFMT(st.st_mode)
        f = [esc(rel or b"."), "%o" % st.st_mode]
        if owners:
            f.append("%d:%d" % (st.st_uid, st.st_gid))
        f += ["n%d" % st.st_nlink, "t%d" % st.st_mtime_ns]
        if t != stat.S_IFDIR:
            f.append("s%d" % st.st_size)
            first = inodes.setdefault(st.st_ino, rel)
            f.append("i=" + esc(first))
        if t in (stat.S_IFCHR, stat.S_IFBLK):
            f.append("d%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev)))
        if t == stat.S_IFLNK:
            f.append("->" + esc(os.readlink(path)))
        try:
            names = sorted(os.listxattr(path, follow_symlinks=False))
        except OSError as e:
            names = []
            f.append("x" + err(e))
        for n in names:
            try:
                v = os.getxattr(path, n, follow_symlinks=False).hex()
            except OSError as e:
                v = err(e)
            f.append("x:%s=%s" % (n, v))
        if t == stat.S_IFREG:
            try:
                with open(path, "rb") as fh:
                    h = hashlib.sha256()
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                    f.append("c" + h.hexdigest())
            except OSError as e:
                f.append("c" + err(e))
        out.append(" ".join(f))
        if t == stat.S_IFDIR:
            try:
                entries = sorted(os.listdir(path))
            except OSError as e:
                out.append(esc(rel) + " list " + err(e))
                return
            for name in entries:
                visit(os.path.join(rel, name) if rel else name)

    visit(b"")
    sys.stdout.write("\n".join(out) + "\n")


main()
