#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The test runner behind 'make check'. Checks that test numbers are unique
# (tests/lint/numbers.sh), that no files of cmd/ call each other in a
# circle (tests/lint/calls.sh), that lib/'s folders keep their layers
# (tests/lint/layers.sh) and that long tests wait for --long
# (tests/lint/long.sh), runs the unit test programs, the cfsctl command
# tests (tests/cli/*.sh) and, when vm/run-tests.sh exists, the tests in QEMU;
# once with the normal build and once with the sanitizer build. Prints one
# PASS/FAIL/SKIP line per test and closes with the counts. In the sanitizer
# run, the tests that try thousands of damaged images try every Nth
# (CFS_TEST_SAMPLE: CFS_SAN_SAMPLE, default 4; tests/lib/common.sh sample_variants):
# the normal run tries them all.
#
# Usage: tests/run.sh [OPTION...] [NAME...]
# With NAMEs, runs just those tests: a cli test by its file name without
# .sh (1000-build-basic, or cli/1000-build-basic), a unit test as unit/NAME, a
# VM test as vm/NAME (vm/4209-erofs; one boot for all of them). --only
# CATEGORY (lint, unit, cli, valgrind, fuzz or vm) runs one category.
#
# With --fuzz FUZZ_BUILD, each fuzz target also runs for FUZZ_SMOKE_SECONDS
# (default 15). With --valgrind 'GLOB...', the CLI tests whose names match
# one of the (space-separated) GLOBs also run with cfsctl under valgrind
# (any memory error or leak fails the test), except those --valgrind-skip
# names.
#
# With -j N (default: CFS_TEST_JOBS, else the number of CPUs), N tests run
# at a time, and the VM suite runs beside them from the start; a test whose
# file has a line '# test: exclusive' (it builds in the tree, or takes a
# fixed port) runs with no other test, and those with '# test: early' (the
# longest) start before the rest. One that says '# test: long (WHY)' runs
# only when named, or with --long, which runs those alone (make
# check-long); else its SKIP line says WHY. Lines come as tests finish. Each
# test's seconds go to BUILD/test-logs/times, and the slowest are named at
# the end.
#
# Test protocol: exit 0 is a pass, 77 a skip (the last output line says why),
# anything else a failure. Each test's output goes to BUILD/test-logs/.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=build san= only= fuzz= vg= vg_skip= names=() picked=() vm_only= long=
jobs=${CFS_TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
while [ $# -gt 0 ]; do
	case $1 in
	--build) build=$2; shift 2 ;;
	--san) san=$2; shift 2 ;;
	--only) only=$2; shift 2 ;;
	--long) long=1; shift ;;
	--fuzz) fuzz=$2; shift 2 ;;
	--valgrind) vg=$2; shift 2 ;;
	--valgrind-skip) vg_skip=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	-j*) jobs=${1#-j}; shift ;;
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
# The tests' python3 is Debian's, which make deps installs (they use its
# standard library alone): a version manager's shim in front of it on PATH
# costs each of their hundreds of calls some ten times the interpreter's
# start.
if [ -x /usr/bin/python3 ]; then
	mkdir -p "$logs/.bin" && ln -sfn /usr/bin/python3 "$logs/.bin/python3" &&
		export PATH="$logs/.bin:$PATH"
fi
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

case $jobs in '' | *[!0-9]* | 0) echo "run.sh: -j wants a number of tests at a time, not '$jobs'" >&2; exit 2 ;; esac
# each run its own: two runs over one build do not take each other's results
res=$(mktemp -d "$logs/.results.XXXXXX") || exit 2
: > "$logs/times"
start=$SECONDS

# The queue: a name, whether it runs alone, and its command line.
q_name=() q_alone=() q_cmd=()
queue() { # NAME ALONE CMD...
	q_name+=("$1") q_alone+=("$2")
	shift 2
	q_cmd+=("$(printf '%q ' "$@")")
}

# alone FILE: 1 when the test says it runs with no other test, 2 when it
# says it is long (it starts first, beside others), else 0.
alone() {
	if grep -qs '^# test: exclusive' "$1"; then echo 1
	elif grep -qs '^# test: early' "$1"; then echo 2
	else echo 0; fi
}

report() { # NAME RC SECONDS
	local name=$1 rc=$2 log
	log=$logs/$(echo "$name" | tr '/: ' '___').log
	printf '%s\t%s\n' "$3" "$name" >> "$logs/times"
	if [ "$rc" -eq 0 ]; then
		echo "PASS $name"; passed=$((passed + 1))
	elif [ "$rc" -eq 77 ]; then
		echo "SKIP $name: $(grep -v '^[[:space:]]*$' "$log" | tail -n 1)"; skipped=$((skipped + 1))
	else
		echo "FAIL $name (exit $rc; log: $log)"
		tail -n 15 "$log" | sed 's/^/    /'
		failed=$((failed + 1)); failures+=("$name")
	fi
}

declare -A running=()
start_job() { # INDEX
	local i=$1 log
	log=$logs/$(echo "${q_name[$i]}" | tr '/: ' '___').log
	(
		s=$SECONDS
		eval "${q_cmd[$i]}" >"$log" 2>&1 </dev/null
		echo "$? $((SECONDS - s))" > "$res/$i"
	) &
	running[$!]=$i
}

vmpid= vmdone=
# reap: wait for one child; report it if it is a test.
reap() {
	local pid i rc secs
	wait -n -p pid
	rc=$?
	if [ "$pid" = "$vmpid" ]; then
		vmdone=1 vmrc=$rc vmsecs=$((SECONDS - vms))
		return
	fi
	i=${running[$pid]:-}
	[ -n "$i" ] || return
	unset "running[$pid]"
	read -r rc secs < "$res/$i" || { rc=1 secs=0; }
	report "${q_name[$i]}" "$rc" "$secs"
}

