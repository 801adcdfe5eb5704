#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --digest-store killed with SIGKILL at many moments, from
# right after start (scanning) to the end (writing the image), all into the
# same store: after each kill, every object in the store is complete (its
# name is its fs-verity digest), and IMAGE is either absent or byte for byte
# the image of a clean build. New objects are unnamed files: a kill leaves
# no temporary. Where they cannot be (here: too few open files allowed; as
# on a filesystem without O_TMPFILE) they are named temporaries, and a
# kill's temporaries never hold an object's name. Either way a last build
# over all that debris succeeds, completes the store to exactly the objects
# of a clean build, and gives the same image.
. "$(dirname "$0")/../lib/common.sh"
command -v fsverity >/dev/null || skip "needs the fsverity tool (Debian package fsverity)"
command -v timeout >/dev/null || skip "needs timeout (coreutils)"

# Objects in STORE whose content does not match their name, and stray files.
check_store() { # STORE WHEN
	local bad stray
	bad=$(find "$1" -type f -path "$1/??/*" -exec fsverity digest {} + |
		awk '{ sub("^sha256:", "", $1); n = split($2, p, "/");
		       if (p[n-1] p[n] != $1) print $2 }')
	[ -z "$bad" ] || fail "$2: objects whose content does not match their name: $bad"
	stray=$(find "$1" -mindepth 1 ! -path "$1/??" ! -path "$1/??/*" ! -name '.tmp-*')
	[ -z "$stray" ] || fail "$2: unexpected files in the store: $stray"
	stray=$(find "$1" -mindepth 2 -name '.tmp-*')
	[ -z "$stray" ] || fail "$2: a temporary in an object directory: $stray"
}

objects() { (cd "$1" && find . -path './??/*' -type f | sort); }

# A tree that takes a while: large files to copy and hash, many small ones.
src=$T/src
mkdir -p "$src/d" "$src/e"
for i in $(seq 1 32); do head -c $((i * 50000)) /dev/urandom >"$src/f$i"; done
for i in $(seq 1 1200); do echo "small $i" >"$src/d/s$i"; done
for i in $(seq 1 300); do echo "small $i" >"$src/e/same$i"; done # shared objects
ln "$src/f1" "$src/e/hardlink"

# The shortest of three clean builds: one slowed by a busy machine would
# spread the kills past the end of the others, and none would land mid-way.
ms=
for i in 1 2 3; do
	rm -rf "$T/ref-store"
	start=$(date +%s%N)
	expect_exit 0 "$CFSCTL" build --digest-store="$T/ref-store" "$src" "$T/ref.img"
	t=$((($(date +%s%N) - start) / 1000000))
	[ -n "$ms" ] && [ "$ms" -le "$t" ] || ms=$t
done
"$CFSCTL" inspect dump "$T/ref.img" >"$T/ref.dump" || fail "cannot dump the reference image"
echo "a clean build takes ${ms} ms"

# crash_builds MODE [WRAPPER...]: the kills and the last build, into a store
# and image directory of their own; WRAPPER runs each build.
crash_builds() {
	local mode=$1 store=$T/store-$1 img=$T/imgdir-$1/img kills=0 seen=0 left t rc f
	shift
	mkdir "$T/imgdir-$mode"
	# Moments: a few early ones, then spread over the length of a clean build.
	for t in 1 5 10 20 40 $(seq $((ms / 8)) $((ms / 8 + 1)) $((ms + ms / 5))); do
		rm -f "$img"
		timeout -s KILL "$(awk -v t="$t" 'BEGIN { printf "%.3f", t / 1000 }')" "$@" "$CFSCTL" build --digest-store="$store" "$src" "$img" >/dev/null 2>"$T/err"
		rc=$?
		case $rc in
		137) kills=$((kills + 1)) ;;
		0) ;;
		*) cat "$T/err"; fail "$mode: build killed after ${t} ms exited $rc" ;;
		esac
		[ -d "$store" ] && check_store "$store" "$mode: killed after ${t} ms"
		left=$(find "$store" -maxdepth 1 -name '.tmp-*' 2>/dev/null | wc -l)
		seen=$((seen + left))
		if [ -e "$img" ]; then
			cmp -s "$img" "$T/ref.img" || fail "$mode: killed after ${t} ms: IMAGE is there but not the complete image"
		fi
		# Whatever temporary the kill left must not be IMAGE's name.
		for f in "$T/imgdir-$mode"/.img.tmp*; do
			[ -e "$f" ] || continue
			[ "$f" != "$img" ] || fail "$mode: temporary named as IMAGE"
		done
	done
	echo "$mode: killed $kills builds; $seen temporaries seen after them"
	[ "$kills" -ge 5 ] || fail "$mode: only $kills builds were killed before they finished"
	if [ "$mode" = named ]; then
		[ "$seen" -gt 0 ] || fail "$mode: no kill left a temporary: were they named?"
	else
		assert_eq 0 "$seen" "$mode: temporaries the kills left"
	fi

	# Over all the debris, a build succeeds and completes the store.
	expect_exit 0 "$@" "$CFSCTL" build --digest-store="$store" "$src" "$img"
	cmp "$img" "$T/ref.img" || fail "$mode: the build after the kills gives another image"
	check_store "$store" "$mode: after the last build"
	assert_eq "$(objects "$T/ref-store")" "$(objects "$store")" "$mode: objects after the last build"
	"$CFSCTL" inspect dump "$img" >"$T/dump" || fail "cannot dump the image"
	cmp "$T/dump" "$T/ref.dump" || fail "$mode: dump differs from the reference"
}

crash_builds unnamed
crash_builds named "${FEW_FDS[@]}"
