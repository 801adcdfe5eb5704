#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A hostile mirror sends an endless body for every object cfsctl lazy asks
# for. The lookup fails once --max-object-size is passed, or before the
# store's filesystem has less than --reserve free; by default both hold
# (4G, and 5% of the filesystem). Each refusal is one line on stderr, no
# temporary is left, and the filesystem keeps its reserve.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
[ "$(id -u)" = 0 ] || skip "needs root (to mount a small tmpfs for the store)"
trap 'touch "$T/done"; lazy_stop; umount "$T/mnt" 2>/dev/null; umount "$T/fs" 2>/dev/null; stop_servers; rm -rf "$T"' EXIT

make_source "$T/src" 3 0 0
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"
first=$(sed -n 1p "$T/all")
second=$(sed -n 2p "$T/all")
third=$(sed -n 3p "$T/all")
mkdir -p "$T/mnt" "$T/fs"
mount -t tmpfs -o size=64m cfs-test "$T/fs" || skip "cannot mount a tmpfs here"
start_server endless "$T/served" endless

# free_kib: what the store's filesystem has free
free_kib() { df -k --output=avail "$T/fs" | tail -n 1 | tr -d ' '; }

# refused OBJECT PATTERN: a lookup of OBJECT (by a daemon started for it)
# fails within 20 s, with one line on stderr matching PATTERN, while the
# filesystem never has less than $min_kib KiB free; nothing is left in the
# store
refused() {
	local t0=$SECONDS low poller
	(
		low=$(free_kib)
		while [ ! -e "$T/done" ]; do
			f=$(free_kib)
			[ "$f" -lt "$low" ] && low=$f
		done
		echo "$low" >"$T/low"
	) &
	poller=$!
	timeout 20 cat "$T/mnt/$1" >/dev/null 2>"$T/cat.err" && { touch "$T/done"; fail "reading '$1' from an endless mirror succeeded"; }
	touch "$T/done"
	wait "$poller"
	rm -f "$T/done"
	[ $((SECONDS - t0)) -lt 20 ] || fail "reading '$1' from an endless mirror took 20 s"
	assert_contains "$T/cat.err" "Input/output error"
	low=$(cat "$T/low")
	[ "$low" -ge "$min_kib" ] || fail "the store's filesystem went down to $low KiB free, under $min_kib"
	lazy_stop
	assert_eq 1 "$(grep -c . "$T/lazy.err")" "lines on stderr for '$1'"
	assert_contains "$T/lazy.err" "fetching '$T/fs/store/$1': $2"
	assert_eq "" "$(cd "$T/fs/store" && find . -type f)" "files left in the store"
}

# By default: the reserve, 5% of the 64 MiB filesystem, stays free.
min_kib=$((64 * 1024 / 20 - 1024))
lazy_start "$T/mnt" "$CFSCTL" lazy --store "$T/fs/store" --url "$SERVER_URL" "$T/mnt"
refused "$first" "the store's filesystem has [0-9]+ bytes free, and 335544[0-9]+ are kept free \\(--reserve\\)"

# --reserve SIZE
min_kib=$((32 * 1024 - 1024))
lazy_start "$T/mnt" "$CFSCTL" lazy --store "$T/fs/store" --url "$SERVER_URL" --reserve 32M "$T/mnt"
refused "$second" "the store.s filesystem has [0-9]+ bytes free, and 33554432 are kept free \\(--reserve\\)"

# --max-object-size SIZE: refused at the cap, far from the reserve
min_kib=$((60 * 1024))
lazy_start "$T/mnt" "$CFSCTL" lazy --store "$T/fs/store" --url "$SERVER_URL" --max-object-size 1M "$T/mnt"
refused "$third" "server sent more than 1048576 bytes, the most an object may have"

# Usage errors
expect_exit 2 "$CFSCTL" lazy --store "$T/fs/store" --url "$SERVER_URL" --max-object-size 1X "$T/mnt"
assert_contains "$T/err" "--max-object-size wants a size"
expect_exit 2 "$CFSCTL" lazy --store "$T/fs/store" --url "$SERVER_URL" --reserve -1 "$T/mnt"
assert_contains "$T/err" "--reserve wants a size"
