#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# lib/'s folders stand in layers, each using only those below it
# (docs/design.md): base, then format, image, store, source, then remote
# and ostree. A file of one folder may include a header of, or call a
# function defined in, a folder listed before its own, or its own; never
# one listed after it, and never a folder that is not listed. Includes are
# read from the sources ("folder/name.h"), calls from the build's object
# files by nm, as tests/lint/calls.sh reads them. Prints each use that
# runs the wrong way, and exits 1 if there is one.
# Run by 'make check' (tests/run.sh) after the build.
# Usage: tests/lint/layers.sh [TOP [BUILD]]
set -u
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${2:-$top/build}
layers="base format image store source remote ostree"
cd "$top/lib" || { echo "lint-layers: no lib/ in '$top'" >&2; exit 2; }
[ -d "$build/lib" ] || { echo "lint-layers: no object files under '$build/lib': build first" >&2; exit 2; }

rank() { local i=0 l; for l in $layers; do [ "$l" = "$1" ] && { echo $i; return; }; i=$((i + 1)); done; echo -1; }
rc=0
for d in */; do
	d=${d%/}
	[ "$(rank "$d")" -ge 0 ] || { echo "lib/$d/: a folder that is in no layer (tests/lint/layers.sh lists them)"; rc=1; }
done

# "FROM-FILE TO-FOLDER HOW WHAT" for every include of a header of a folder...
{
	grep -rHo '^#include "[a-z]*/[^"]*"' --include='*.[ch]' . |
		sed 's|^\./||; s|:#include "\([a-z]*\)/\([^"]*\)"| \1 include \1/\2|'
	# ...and for every call of a function that another folder defines.
	cd "$build/lib" && for o in $(find . -name '*.o' | sort); do
		f=${o#./}; f=${f%.o}.c
		nm -g --defined-only "$o" | awk -v f="$f" 'NF >= 3 { print "D", f, $3 }'
		nm -u "$o" | awk -v f="$f" 'NF >= 2 { print "U", f, $2 }'
	done | awk '$1 == "D" { def[$3] = $2; next } { u[++n] = $2 " " $3 }
		END { for (i = 1; i <= n; i++) { split(u[i], a, " "); d = def[a[2]]
			if (d != "") { split(d, p, "/"); print a[1], p[1], "call", a[2] "() of lib/" d } } }'
} | sort -u | while read -r from to how what; do
	f=${from%%/*}
	# cfs/: the public headers (include/cfs/), which every layer may read
	[ "$f" = "$to" ] || [ "$to" = cfs ] && continue
	rf=$(rank "$f") rt=$(rank "$to")
	if [ "$rt" -lt 0 ] || [ "$rt" -gt "$rf" ]; then
		echo "lib/$from ($f) uses lib/$to/, which stands above it: $how $what"
		echo x
	fi
done | { bad=$(grep -vx x); [ -z "$bad" ] || { echo "$bad"; exit 1; }; }
[ $? -eq 0 ] || rc=1
exit $rc
