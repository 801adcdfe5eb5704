#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl lazy on the host, through FUSE alone (the module's side runs in the
# VM, vm/tests/4216-lazy.sh): a lookup of a missing object fetches exactly that
# object into the store, verified; parallel readers of one object make one
# request; an object no mirror has is ENOENT, wrong content is EIO and never
# enters the store, a stalled mirror is ETIMEDOUT within --timeout; SIGTERM
# unmounts and exits 0 with the counts. Usage errors exit 2.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

expect_exit 0 "$CFSCTL" lazy --help
assert_contains "$T/out" "^Usage: cfsctl lazy \[OPTIONS\] --store DIR --url URL"
mkdir -p "$T/mnt"
expect_exit 2 "$CFSCTL" lazy --url "file://$T" "$T/mnt"
assert_contains "$T/err" "--store DIR is required"
expect_exit 2 "$CFSCTL" lazy --store "$T/s" "$T/mnt"
assert_contains "$T/err" "--url URL is required"
expect_exit 2 "$CFSCTL" lazy --store "$T/s" --url "ftp://example.org/" "$T/mnt"
assert_contains "$T/err" "ftp://example.org/"
expect_exit 2 "$CFSCTL" lazy --store "$T/s" --url "file://$T" --jobs 0 "$T/mnt"
expect_exit 2 "$CFSCTL" lazy --store "$T/s" --url "file://$T" --timeout 0 "$T/mnt"
expect_exit 2 "$CFSCTL" lazy --store "$T/s" --url "file://$T"
assert_contains "$T/err" "no MOUNTPOINT"
expect_exit 1 "$CFSCTL" lazy --store "$T/s" --url "file://$T" "$T/nonexistent"
assert_contains "$T/err" "mount point: '$T/nonexistent'"

[ -c /dev/fuse ] || skip "no /dev/fuse on this host: FUSE cannot be tested here"

make_source "$T/src" 20 2 512
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"
n=$(wc -l <"$T/all")

trap 'lazy_stop; umount "$T/mnt" 2>/dev/null; stop_servers; rm -rf "$T"' EXIT

# start_lazy URL [OPTIONS...]: the daemon on $T/mnt over $T/store
start_lazy() {
	local url=$1
	shift
	lazy_start "$T/mnt" "$CFSCTL" lazy --store "$T/store" --url "$url" --json \
		--stats "$T/stats.json" "$@" "$T/mnt"
}

start_server ok "$T/served" ok
start_lazy "$SERVER_URL" --timeout 5

# The first lookup fetches exactly that object, which reads equal.
first=$(sed -n 1p "$T/all")
cmp "$T/mnt/$first" "$T/served/$first" || fail "'$first' through the mount differs"
echo "$first" >"$T/want"
assert_store "$T/store" "$T/want"
assert_eq 1 "$(wc -l <"$T/ok.log")" "requests after the first read"
assert_eq 1 "$(json_get "$T/stats.json" fetched)" "fetched after the first read"
# A second read is the store's: no request.
cat "$T/mnt/$first" >/dev/null
assert_eq 1 "$(wc -l <"$T/ok.log")" "requests after reading it again"

# Sixteen readers at once of a missing object: one request.
big=$(cd "$T/served" && find . -type f -size +100k | sed 's|^\./||' | LC_ALL=C sort | head -n 1)
[ -n "$big" ] || fail "no large object in the served store"
pids=()
for i in $(seq 16); do
	cmp "$T/mnt/$big" "$T/served/$big" 2>"$T/par.$i" &
	pids+=($!)
done
for p in "${pids[@]}"; do
	wait "$p" || { cat "$T"/par.*; fail "a parallel reader of '$big' failed"; }
done
assert_eq 1 "$(grep -c " /$big\$" "$T/ok.log")" "requests for '$big' by 16 parallel readers"

# A walk of the whole store: every object fetched once, all verified.
while read -r f; do
	cmp "$T/mnt/$f" "$T/served/$f" || fail "'$f' through the mount differs"
done <"$T/all"
assert_store "$T/store" "$T/all"
assert_eq "$n" "$(wc -l <"$T/ok.log")" "requests after the walk"
# Directories list what the store holds.
assert_eq "$first" "$(cd "$T/mnt" && ls "${first%%/*}" | grep -x "${first#*/}" | sed "s|^|${first%%/*}/|")" \
	"listing of '${first%%/*}'"

# An object no mirror has: ENOENT, said on stderr, nothing stored.
absent=00/$(printf '%062d' 0)
stat "$T/mnt/$absent" >/dev/null 2>"$T/stat.err" && fail "stat of an absent object succeeded"
assert_contains "$T/stat.err" "No such file or directory"
assert_contains "$T/lazy.err" "fetching '$T/store/$absent': not found on any mirror"

lazy_stop
assert_eq 0 "$LAZY_RC" "exit status after SIGTERM"
grep -q " $T/mnt fuse" /proc/mounts && fail "$T/mnt still mounted after SIGTERM"
assert_eq "$n" "$(json_get "$T/lazy.out" fetched)" "fetched (--json)"
assert_eq 1 "$(json_get "$T/lazy.out" unavailable)" "unavailable (--json)"
assert_eq "$(cat "$T/served"/*/* | wc -c)" "$(json_get "$T/lazy.out" bytes)" "bytes (--json)"
assert_eq "$n" "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["first_open_ms_each"]))' "$T/lazy.out")" \
	"latencies listed (--json)"
cmp "$T/lazy.out" "$T/stats.json" || fail "--stats FILE differs from --json at exit"

# A mirror serving wrong content for one object: EIO, never stored, the
# other objects still come.
rm -rf "$T/store" "$T/bad"
cp -a "$T/served" "$T/bad"
victim=$(sed -n 2p "$T/all")
other=$(sed -n 3p "$T/all")
printf 'not the content\n' >"$T/bad/$victim"
start_lazy "file://$T/bad"
cat "$T/mnt/$victim" >/dev/null 2>"$T/cat.err" && fail "reading a corrupt object succeeded"
assert_contains "$T/cat.err" "Input/output error"
assert_contains "$T/lazy.err" "fetching '$T/store/$victim': .*fs-verity digest"
cmp "$T/mnt/$other" "$T/served/$other" || fail "'$other' differs beside a corrupt object"
echo "$other" >"$T/want"
assert_store "$T/store" "$T/want"
lazy_stop
assert_eq 1 "$(json_get "$T/lazy.out" failed)" "failed (corrupt object)"
assert_eq 1 "$(json_get "$T/lazy.out" rejected)" "rejected (corrupt object)"

# A mirror that stalls: the lookup gives up after --timeout, nothing stored.
rm -rf "$T/store"
start_server stall "$T/served" stall --stall 30
start_lazy "$SERVER_URL" --timeout 2 --retries 0
t0=$(date +%s)
stat "$T/mnt/$first" >/dev/null 2>"$T/stat.err" && fail "stat over a stalled mirror succeeded"
t1=$(date +%s)
[ $((t1 - t0)) -le 4 ] || fail "a lookup over a stalled mirror took $((t1 - t0)) s with --timeout 2"
assert_contains "$T/stat.err" "timed out|Input/output error"
: >"$T/none"
assert_store "$T/store" "$T/none"
lazy_stop
assert_eq 0 "$LAZY_RC" "exit status after a stalled fetch"
exit 0
