#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The test runner behind 'make check'. Checks that test numbers are unique
# (tests/lint-numbers.sh) and that no files of cmd/ call each other in a
# circle (tests/lint-calls.sh), runs the unit test programs, the cfsctl command
# tests (tests/cli/*.sh) and, when vm/run-tests.sh exists, the tests in QEMU;
# once with the normal build and once with the sanitizer build. Prints one
# PASS/FAIL/SKIP line per test and closes with the counts.
#
# Usage: tests/run.sh [OPTION...] [NAME...]
# With NAMEs, runs just those tests: a cli test by its file name without
# .sh (10-build-basic, or cli/10-build-basic), a unit test as unit/NAME, a
# VM test as vm/NAME (vm/09-erofs; one boot for all of them). --only
# CATEGORY (lint, unit, cli, valgrind, fuzz or vm) runs one category.
#
# With --fuzz FUZZ_BUILD, each fuzz target also runs for FUZZ_SMOKE_SECONDS
# (default 15). With --valgrind 'GLOB...', the CLI tests whose names match
# one of the (space-separated) GLOBs also run with cfsctl under valgrind
# (any memory error or leak fails the test), except those --valgrind-skip
# names.
#
# Test protocol: exit 0 is a pass, 77 a skip (the last output line says why),
# anything else a failure. Each test's output goes to BUILD/test-logs/.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=build san= only= fuzz= vg= vg_skip= names=() picked=() vm_only=
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--san) san=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--fuzz) fuzz=$2; shift 2 ;;
	--valgrind) vg=$2; shift 2 ;;
	--valgrind-skip) vg_skip=$2; shift 2 ;;
	-*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	*) names+=("$1"); shift ;;
	esac
done
build=$(cd "$top" && realpath "$build")
[ -n "$san" ] && san=$(cd "$top" && realpath "$san")
[ -n "$fuzz" ] && fuzz=$(cd "$top" && realpath -m "$fuzz")
# Unit tests that read tests/data find it here.
export CFS_TOP=$top
logs=$build/test-logs
mkdir -p "$logs"
passed=0 failed=0 skipped=0 failures=()

