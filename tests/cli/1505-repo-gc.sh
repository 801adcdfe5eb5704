#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl gc --repo: keeps every image a name reaches and exactly their
# objects, removes the images no name reaches (unless given), their
# objects and dead temporaries; --dry-run and --json; a broken name
# removes nothing; gc waits for a build holding the lock; builds and gc
# racing in a loop never leave a name with a missing object; a build
# killed mid-way leaves the name on the image it had, and nothing the
# next gc keeps.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3 (for --json)"
umask 022

R=$T/repo
mktree() { # DIR TAG: shared files, and some of its own
	local i
	mkdir -p "$1/shared"
	for i in 1 2 3; do printf 'shared %s\n' "$i" >"$1/shared/$i"; done
	for i in 1 2 3 4; do printf '%s own %s\n' "$2" "$i" >"$1/own-$i"; done
}
mktree "$T/a" a
mktree "$T/b" b
mktree "$T/c" c
build() { expect_exit 0 "$CFSCTL" build --repo "$R" --print-digest "$@"; cat "$T/out"; }
da=$(build "$T/a" os/a)
db=$(build "$T/b" os/b)
dc=$(build "$T/c" scratch)
# scratch now names a's image: c's is unnamed
build "$T/a" scratch >/dev/null
objects_of() { "$CFSCTL" inspect objects "$R/images/$1"; }
{ objects_of "$da"; objects_of "$db"; } | sort -u >"$T/keep.objs"
objects_of "$dc" | sort -u | comm -23 - "$T/keep.objs" >"$T/c-only.objs"
[ "$(wc -l <"$T/c-only.objs")" -eq 4 ] || fail "c should have 4 objects of its own"
store_objects() { (cd "$R/objects" && find . -type f | sed 's|^\./||' | sort); }
# A dead build's temporary image, and a live one's.
sh -c 'exit 0' &
dead=$!
wait $dead
printf 'half an image' >"$R/images/.tmp-$dead-r0"
printf 'live' >"$R/images/.tmp-$$-r9"

# --dry-run removes nothing and says what it would.
before=$(cd "$R" && find . | sort)
expect_exit 0 "$CFSCTL" gc --repo "$R" --dry-run
assert_contains "$T/out" "^would remove image images/$dc \([0-9]+ bytes\)$"
assert_contains "$T/out" "^would remove temporary images/\.tmp-$dead-r0 \(13 bytes\)$"
assert_contains "$T/out" "^images: 2 kept, 1 would be removed"
assert_eq "$before" "$(cd "$R" && find . | sort)" "the repository after --dry-run"

# gc: the unnamed image and its own objects go, the named ones stay whole.
expect_exit 0 "$CFSCTL" gc --repo "$R" --json
python3 - "$T/out" "$dc" "$R" <<'PY' || fail "gc --json"
import json, sys
d = json.load(open(sys.argv[1]))
dc, repo = sys.argv[2:]
assert d["repository"] == repo and d["store"] == repo + "/objects", d
assert d["removed_images"] == 1 and d["images"] == 2, d
assert d["removed_objects"] == 4 and d["removed_temporaries"] == 1, d
kinds = sorted((e["kind"], e["path"]) for e in d["removed"])
assert ("image", "images/" + dc) in kinds, kinds
assert sum(1 for k, _ in kinds if k == "object") == 4, kinds
PY
[ ! -e "$R/images/$dc" ] || fail "gc kept the unnamed image"
[ -e "$R/images/$da" ] && [ -e "$R/images/$db" ] || fail "gc removed a named image"
[ ! -e "$R/images/.tmp-$dead-r0" ] || fail "gc kept a dead temporary"
[ -e "$R/images/.tmp-$$-r9" ] || fail "gc removed a live temporary"
rm "$R/images/.tmp-$$-r9"
store_objects >"$T/left.objs"
diff -u "$T/keep.objs" "$T/left.objs" || fail "the store does not hold exactly the named images' objects"
for n in os/a os/b scratch; do
	expect_exit 0 "$CFSCTL" verify --repo "$R" "$n"
done
# Nothing more to do: a second gc removes nothing.
expect_exit 0 "$CFSCTL" gc --repo "$R"
assert_contains "$T/out" "^images: 2 kept, 0 removed"
assert_contains "$T/out" "^removed: 0 objects, 0 temporaries"

# An unnamed image given by digest is kept, with its objects.
dc=$(build "$T/c" tmp)
expect_exit 0 "$CFSCTL" images --repo "$R" --remove tmp
expect_exit 0 "$CFSCTL" gc --repo "$R" "$dc"
assert_contains "$T/out" "^images: 3 kept, 0 removed"
expect_exit 0 "$CFSCTL" verify --repo "$R" "$dc"
expect_exit 1 "$CFSCTL" gc --repo "$R" nope
assert_contains "$T/err" "no name 'nope'"
[ -e "$R/images/$dc" ] || fail "a refused gc removed an image"

