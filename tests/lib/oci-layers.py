# SPDX-License-Identifier: GPL-2.0 OR MIT
# oci-layers.py DIR: the layer tars of the test container images (the VM
# test disk's, vm/mkdisk.sh and vm/tests/4221-oci.sh, and tests/cli/2000-pull.sh),
# DIR/1.tar to DIR/3.tar: a whiteout, an opaque directory, a hardlink into a
# lower layer, a symlink, an xattr, a device, owners, an empty file, a file
# replaced by a directory and back; and DIR/arm.tar, the layer only the
# arm64 image of a two-platform index has.
import io, sys, tarfile


def entry(t, name, kind="f", data=b"", link="", dev=(0, 0), mode=0o644, xattrs=None,
          owner=(0, 0)):
    i = tarfile.TarInfo(name)
    i.type = {"f": tarfile.REGTYPE, "d": tarfile.DIRTYPE, "h": tarfile.LNKTYPE,
              "c": tarfile.CHRTYPE, "l": tarfile.SYMTYPE}[kind]
    i.mode, i.mtime, i.linkname, i.size = mode, 1600000000, link, len(data)
    i.uid, i.gid = owner
    i.devmajor, i.devminor = dev
    i.pax_headers = {"SCHILY.xattr." + k: v for k, v in (xattrs or {}).items()}
    t.addfile(i, io.BytesIO(data))


d = sys.argv[1]
with tarfile.open(f"{d}/1.tar", "w", format=tarfile.PAX_FORMAT) as t:
    entry(t, "bin", "d", mode=0o755)
    entry(t, "bin/sh", data=b"#!sh\n" * 3000, mode=0o755, xattrs={"user.k": "v"})
    entry(t, "lib", "d", mode=0o755)
    entry(t, "lib/old", data=b"old")
    entry(t, "flip", data=b"first a file")
    entry(t, "dev", "d", mode=0o755)
    entry(t, "dev/zero", "c", dev=(1, 5), mode=0o666)
    entry(t, "rm-me", data=b"rm")
    entry(t, "home", "d", mode=0o750, owner=(1000, 1000))
    entry(t, "home/f", data=b"owned" * 100, mode=0o600, owner=(1000, 100))
with tarfile.open(f"{d}/2.tar", "w", format=tarfile.PAX_FORMAT) as t:
    entry(t, "lib/.wh..wh..opq")
    entry(t, "lib/new", data=b"new")
    entry(t, ".wh.rm-me")
    entry(t, "flip", "d", mode=0o755)
    entry(t, "flip/in", data=b"in")
    entry(t, "sh-link", "h", link="bin/sh")
    entry(t, "sym", "l", link="bin/sh", mode=0o644)  # Linux shows a symlink as 0777
with tarfile.open(f"{d}/3.tar", "w", format=tarfile.PAX_FORMAT) as t:
    entry(t, "flip", data=b"a file again")
    entry(t, "empty")
with tarfile.open(f"{d}/arm.tar", "w", format=tarfile.PAX_FORMAT) as t:
    entry(t, "arm", data=b"arm64")
