#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Test numbers are unique, as git's test-lint-duplicates keeps them: no two
# tests in tests/cli, nor two in vm/tests, start with the same number, so
# that a number names one test (in tests/run.sh NAME, in logs and in docs).
# Prints each clash and exits 1; run by 'make check' (tests/run.sh).
# Usage: tests/lint-numbers.sh [TOP]
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
rc=0
for dir in tests/cli vm/tests; do
	[ -d "$top/$dir" ] || continue
	for n in $(cd "$top/$dir" && ls -- [0-9]*-*.sh 2>/dev/null | sed 's/-.*//' | sort | uniq -d); do
		echo "$dir: test number $n names more than one test:" $(cd "$top/$dir" && ls -- "$n"-*.sh)
		rc=1
	done
done
exit $rc
