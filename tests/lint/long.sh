#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# tests/run.sh's long tests, on a tree of two tests of its own: one plain,
# one that says '# test: long (WHY)'. A run of every test passes the plain
# one and prints the long one's SKIP line with WHY; --long (make
# check-long) runs the long one alone; naming it runs it. Exits 1, saying
# which, when a run does otherwise; run by 'make check' (tests/run.sh).
# Usage: tests/lint/long.sh [TOP]
set -u
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cfs-long.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/cli" "$tmp/build"
cp "$top/tests/run.sh" "$tmp/tests/"
printf '#!/bin/sh\nexit 0\n' > "$tmp/tests/cli/0001-plain.sh"
printf '#!/bin/sh\n# test: long (it takes an hour)\nexit 0\n' > "$tmp/tests/cli/0002-marked.sh"
rc=0
# expect ARGS -- LINE...: each LINE is in the output of run.sh ARGS, and
# no other PASS, FAIL or SKIP line is.
expect() {
	local args=() out line n=0
	while [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	out=$("$tmp/tests/run.sh" --build "$tmp/build" ${args[@]+"${args[@]}"} 2>&1)
	for line; do
		grep -qxF "$line" <<< "$out" || { echo "run.sh ${args[*]}: no line '$line'"; rc=1; }
		n=$((n + 1))
	done
	[ "$(grep -cE '^(PASS|FAIL|SKIP) ' <<< "$out")" -eq "$n" ] ||
		{ echo "run.sh ${args[*]}: other tests' lines:"; grep -E '^(PASS|FAIL|SKIP) ' <<< "$out"; rc=1; }
}
expect --only cli -- "PASS cli/0001-plain" "SKIP cli/0002-marked: it takes an hour: make check-long runs it"
expect --long --only cli -- "PASS cli/0002-marked"
expect 0002-marked -- "PASS cli/0002-marked"
exit $rc
