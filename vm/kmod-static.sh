#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The static checks the kernel's own tree runs, on the module: a build with
# W=1 (extra warnings, kernel-doc) and sparse (C=2, every file) against the
# 6.12 headers, any warning of either failing it (vm/kmod-build.sh), and
# checkpatch.pl --strict (Debian's linux-source-6.12, vm/fetch-checkpatch.sh)
# on the module's sources and the format header, any ERROR or WARNING
# failing it (CHECKs are style advice, and counted). Both read the copy
# of the sources that the dkms package ships ('make -C kmod dkms-source':
# kmod/ and the format header), outside the git tree, where checkpatch
# leaves no cache file. Prints one PASS or FAIL line for each.
#
# Usage: vm/kmod-static.sh
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# A make that runs this script beside other jobs passes its jobserver in
# MAKEFLAGS without the descriptors; kbuild would warn of it. Its builds are
# this script's own.
unset MAKEFLAGS MFLAGS MAKELEVEL
out=$top/build/kmod/static
rc=0

command -v sparse >/dev/null || { echo "FAIL kmod-static/sparse: no sparse (Debian package sparse; make deps)"; exit 1; }
krel=$(KREL= KDIR= "$top/vm/kdir.sh" | sed -n 2p) || { echo "FAIL kmod-static/w1-sparse: no 6.12 headers (make deps)"; exit 1; }
if log=$(EXTRA="W=1 C=2" "$top/vm/kmod-build.sh" "$krel" "$out" 2>&1); then
	echo "PASS kmod-static/w1-sparse ($krel, $(grep -c '^ *CHECK ' "$out/build.log") files through sparse)"
else
	echo "FAIL kmod-static/w1-sparse: $(tail -n 1 <<<"$log")"
	grep -E 'warning:|error:' <<<"$log" | head -n 20 | sed 's/^/    /'
	rc=1
fi

if ! cp=$("$top/vm/fetch-checkpatch.sh" 2>"$out.checkpatch-fetch.log"); then
	echo "FAIL kmod-static/checkpatch: cannot fetch checkpatch.pl: $(tail -n 1 "$out.checkpatch-fetch.log")"
	exit 1
fi
cd "$out/src" || exit 1
files=$(ls ./*.c ./*.h | grep -v '\.mod\.c$' | sed 's|^\./||')
# shellcheck disable=SC2086 # a list of file names without blanks
perl "$cp" --strict --no-tree --terse --show-types -f $files > "$out.checkpatch.log" 2>&1
found=$(grep -E ': (ERROR|WARNING):' "$out.checkpatch.log")
checks=$(grep -c ': CHECK:' "$out.checkpatch.log")
if [ -z "$found" ] && grep -q '^total: ' "$out.checkpatch.log"; then
	echo "PASS kmod-static/checkpatch (--strict, $(wc -w <<<"$files") files: no ERROR or WARNING, $checks CHECKs)"
else
	echo "FAIL kmod-static/checkpatch: $(grep -cE ': (ERROR|WARNING):' <<<"$found") findings (log: $out.checkpatch.log)"
	head -n 20 <<<"$found" | sed 's/^/    /'
	rc=1
fi
exit $rc
