#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The demo behind 'make demo': build a composefs image of examples/tree with
# a digest store, show what went where, and look inside the image.
# Usage: tests/demo.sh PATH-TO-CFSCTL
set -eu
cfsctl=$(realpath "${1:?usage: tests/demo.sh PATH-TO-CFSCTL}")
top=$(cd "$(dirname "$0")/.." && pwd)
src=$top/examples/tree
demo=$(dirname "$cfsctl")/demo
store=$demo/objects
image=$demo/example.cfs

say() { printf '\n== %s\n' "$*"; }
run() { printf '$ %s\n' "$*"; "$@"; }

rm -rf "$demo"
mkdir -p "$demo"

say "The source: an ordinary directory tree"
(cd "$src" && find . | sort | sed 's/^/  /')

say "Build an image of it; file contents go to a store named by fs-verity digest"
digest=$(run "$cfsctl" build --digest-store="$store" --print-digest "$src" "$image")
echo "$digest"
echo "The image holds all the metadata ($(stat -c %s "$image") bytes); its fs-verity"
echo "digest above is what a mount can require, pinning the whole tree."

say "The digest store: one object per distinct content"
(cd "$store" && find . -type f | sort | sed 's|^\./|  |')
echo "README and README.copy have the same content, so they share one object."
echo "Each object's name is its fs-verity digest, as the fsverity tool confirms:"
first=$(cd "$store" && find . -type f | sort | head -n 1)
if command -v fsverity >/dev/null; then
	(cd "$store" && run fsverity digest "${first#./}")
fi

say "Building again changes nothing: the image is reproducible"
run "$cfsctl" build --digest-store="$store" "$src" "$demo/again.cfs"
cmp "$image" "$demo/again.cfs" && echo "identical: $(basename "$image") and again.cfs"

if "$cfsctl" inspect --help >/dev/null 2>&1; then
	say "What the image holds"
	run "$cfsctl" inspect "$image"
	say "The image as a dumpfile (composefs-dump(5))"
	run "$cfsctl" inspect dump "$image"
fi

say "Done. Everything is in $demo"

# The kernel side: boot Debian's 6.12 kernel in QEMU with the composefs
# module, mount the image with digest= and verity_check=2, read it, tamper
# with an object and watch the read fail (vm/demo.sh; needs qemu).
if [ -x "$top/vm/demo.sh" ] && command -v qemu-system-x86_64 >/dev/null; then
	say "Mount it with the kernel module (in a VM), then tamper with an object"
	CFSCTL=$cfsctl "$top/vm/demo.sh" || echo "(the VM demo failed; see build/vm/)"
fi
