#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl fetch killed with SIGKILL at many moments, all into the same
# store, and a fetch into a store on a full filesystem: afterwards the store
# holds only complete objects that verify (nothing partial, no temporary a
# later run would trip over), a full disk is a clear error with exit 1, and
# a rerun (with room again) completes the store to exactly the served one.
# The mirror is a file:// URL, so the timing depends on no server.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v timeout >/dev/null || skip "needs timeout (coreutils)"

# Every file in STORE is an object (xx/<62 hex>) with its own digest. (As
# assert_store of lib/fetch.sh, but one fsverity process for all objects.)
check_store() { # STORE WHEN
	local bad stray
	[ -d "$1" ] || return 0
	bad=$(find "$1" -type f -path "$1/??/*" -exec fsverity digest {} + |
		awk '{ sub("^sha256:", "", $1); n = split($2, p, "/");
		       if (p[n-1] p[n] != $1) print $2 }')
	[ -z "$bad" ] || fail "$2: objects whose content does not match their name: $bad"
	stray=$(find "$1" -mindepth 1 ! -type d ! -regex "$1/[0-9a-f][0-9a-f]/[0-9a-f]*")
	[ -z "$stray" ] || fail "$2: files in the store that are not objects: $stray"
}

complete() { # STORE WHEN
	check_store "$1" "$2"
	store_files "$1" >"$T/have"
	cmp -s "$T/all" "$T/have" || fail "$2: the store does not hold exactly the served objects"
}

make_source "$T/src" 800 6 4096
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"

start=$(date +%s%N)
expect_exit 0 "$CFSCTL" fetch --basedir "$T/ref" --url "file://$T/served" "$T/a.img"
ms=$((($(date +%s%N) - start) / 1000000))
echo "a clean fetch takes ${ms} ms"
complete "$T/ref" "a clean fetch"

kills=0
for t in 2 5 10 20 40 $(seq $((ms / 10)) $((ms / 10 + 1)) $((ms + ms / 5))); do
	timeout -s KILL "$(awk -v t="$t" 'BEGIN { printf "%.3f", t / 1000 }')" "$CFSCTL" fetch \
		--basedir "$T/store" --url "file://$T/served" "$T/a.img" >/dev/null 2>"$T/err"
	rc=$?
	case $rc in
	137) kills=$((kills + 1)) ;;
	0) ;;
	*) cat "$T/err"; fail "fetch killed after ${t} ms exited $rc" ;;
	esac
	check_store "$T/store" "killed after ${t} ms"
done
echo "killed $kills fetches"
[ "$kills" -ge 5 ] || fail "only $kills fetches were killed before they finished"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/store" --url "file://$T/served" "$T/a.img"
complete "$T/store" "the fetch after the kills"

# A full disk: the store on a tmpfs too small for the large objects.
[ "$(id -u)" -eq 0 ] || skip "the full-disk part needs root (mounts a tmpfs)"
mkdir "$T/m"
mount -t tmpfs -o size=12m tmpfs "$T/m" || skip "cannot mount a tmpfs here"
trap 'umount "$T/m" 2>/dev/null; stop_servers; rm -rf "$T"' EXIT
expect_exit 1 "$CFSCTL" fetch --basedir "$T/m/store" --url "file://$T/served" "$T/a.img"
assert_contains "$T/err" "No space left on device"
check_store "$T/m/store" "after a full disk"
mount -o remount,size=64m "$T/m"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/m/store" --url "file://$T/served" "$T/a.img"
complete "$T/m/store" "the fetch with room again"
