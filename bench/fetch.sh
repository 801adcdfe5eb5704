#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Benchmark of cfsctl fetch: a digest store of many small objects and a few
# large ones, served by nginx on 127.0.0.1, fetched into an empty store.
# Beside it, the baselines over the same URLs: a plain sequential loop of
# one curl process per object, and one curl process fetching them all in
# sequence over one reused connection. cfsctl fetch does more work than
# either (it hashes, fsyncs and links every object); the table shows what
# that costs and what its parallel transfers win back.
#
# Usage: bench/fetch.sh [--small N] [--large N] [--large-mib M] [--jobs J]
# Prints a table; writes the numbers as JSON to bench/results/.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
small=10000 large=4 large_mib=32 jobs=16
while [ $# -gt 0 ]; do
	case $1 in
	--small) small=$2; shift 2 ;;
	--large) large=$2; shift 2 ;;
	--large-mib) large_mib=$2; shift 2 ;;
	--jobs) jobs=$2; shift 2 ;;
	-h|--help) sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench/fetch.sh: unknown option '$1'" >&2; exit 2 ;;
	esac
done
CFSCTL=${CFSCTL:-$top/build/cfsctl}
[ -x "$CFSCTL" ] || { echo "bench/fetch.sh: build cfsctl first ('make')" >&2; exit 1; }
command -v curl >/dev/null || { echo "bench/fetch.sh: curl is not installed (make deps)" >&2; exit 1; }

T=$(mktemp -d "${TMPDIR:-/var/tmp}/cfs-bench-fetch.XXXXXX")
trap 'stop_servers; rm -rf "$T"' EXIT
fail() { echo "bench/fetch.sh: $*" >&2; exit 1; }
skip() { echo "bench/fetch.sh: $*" >&2; exit 1; }
TESTS_DIR=$top/tests TOP=$top
. "$top/tests/lib/fetch.sh"
trap 'stop_servers; rm -rf "$T"' EXIT

echo "preparing $small small and $large x $large_mib MiB objects..." >&2
make_source "$T/src" "$small" "$large" $((large_mib * 1024))
make_image "$T/src" "$T/bench.img" "$T/served"
(cd "$T/served" && find . -type f | sed 's|^\./||' | LC_ALL=C sort) >"$T/objects"
n=$(wc -l <"$T/objects")
bytes=$(cd "$T/served" && find . -type f -printf '%s\n' | awk '{s += $1} END {print s}')
start_nginx "$T/served"
sed "s|^|$NGINX_URL/|" "$T/objects" >"$T/urls"

now() { date +%s.%N; }
results=()
# record NAME SECONDS
record() {
	results+=("$1 $2")
}

# cfsctl fetch; the page cache is warm on the server side for every run alike
rm -rf "$T/store"
t0=$(now)
"$CFSCTL" fetch --json --jobs "$jobs" --basedir "$T/store" --url "$NGINX_URL" "$T/bench.img" \
	>"$T/fetch.json" || fail "cfsctl fetch failed"
t1=$(now)
[ "$(json_get "$T/fetch.json" fetched)" -eq "$n" ] || fail "cfsctl fetch did not fetch all $n objects"
record "cfsctl-fetch-j$jobs" "$(echo "$t1 - $t0" | bc -l)"

rm -rf "$T/store"
t0=$(now)
"$CFSCTL" fetch --json --jobs 1 --basedir "$T/store" --url "$NGINX_URL" "$T/bench.img" \
	>"$T/fetch1.json" || fail "cfsctl fetch --jobs 1 failed"
t1=$(now)
record "cfsctl-fetch-j1" "$(echo "$t1 - $t0" | bc -l)"

# one curl process for all URLs, sequential, one connection
rm -rf "$T/curl1" && mkdir -p "$T/curl1"
awk -v d="$T/curl1" '{ f = $0; sub(/.*\//, "", f); print "url = \"" $0 "\"\noutput = \"" d "/" f "\"" }' \
	"$T/urls" >"$T/curl.config"
t0=$(now)
curl -s -f --config "$T/curl.config" || fail "curl --config failed"
t1=$(now)
record "curl-one-process" "$(echo "$t1 - $t0" | bc -l)"

# the plain loop: one curl per object
rm -rf "$T/curlN" && mkdir -p "$T/curlN"
t0=$(now)
while read -r u; do
	curl -s -f -o "$T/curlN/${u##*/}" "$u" || fail "curl $u failed"
done <"$T/urls"
t1=$(now)
record "curl-loop" "$(echo "$t1 - $t0" | bc -l)"

mkdir -p "$top/bench/results"
out=$top/bench/results/fetch-$(date -u +%Y%m%dT%H%M%SZ).json
printf "%-20s %8s %12s %10s %12s %10s\n" method objects bytes seconds objects/s MiB/s
{
	printf '{"benchmark": "fetch", "objects": %d, "bytes": %d, "small": %d, "large": %d, "large_mib": %d, "jobs": %d, "cpus": %d, "results": [' \
		"$n" "$bytes" "$small" "$large" "$large_mib" "$jobs" "$(nproc)"
	sep=
	for r in "${results[@]}"; do
		set -- $r
		rate=$(echo "$n / $2" | bc -l)
		mibs=$(echo "$bytes / $2 / 1048576" | bc -l)
		printf "%-20s %8d %12d %10.2f %12.0f %10.1f\n" "$1" "$n" "$bytes" "$2" "$rate" "$mibs" >&2
		printf '%s{"method": "%s", "seconds": %.3f, "objects_per_s": %.1f, "mib_per_s": %.2f}' \
			"$sep" "$1" "$2" "$rate" "$mibs"
		sep=", "
	done
	printf ']}\n'
} >"$out" 2>"$T/table"
cat "$T/table"
echo "results: $out"