want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

if want lint && [ ${#picked[@]} -eq 0 ]; then
	queue lint/test-numbers 0 "$top/tests/lint/numbers.sh" "$top"
	queue lint/calls 0 "$top/tests/lint/calls.sh" "$build" cmd lib
	queue lint/layers 0 "$top/tests/lint/layers.sh" "$top" "$build"
	queue lint/long 0 "$top/tests/lint/long.sh" "$top"
fi

if want unit; then
	for t in "$build"/tests/unit/*; do
		[ -x "$t" ] && [ "${t%.o}" = "$t" ] && picked "unit/$(basename "$t")" &&
			queue "unit/$(basename "$t")" 0 "$t"
	done
	if [ -n "$san" ]; then
		for t in "$san"/tests/unit/*; do
			[ -x "$t" ] && [ "${t%.o}" = "$t" ] && picked "unit/$(basename "$t")" &&
				queue "san/unit/$(basename "$t")" 0 "$t"
		done
	fi
fi

# too_long FILE NAME: true (leave it out) for a test that says '# test:
# long (WHY)', which is then a SKIP line saying WHY, unless it is named;
# with --long (make check-long), for every other test instead.
too_long() {
	local why
	[ ${#picked[@]} -eq 0 ] || return 1
	why=$(sed -n 's/^# test: long (\(.*\))$/\1/p' "$1")
	if [ -n "$long" ]; then
		[ -z "$why" ]
		return
	fi
	[ -n "$why" ] || return 1
	echo "SKIP $2: $why: make check-long runs it"
	skipped=$((skipped + 1))
}

if want cli; then
	for t in "$top"/tests/cli/*.sh; do
		[ -e "$t" ] && picked "cli/$(basename "$t" .sh)" || continue
		too_long "$t" "cli/$(basename "$t" .sh)" && continue
		queue "cli/$(basename "$t" .sh)" "$(alone "$t")" env CFSCTL="$build/cfsctl" bash "$t"
	done
	if [ -n "$san" ]; then
		for t in "$top"/tests/cli/*.sh; do
			[ -e "$t" ] && picked "cli/$(basename "$t" .sh)" || continue
			too_long "$t" "san/cli/$(basename "$t" .sh)" && continue
			queue "san/cli/$(basename "$t" .sh)" "$(alone "$t")" env CFSCTL="$san/cfsctl" \
				ASAN_OPTIONS=detect_leaks=1 CFS_TEST_SAMPLE="${CFS_SAN_SAMPLE:-4}" bash "$t"
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
				queue "valgrind/cli/$(basename "$t" .sh)" "$(alone "$t")" \
					env CFSCTL="$top/tests/lib/valgrind-cfsctl" CFSCTL_REAL="$build/cfsctl" bash "$t"
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
			queue "fuzz/$t" 0 "$top/fuzz/run.sh" --smoke "$fuzz" "$t" "${FUZZ_SMOKE_SECONDS:-15}"
		else
			echo "SKIP fuzz/$t: not built (clang with the libFuzzer runtime, Debian package libclang-rt-14-dev, is needed)"
			skipped=$((skipped + 1))
		fi
	done
fi

# The VM suite, the longest part, starts first and runs beside the rest;
# it prints its own PASS/FAIL/SKIP lines, shown and counted when it ends.
vmlog=$logs/vm.log
if want vm && [ -x "$top/vm/run-tests.sh" ] && { [ ${#picked[@]} -eq 0 ] || [ -n "$vm_only" ]; }; then
	[ -n "$vm_only" ] && export CFS_VM_TESTS="$vm_only"
	vms=$SECONDS
	"$top/vm/run-tests.sh" > "$vmlog" 2>&1 &
	vmpid=$!
fi

# Tests that run alone go first, while the VM suite has its own core;
# then the rest, -j at a time.
for pass in 1 2 0; do
	for i in "${!q_name[@]}"; do
		[ "${q_alone[$i]}" = "$pass" ] || continue
		if [ "$pass" = 1 ]; then
			while [ ${#running[@]} -gt 0 ]; do reap; done
			start_job "$i"
			while [ ${#running[@]} -gt 0 ]; do reap; done
		else
			while [ ${#running[@]} -ge "$jobs" ]; do reap; done
			start_job "$i"
		fi
	done
done
while [ ${#running[@]} -gt 0 ]; do reap; done

if [ -n "$vmpid" ]; then
	if [ -z "$vmdone" ]; then
		wait "$vmpid"
		vmrc=$? vmsecs=$((SECONDS - vms))
	fi
	printf '%s\t%s\n' "$vmsecs" vm >> "$logs/times"
	grep -E '^(PASS|FAIL|SKIP) ' "$vmlog"
	p=$(grep -c '^PASS ' "$vmlog") f=$(grep -c '^FAIL ' "$vmlog") s=$(grep -c '^SKIP ' "$vmlog")
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	[ "$f" -gt 0 ] && failures+=("vm: $(grep '^FAIL ' "$vmlog" | head -n 3 | cut -d' ' -f2 | tr '\n' ' ')")
	if [ "$vmrc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL vm (harness exit $vmrc; log: $vmlog)"
		tail -n 20 "$vmlog" | sed 's/^/    /'
		failed=$((failed + 1)); failures+=(vm)
	fi
fi
rm -rf "$res"

if [ $((passed + failed + skipped)) -gt 20 ]; then
	echo "slowest: $(sort -rn "$logs/times" | head -n 5 | awk -F'\t' '{printf "%s%s %s s", (NR > 1 ? ", " : ""), $2, $1}'); all in $((SECONDS - start)) s at -j $jobs"
fi
[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed -eq 0 ] && [ $passed -gt 0 ]