# Each NAME as CATEGORY/NAME, checked to name a test before anything runs.
for n in ${names[@]+"${names[@]}"}; do
	n=${n%.sh}
	n=${n#tests/}
	case $n in
	unit/*) [ -x "$build/tests/$n" ] ;;
	vm/*)
		n=${n#vm/}
		n=vm/${n#tests/}
		num=${n#vm/}
		[ -e "$top/vm/tests/$num.sh" ] && vm_only="$vm_only ${num%%-*}"
		;;
	cli/*) [ -e "$top/tests/$n.sh" ] ;;
	*) n=cli/$n; [ -e "$top/tests/$n.sh" ] ;;
	esac || { echo "run.sh: no test named '$n' (see tests/cli, vm/tests, $build/tests/unit)" >&2; exit 2; }
	picked+=("$n")
done

# picked CATEGORY/NAME: true without NAMEs, or when one of them is it.
picked() {
	local n
	[ ${#picked[@]} -eq 0 ] && return 0
	for n in "${picked[@]}"; do
		[ "$n" = "$1" ] && return 0
	done
	return 1
}

run_one() { # NAME COMMAND...
	local name=$1 log rc
	shift
	log=$logs/$(echo "$name" | tr '/: ' '___').log
	"$@" >"$log" 2>&1 </dev/null
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS $name"; passed=$((passed + 1))
	elif [ $rc -eq 77 ]; then
		echo "SKIP $name: $(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"; skipped=$((skipped + 1))
	else
		echo "FAIL $name (exit $rc; log: $log)"
		tail -n 15 "$log" | sed 's/^/    /'
		failed=$((failed + 1)); failures+=("$name")
	fi
}

want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

if want lint && [ ${#picked[@]} -eq 0 ]; then
	run_one lint/test-numbers "$top/tests/lint-numbers.sh" "$top"
	run_one lint/calls "$top/tests/lint-calls.sh" "$build" cmd lib
	run_one lint/layers "$top/tests/lint-layers.sh" "$top" "$build"
fi

if want unit; then
	for t in "$build"/tests/unit/*; do
		[ -x "$t" ] && [ "${t%.o}" = "$t" ] && picked "unit/$(basename "$t")" &&
			run_one "unit/$(basename "$t")" "$t"
	done
	if [ -n "$san" ]; then
		for t in "$san"/tests/unit/*; do
			[ -x "$t" ] && [ "${t%.o}" = "$t" ] && picked "unit/$(basename "$t")" &&
				run_one "san/unit/$(basename "$t")" "$t"
		done
	fi
fi

if want cli; then
	for t in "$top"/tests/cli/*.sh; do
		[ -e "$t" ] && picked "cli/$(basename "$t" .sh)" || continue
		run_one "cli/$(basename "$t" .sh)" env CFSCTL="$build/cfsctl" bash "$t"
	done
	if [ -n "$san" ]; then
		for t in "$top"/tests/cli/*.sh; do
			[ -e "$t" ] && picked "cli/$(basename "$t" .sh)" || continue
			run_one "san/cli/$(basename "$t" .sh)" env CFSCTL="$san/cfsctl" \
				ASAN_OPTIONS=detect_leaks=1 bash "$t"
		done
	fi
fi

if [ -n "$vg" ] && { want cli || want valgrind; }; then
	if command -v valgrind >/dev/null; then
		set -f
		read -r -a pats <<<"$vg"
		set +f
		for g in "${pats[@]}"; do
			for t in "$top"/tests/cli/$g.sh; do
				[ -e "$t" ] && picked "cli/$(basename "$t" .sh)" || continue
				case " $vg_skip " in *" $(basename "$t" .sh) "*)
					echo "SKIP valgrind/cli/$(basename "$t" .sh): cannot run under valgrind (VALGRIND_SKIP in the Makefile says why)"
					skipped=$((skipped + 1))
					continue ;;
				esac
				run_one "valgrind/cli/$(basename "$t" .sh)" \
					env CFSCTL="$top/tests/valgrind-cfsctl" CFSCTL_REAL="$build/cfsctl" bash "$t"
			done
		done
	else
		echo "SKIP valgrind: valgrind is not installed (Debian package valgrind)"
		skipped=$((skipped + 1))
	fi
fi

if [ -n "$fuzz" ] && want fuzz && [ ${#picked[@]} -eq 0 ]; then
	for f in "$top"/fuzz/fuzz_*.c; do
		t=$(basename "$f" .c)
		t=${t#fuzz_}
		if [ "$t" = kreader ] && [ ! -e "$top/kmod/reader.c" ]; then
			echo "SKIP fuzz/$t: the kernel module (kmod/reader.c) is not in this tree"
			skipped=$((skipped + 1))
		elif [ -x "$fuzz/fuzz_$t" ]; then
			run_one "fuzz/$t" "$top/fuzz/run.sh" --smoke "$fuzz" "$t" "${FUZZ_SMOKE_SECONDS:-15}"
		else
			echo "SKIP fuzz/$t: not built (clang with the libFuzzer runtime, Debian package libclang-rt-14-dev, is needed)"
			skipped=$((skipped + 1))
		fi
	done
fi

if want vm && [ -x "$top/vm/run-tests.sh" ] && { [ ${#picked[@]} -eq 0 ] || [ -n "$vm_only" ]; }; then
	# The VM suite prints its own PASS/FAIL/SKIP lines; count them here.
	vmlog=$logs/vm.log
	[ -n "$vm_only" ] && export CFS_VM_TESTS="$vm_only"
	"$top/vm/run-tests.sh" 2>&1 | tee "$vmlog" | grep -E '^(PASS|FAIL|SKIP) '
	vmrc=${PIPESTATUS[0]}
	p=$(grep -c '^PASS ' "$vmlog") f=$(grep -c '^FAIL ' "$vmlog") s=$(grep -c '^SKIP ' "$vmlog")
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$vmrc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL vm (harness exit $vmrc; log: $vmlog)"
		tail -n 20 "$vmlog" | sed 's/^/    /'
		failed=$((failed + 1)); failures+=(vm)
	fi
fi

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