# A broken name: nothing removed, exit 1.
ln -s ../nothing "$R/images/refs/broken"
before=$(cd "$R" && find . | sort)
expect_exit 1 "$CFSCTL" gc --repo "$R"
assert_contains "$T/err" "^cfsctl: gc: the name 'broken' in '$R/images/refs': not a symlink to \.\./<64 hex digits>; nothing removed$"
assert_eq "$before" "$(cd "$R" && find . | sort)" "the repository after a refused gc"
rm "$R/images/refs/broken"
expect_exit 0 "$CFSCTL" gc --repo "$R"
[ ! -e "$R/images/$dc" ] || fail "the unnamed image outlived a gc that was not told of it"

# gc waits for a build (a holder of the lock on REPO/objects, shared),
# saying so, and goes on once the holder is gone.
if command -v flock >/dev/null; then
	touch "$T/hold"
	flock -s "$R/objects" sh -c 'while [ -e "$1" ]; do sleep 0.1; done' sh "$T/hold" &
	holder=$!
	sleep 0.3
	"$CFSCTL" gc --repo "$R" >"$T/out" 2>"$T/err" &
	gcpid=$!
	for i in $(seq 300); do
		grep -q "gc: waiting for the repository '$R'" "$T/err" && break
		sleep 0.1
	done
	assert_contains "$T/err" "gc: waiting for the repository '$R'"
	sleep 0.5
	kill -0 "$gcpid" 2>/dev/null || fail "gc did not wait for the lock holder"
	rm "$T/hold"
	wait "$holder"
	wait "$gcpid" || fail "gc failed after waiting"
	assert_contains "$T/out" "^images: "
else
	echo "note: no flock tool; the lock wait is not checked on its own"
fi

# Builds and gc in a loop, at once: each build replaces one of three names,
# so images keep losing their names and gc keeps removing them; a name is
# checked (its image and every object, by digest) right after its build,
# while gc runs.
gc_loop_start "$R"
builds=24
[ -n "${CFSCTL_REAL:-}" ] && builds=9 # under valgrind, a run takes seconds
for i in $(seq 1 $builds); do
	rm -rf "$T/loop"
	mktree "$T/loop" "loop $i"
	head -c $((20000 + i)) /dev/urandom >"$T/loop/big"
	n=loop/n$((i % 3))
	"$CFSCTL" build --repo "$R" --print-digest "$T/loop" "$n" >"$T/d" 2>"$T/berr" ||
		{ cat "$T/berr"; touch "$T/stop"; fail "build $i failed"; }
	"$CFSCTL" verify --repo "$R" "$n" >"$T/vout" 2>&1 ||
		{ cat "$T/vout"; touch "$T/stop"; fail "after build $i, $n lost something"; }
done
gc_loop_stop
for n in os/a os/b scratch loop/n0 loop/n1 loop/n2; do
	expect_exit 0 "$CFSCTL" verify --repo "$R" "$n"
done
echo "ok: $(grep -c '^images: ' "$T/gc.log") gc runs raced $builds builds"

# A build killed mid-way (its tar still arriving): the name keeps its
# image, nothing half made is named, and the next gc keeps nothing of it.
mkdir -p "$T/kill"
for i in $(seq 1 50); do head -c 3000 /dev/urandom >"$T/kill/f$i"; done
tar -C "$T/kill" -cf "$T/kill.tar" .
size=$(stat -c %s "$T/kill.tar")
mkfifo "$T/fifo"
"$CFSCTL" build --repo "$R" --from-tar - os/a <"$T/fifo" 2>"$T/kerr" &
pid=$!
exec 3>"$T/fifo"
head -c $((size / 2)) "$T/kill.tar" >&3
for i in $(seq 1 100); do
	[ -n "$(find "$R/objects" -maxdepth 1 -name '.tmp-*')" ] && break
	sleep 0.1
done
[ -n "$(find "$R/objects" -maxdepth 1 -name '.tmp-*')" ] || fail "the build wrote nothing: the kill came too early to test"
# (its children too: under valgrind $pid is tests/lib/valgrind-cfsctl's shell)
kill -KILL $(pgrep -P "$pid") "$pid"
wait "$pid" 2>/dev/null
exec 3>&-
assert_eq "../../$da" "$(readlink "$R/images/refs/os/a")" "os/a after a killed build"
expect_exit 0 "$CFSCTL" verify --repo "$R" os/a
expect_exit 0 "$CFSCTL" gc --repo "$R"
assert_contains "$T/out" "[1-9][0-9]* temporaries"
[ -z "$(find "$R" -name '.tmp-*')" ] || fail "gc left the killed build's temporaries"
{ for n in os/a os/b scratch loop/n0 loop/n1 loop/n2; do
	"$CFSCTL" inspect objects --repo "$R" "$n"
done; } | sort -u >"$T/keep.objs"
store_objects >"$T/left.objs"
diff -u "$T/keep.objs" "$T/left.objs" || fail "the store does not hold exactly the named images' objects"
