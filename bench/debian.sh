# SPDX-License-Identifier: GPL-2.0 OR MIT
# The Debian image of the host benchmarks (bench/pull.sh, bench/push.sh):
# its root filesystem, made once, and its version B. Sourced, not run; the
# caller sets $top and defines say and die.

# debian_rootfs DIR: DIR/rootfs.tar, the bookworm minbase root filesystem
# (debootstrap from the machine's apt mirror, vm/debian-mirror.sh), made
# once and kept
debian_rootfs() {
	local out=$1 mirror
	[ -f "$out/rootfs.tar" ] && return 0
	say "debootstrap --variant=minbase bookworm (once; kept in $out/rootfs.tar)"
	rm -rf "$out/rootfs.tmp"
	mirror=$("$top/vm/debian-mirror.sh") || die "no Debian mirror for debootstrap"
	debootstrap --variant=minbase bookworm "$out/rootfs.tmp" "$mirror" \
		> "$out/debootstrap.log" 2>&1 || { tail -n 20 "$out/debootstrap.log" >&2; die "debootstrap failed"; }
	# What Debian's container image leaves out: the downloaded packages,
	# apt's caches and lists; and the chroot's device nodes.
	rm -rf "$out/rootfs.tmp"/var/cache/apt/archives/*.deb "$out/rootfs.tmp"/var/cache/apt/*.bin \
		"$out/rootfs.tmp"/var/lib/apt/lists/* "$out/rootfs.tmp"/dev/*
	tar --numeric-owner --xattrs --xattrs-include='*' -C "$out/rootfs.tmp" -cf "$out/rootfs.tar.tmp" .
	mv "$out/rootfs.tar.tmp" "$out/rootfs.tar"
	rm -rf "$out/rootfs.tmp"
}

# debian_version_b DIR: DIR/rootfsB.tar, DIR/rootfs.tar with every 20th
# regular file (of those not empty) changed, a line appended, made when
# missing or older than rootfs.tar; returns 0 when it made it, 1 when it
# was there
debian_version_b() {
	local out=$1
	[ -f "$out/rootfsB.tar" ] && [ ! "$out/rootfsB.tar" -ot "$out/rootfs.tar" ] && return 1
	say "making version B: every 20th regular file changed"
	python3 - "$out/rootfs.tar" "$out/rootfsB.tar.tmp" <<'EOP' || die "making version B"
import io, sys, tarfile
n = 0
with tarfile.open(sys.argv[1]) as src, tarfile.open(sys.argv[2], "w", format=tarfile.PAX_FORMAT) as dst:
    for m in src:
        data = src.extractfile(m).read() if m.isreg() else None
        if m.isreg() and m.size > 0:
            n += 1
            if n % 20 == 0:
                data += b"\n# version B\n"
                m.size = len(data)
        dst.addfile(m, io.BytesIO(data) if data is not None else None)
EOP
	mv "$out/rootfsB.tar.tmp" "$out/rootfsB.tar"
}
