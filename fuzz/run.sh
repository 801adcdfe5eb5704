#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Runs one fuzz target for a while: libFuzzer with the seed corpus, the
# committed regression inputs and the corpus grown by earlier runs. New
# interesting inputs go to FUZZ_BUILD/corpus/TARGET, a crashing input to
# FUZZ_BUILD/artifacts/TARGET/. With --smoke the grown corpus is left alone
# (a scratch copy is used), for the short run of make check.
# Usage: fuzz/run.sh [--smoke] FUZZ_BUILD TARGET SECONDS
set -eu
smoke=
[ "${1:-}" = --smoke ] && { smoke=1; shift; }
fb=${1:?usage: run.sh [--smoke] FUZZ_BUILD TARGET SECONDS}
target=${2:?usage: run.sh [--smoke] FUZZ_BUILD TARGET SECONDS}
secs=${3:?usage: run.sh [--smoke] FUZZ_BUILD TARGET SECONDS}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$fb/fuzz_$target
[ -x "$bin" ] || { echo "run.sh: $bin is not built (make fuzz-build)" >&2; exit 2; }

# Image inputs larger than this add time, not coverage.
case $target in
image | kreader | fuse) max_len=65536 seeds=$fb/seeds/image regress=$top/tests/data/fuzz-regressions/image ;;
toc) max_len=16384 seeds=$fb/seeds/toc regress=$top/tests/data/fuzz-regressions/toc ;;
dump) max_len=16384 seeds=$fb/seeds/dump regress=$top/tests/data/fuzz-regressions/dump ;;
tar) max_len=65536 seeds=$fb/seeds/tar regress=$top/tests/data/fuzz-regressions/tar ;;
oci) max_len=16384 seeds=$fb/seeds/oci regress=$top/tests/data/fuzz-regressions/oci ;;
registry) max_len=4096 seeds=$fb/seeds/registry regress=$top/tests/data/fuzz-regressions/registry ;;
policy) max_len=8192 seeds=$fb/seeds/policy regress=$top/tests/data/fuzz-regressions/policy ;;
sigpayload) max_len=4096 seeds=$fb/seeds/sigpayload regress=$top/tests/data/fuzz-regressions/sigpayload ;;
*) echo "run.sh: unknown target '$target'" >&2; exit 2 ;;
esac

artifacts=$fb/artifacts/$target
mkdir -p "$artifacts"
if [ -n "$smoke" ]; then
	corpus=$(mktemp -d "${TMPDIR:-/tmp}/cfs-fuzz.XXXXXX")
	trap 'rm -rf "$corpus"' EXIT
else
	corpus=$fb/corpus/$target
	mkdir -p "$corpus"
fi
dirs=("$corpus")
[ -d "$seeds" ] && dirs+=("$seeds")
[ -d "$regress" ] && dirs+=("$regress")

# Leaks are bugs too; a hang of 10 s on one input is a bug.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
"$bin" -max_total_time="$secs" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 -artifact_prefix="$artifacts/" "${dirs[@]}"
