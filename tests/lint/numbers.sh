#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Test numbers, as git's t/ keeps them: four digits, the first ones naming
# the topic (docs/design.md has the blocks), and unique across tests/cli
# and vm/tests together, so that a number names one test (in tests/run.sh
# NAME, in logs and in docs). Prints each clash and each file not named
# NNNN-name.sh, and exits 1; run by 'make check' (tests/run.sh).
# Usage: tests/lint/numbers.sh [TOP]
set -u
top=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
rc=0
names=()
for dir in tests/cli vm/tests; do
	[ -d "$top/$dir" ] || continue
	for f in "$top/$dir"/*.sh; do
		b=$(basename "$f")
		case $b in
		lib.sh | fuzz-seeds.sh) continue ;; # vm/tests' helpers
		[0-9][0-9][0-9][0-9]-[a-z]*.sh) names+=("$dir/$b") ;;
		*) echo "$dir/$b: not named NNNN-topic-name.sh"; rc=1 ;;
		esac
	done
done
for n in $(printf '%s\n' "${names[@]}" | sed 's|.*/||; s/-.*//' | sort | uniq -d); do
	echo "test number $n names more than one test:" $(printf '%s\n' "${names[@]}" | grep "/$n-")
	rc=1
done
exit $rc
