#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl mount --fuse --lazy-url over an empty store, both formats: the
# mount's daemon itself fetches each object on its file's first open, into
# the first basedir, verified, and only those opened; eight readers of one
# file at once make one request; an object the mirror serves wrong reads
# EIO, one it lacks fails its open, each said in one line; no second
# daemon runs, and none is left after the unmount.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fuse.sh"
. "$TESTS_DIR/lib/fetch.sh"
trap 'awk -v t="$T/" '"'"'index($2, t) == 1 && $3 ~ /^fuse/ { print $2 }'"'"' /proc/mounts |
	xargs -r -n 1 umount -l 2>/dev/null; stop_servers; rm -rf "$T"' EXIT

make_source "$T/src" 20 2 512
mkdir -p "$T/m"
for fmt in v1 erofs; do
	"$CFSCTL" build --format="$fmt" --digest-store "$T/served-$fmt" "$T/src" "$T/$fmt.cfs" >/dev/null ||
		fail "build --format=$fmt"
done
# the mirror holds both formats' objects
mkdir -p "$T/served"
cp -a "$T/served-v1/." "$T/served-erofs/." "$T/served/"
start_server ok "$T/served" ok

for fmt in v1 erofs; do
	S=$T/store-$fmt
	mkdir -p "$S"
	: >"$T/ok.log"
	"$CFSCTL" mount --fuse --basedir "$S" --lazy-url "$SERVER_URL" "$T/$fmt.cfs" "$T/m" 2>"$T/daemon.err" ||
		{ cat "$T/daemon.err"; fail "$fmt: mount --fuse --lazy-url"; }
	pid=$(fuse_pid "$T/m")
	[ -z "$(store_files "$S")" ] || fail "$fmt: objects fetched before any open"
	# one file: its one object, and nothing else
	first=$(cd "$T/src" && find . -type f -size +1k | LC_ALL=C sort | head -n 1)
	cmp "$T/m/$first" "$T/src/$first" || fail "$fmt: '$first' through the mount differs"
	obj=$("$CFSCTL" inspect stat "$T/$fmt.cfs" "/${first#./}" | awk '/^backing/ { print $2 }')
	assert_eq "$obj" "$(store_files "$S")" "$fmt: the store after one open"
	assert_eq 1 "$(wc -l <"$T/ok.log")" "$fmt: requests after one open"
	# eight readers at once of one missing object: one request
	big=$(cd "$T/src" && find . -type f -size +100k | LC_ALL=C sort | head -n 1)
	[ -n "$big" ] || fail "no large file in the source"
	pids=()
	for i in $(seq 8); do
		cmp "$T/m/$big" "$T/src/$big" 2>"$T/par.$i" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p" || { cat "$T"/par.*; fail "$fmt: a parallel reader of '$big' failed"; }
	done
	bobj=$("$CFSCTL" inspect stat "$T/$fmt.cfs" "/${big#./}" | awk '/^backing/ { print $2 }')
	assert_eq 1 "$(grep -c " /$bobj\$" "$T/ok.log")" "$fmt: requests for '$big' by 8 readers"
	# every file, as in the tree
	walk_eq "$T/src" "$T/m"
	check_store "$S"
	fusermount3 -u "$T/m" || fail "fusermount3 -u"
	fuse_gone "$T/m" "$pid"
	[ -z "$(pgrep -f 'cfsctl lazy')" ] || fail "$fmt: a cfsctl lazy runs"
done

# A mirror that serves wrong bytes, and one that lacks an object: the open
# fails, said in one line; what the store holds still reads.
stop_servers
mkdir -p "$T/bad"
cp -a "$T/served-v1/." "$T/bad/"
o1=$("$CFSCTL" inspect stat "$T/v1.cfs" "/${first#./}" | awk '/^backing/ { print $2 }')
files=$(cd "$T/src" && find . -type f -size +1k | LC_ALL=C sort; cd "$T/src" && find . -type f -size -2k -size +0 | LC_ALL=C sort)
f2=$(sed -n 2p <<<"$files") f3=$(sed -n 3p <<<"$files")
o2=$("$CFSCTL" inspect stat "$T/v1.cfs" "/${f2#./}" | awk '/^backing/ { print $2 }')
o3=$("$CFSCTL" inspect stat "$T/v1.cfs" "/${f3#./}" | awk '/^backing/ { print $2 }')
printf 'x' | dd of="$T/bad/$o2" bs=1 seek=10 conv=notrunc status=none
rm "$T/bad/$o3"
start_server bad "$T/bad" ok
S=$T/store-bad
mkdir -p "$S/${o1%%/*}"
cp "$T/served-v1/$o1" "$S/$o1"
"$CFSCTL" mount --fuse --basedir "$S" --lazy-url "$SERVER_URL" "$T/v1.cfs" "$T/m" 2>"$T/daemon.err" ||
	fail "mount over the bad mirror"
pid=$(fuse_pid "$T/m")
cat "$T/m/$f2" >/dev/null 2>&1 && fail "a wrong object from the mirror read"
cat "$T/m/$f3" >/dev/null 2>&1 && fail "an object no mirror has read"
cmp "$T/m/$first" "$T/src/$first" || fail "the object the store holds did not read"
assert_contains "$T/daemon.err" "^cfsctl: mount: '$T/v1.cfs': '/${f2#./}': object '$o2': fetching it from the mirrors: "
assert_contains "$T/daemon.err" "^cfsctl: mount: '$T/v1.cfs': '/${f3#./}': object '$o3': fetching it from the mirrors: "
[ -e "$S/$o2" ] && fail "the wrong object entered the store"
fusermount3 -u "$T/m" || fail "fusermount3 -u"
fuse_gone "$T/m" "$pid"
