# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the command tests in tests/cli/: a scratch directory removed on
# exit, $CFSCTL, and assertions that name what they expected.
set -u
: "${CFSCTL:?CFSCTL must name the cfsctl binary}"
TESTS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOP=$(cd "$TESTS_DIR/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/cfs-test.XXXXXX")
trap 'chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "$*"; exit 77; }

# composefs_assets: the composefs 1.0.8 test assets into $A, false when
# there are none. shared/ sits beside the repository, and a worktree finds
# it beside the main one; $CFS_TEST_ASSETS names another place.
composefs_assets() {
	local common

	A=${CFS_TEST_ASSETS:-$TOP/../shared/data/composefs-assets}
	if [ ! -d "$A" ] && common=$(git -C "$TOP" rev-parse --path-format=absolute --git-common-dir 2>/dev/null); then
		A=$(dirname "$common")/../shared/data/composefs-assets
	fi
	[ -d "$A" ]
}

# few_fds CMD...: run CMD (exec'd, so its PID is ours) with at most 300
# open files, too few for cfsctl build to keep its new objects open as
# unnamed files: it names its temporaries. "${FEW_FDS[@]}" CMD... is the
# same, for timeout and the like.
FEW_FDS=(sh -c 'ulimit -n 300 && exec "$0" "$@"')
few_fds() { "${FEW_FDS[@]}" "$@"; }

# expect_exit CODE CMD...: run CMD, require exit status CODE; output in $T/out, $T/err
expect_exit() {
	local want=$1 rc
	shift
	"$@" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -eq "$want" ] || {
		echo "stdout:"; head -n 20 "$T/out"; echo "stderr:"; head -n 20 "$T/err"
		fail "'$*' exited $rc, expected $want"
	}
}

# assert_eq EXPECTED ACTUAL WHAT
assert_eq() { [ "$1" = "$2" ] || fail "$3: expected '$1', got '$2'"; }

# assert_contains FILE PATTERN: grep -E PATTERN in FILE
assert_contains() { grep -qE -- "$2" "$1" || { cat "$1"; fail "$1 does not match '$2'"; }; }

# check_store DIR: every object in the digest store DIR is named by its
# fs-verity digest and no temporary is left; $n_objects counts the objects.
check_store() {
	local f d
	n_objects=0
	while read -r f; do
		d=$(fsverity digest --compact "$f") || fail "fsverity digest $f"
		assert_eq "${f#"$1/"}" "${d:0:2}/${d:2}" "object name of $f"
		n_objects=$((n_objects + 1))
	done < <(find "$1" -type f)
	[ -z "$(find "$1" -name '.tmp-*')" ] || fail "temporaries left in the store $1"
}

# gc_loop_start REPO: cfsctl gc --repo REPO over and over in the background,
# its output in $T/gc.log, until $T/stop exists (a test that fails while it
# runs touches $T/stop first); gc_loop_stop ends it, and fails unless every
# gc succeeded and one removed an image.
gc_loop_start() {
	: >"$T/gc.log"
	(
		while [ ! -e "$T/stop" ]; do
			"$CFSCTL" gc --repo "$1" >>"$T/gc.log" 2>&1 || { echo "gc failed" >>"$T/gc.log"; exit 1; }
		done
	) &
	gc_loop=$!
}
gc_loop_stop() {
	touch "$T/stop"
	wait "$gc_loop" || { cat "$T/gc.log"; fail "a gc in the loop failed"; }
	grep -q '^removed image ' "$T/gc.log" || fail "no gc in the loop removed an image: nothing was raced"
}

# bounded CODE CMD...: CMD exits CODE within 10 s, using under 256 MiB;
# under a sanitizer, some ten times slower and whose shadow memory counts,
# within 60 s and with no bound on memory. Its stderr in $T/err.
bounded() {
	local want=$1 out secs=10
	shift
	grep -q __asan_init "$CFSCTL" 2>/dev/null && secs=60
	out=$(BOUNDED_SECONDS=$secs python3 "$TESTS_DIR/lib/bounded.py" "$T/err" "$@")
	[ "${out%% *}" = "$want" ] || { cat "$T/err"; fail "'$*': exit status ${out%% *}, expected $want"; }
	if ! grep -q __asan_init "$CFSCTL" 2>/dev/null; then
		[ "${out#* }" -lt 262144 ] || fail "'$*' took ${out#* } KiB"
	fi
}

# sample_variants DIR: in the sanitizer run (CFS_TEST_SAMPLE=N, where each
# cfsctl costs ten times more) keeps every Nth of the damaged images in DIR,
# in name order, so that each kind (cut, 0xff, +1) is still tried at
# offsets all through the image; the normal run tries them all. Prints N,
# by which a test divides the count it expects.
sample_variants() {
	local n=${CFS_TEST_SAMPLE:-1}
	if [ "$n" -gt 1 ]; then
		(cd "$1" && LC_ALL=C ls | awk -v n="$n" '(NR - 1) % n' | xargs -r rm -f) ||
			fail "cannot sample the variants in $1"
	fi
	echo "$n"
}

# test_debs: the packages of this tree (make deb-run), made once for the
# tests that look at them and prints their directory, BUILD/test-deb/deb
# beside cfsctl. The Maintainer is one 0200-deb-build checks; the version is
# git describe's. Made again when a file of the tree or the version changed.
test_debs() {
	local dir version key
	dir=$(dirname "$CFSCTL")/test-deb
	mkdir -p "$dir" || fail "cannot make $dir"
	version=$(cd "$TOP" && git describe --always --dirty 2>/dev/null || echo 0.1)
	key=$(cd "$TOP" && { echo "$version"; git ls-files -z -c -o --exclude-standard |
		xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\n" "$f" && cat "$f"; done' _; } | md5sum)
	(
		flock 9 || exit 1
		[ "$(cat "$dir/key" 2>/dev/null)" = "$key" ] && exit 0
		rm -f "$dir/key"
		DEBFULLNAME='Pat Packager' DEBEMAIL=pat@example.org \
			make -s -C "$TOP" deb-run DEB_DIR="$dir/deb" VERSION="$version" > "$dir/make.log" 2>&1 ||
			{ tail -n 30 "$dir/make.log" >&2; exit 1; }
		echo "$key" > "$dir/key"
	) 9> "$dir/lock" || fail "make deb failed (log: $dir/make.log)"
	echo "$dir/deb"
}
