#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# No two source files call each other in a circle: the layers point one
# way (cfsctl.c to the verbs, the verbs to the shared cmd/ modules, cmd/ to
# lib/). From the object files under each DIR of the build, nm tells which
# file defines each global symbol and which files use it; a file uses
# another when it uses a symbol the other defines. Every set of two or more
# files that reach each other through such uses is printed, with the uses
# that close the circle, and the script exits 1. So is a use of a verb's
# file (one that defines a cmd_* symbol) by any file but the dispatcher
# (the one that defines main): verbs share through modules that are no verb.
# Run by 'make check' (tests/run.sh) after the build, over cmd/ and lib/.
# Usage: tests/lint/calls.sh [BUILD [DIR...]]  (default: build cmd lib)
set -u
build=${1:-build}
[ $# -gt 1 ] && shift && dirs=("$@") || dirs=(cmd lib)
cd "$build" 2>/dev/null || { echo "lint-calls: no build directory '$build'" >&2; exit 2; }
objs=$(find "${dirs[@]}" -name '*.o' 2>/dev/null | sort)
[ -n "$objs" ] || { echo "lint-calls: no object files under '$build'/{${dirs[*]}}: build first" >&2; exit 2; }

# One line per symbol: "D FILE SYMBOL" where FILE defines it, "U FILE SYMBOL"
# where FILE uses it; FILE is the source, e.g. cmd/cmd_build.c.
for o in $objs; do
	src=${o%.o}.c
	nm -g --defined-only "$o" | awk -v f="$src" 'NF >= 3 { print "D", f, $3 }'
	nm -u "$o" | awk -v f="$src" 'NF >= 2 { print "U", f, $2 }'
done | awk '
$1 == "D" {
	def[$3] = $2
	if ($3 ~ /^cmd_/ && $2 ~ /^cmd\//)
		verb[$2] = 1
	if ($3 == "main")
		dispatcher = $2
	next
}
{ use[++n] = $2; usym[n] = $3 }
END {
	# the files, and the uses between two of them (with a symbol for the message)
	for (i = 1; i <= n; i++) {
		d = def[usym[i]]
		if (d == "" || d == use[i])
			continue
		if (!((use[i], d) in edge)) {
			edge[use[i], d] = usym[i]
			reach[use[i], d] = 1
		}
		file[use[i]] = 1
		file[d] = 1
	}
	# which file reaches which (Warshall: a few dozen files)
	for (k in file)
		for (i in file)
			if ((i, k) in reach)
				for (j in file)
					if ((k, j) in reach)
						reach[i, j] = 1
	rc = 0
	for (i = 1; i <= n; i++) {
		d = def[usym[i]]
		if (d == "" || d == use[i] || !(d in verb) || use[i] == dispatcher ||
		    ((use[i], d) in said))
			continue
		print "lint-calls: " use[i] " uses " usym[i] "() of the verb " d \
			": only the dispatcher calls a verb"
		said[use[i], d] = 1
		rc = 1
	}
	m = 0
	for (i in file)
		names[++m] = i
	# sorted, for a stable report
	for (a = 2; a <= m; a++)
		for (b = a; b > 1 && names[b - 1] > names[b]; b--) {
			t = names[b]; names[b] = names[b - 1]; names[b - 1] = t
		}
	for (a = 1; a <= m; a++) {
		i = names[a]
		if (done[i] || !((i, i) in reach))
			continue
		# the circle of i: every file that i reaches and that reaches i
		list = ""
		for (b = 1; b <= m; b++) {
			j = names[b]
			if (j == i || ((i, j) in reach && (j, i) in reach)) {
				done[j] = 1
				list = list " " j
				in_circle[j] = i
			}
		}
		print "lint-calls: these files call each other in a circle:" list
		for (b = 1; b <= m; b++) {
			j = names[b]
			if (in_circle[j] != i)
				continue
			for (c = 1; c <= m; c++) {
				k = names[c]
				if (in_circle[k] == i && (j, k) in edge)
					print "  " j " uses " edge[j, k] "() of " k
			}
		}
		rc = 1
	}
	exit rc
}'
