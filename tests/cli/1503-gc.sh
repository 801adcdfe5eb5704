#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl gc: of two images sharing a store, gc with the first keeps exactly
# its objects (and verify passes); --dry-run removes nothing and lists the
# same; --json parses and its counts match; dead temporaries go, a live
# one stays; files that are not objects are reported and kept; a corrupt or
# missing image removes nothing (exit 1); usage errors exit 2; gc waits for
# a holder of the store lock; and a gc racing builds never leaves a built
# image with some of its objects gone.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"
command -v python3 >/dev/null || skip "needs python3 (for --json)"

S=$T/store
make_tree "$T/a" nosparse
cp -a "$T/a" "$T/b"
for i in $(seq 1 40); do printf 'only in b %s\n' "$i" >"$T/b/only-$i"; done
printf 'changed\n' >"$T/b/file"
expect_exit 0 "$CFSCTL" build --digest-store="$S" "$T/a" "$T/a.img"
expect_exit 0 "$CFSCTL" build --digest-store="$S" "$T/b" "$T/b.img"

objects_of() { "$CFSCTL" inspect objects "$1" | sort -u; }
store_objects() { (cd "$S" && find . -type f | sed 's|^\./||' | sort); }
store_all() { (cd "$S" && find . | sort); }
objects_of "$T/a.img" >"$T/a.objs"
objects_of "$T/b.img" >"$T/b.objs"
comm -13 "$T/a.objs" "$T/b.objs" >"$T/b-only.objs"
n_b_only=$(wc -l <"$T/b-only.objs")
[ "$n_b_only" -ge 41 ] || fail "b should have objects a lacks, has $n_b_only"
[ -n "$(comm -12 "$T/a.objs" "$T/b.objs")" ] || fail "a and b should share objects"

# Usage errors: exit 2, nothing removed.
store_all >"$T/before"
expect_exit 2 "$CFSCTL" gc "$T/a.img"
expect_exit 2 "$CFSCTL" gc --basedir "$S"
expect_exit 2 "$CFSCTL" gc --basedir "$S" --images-from "$T/list" "$T/a.img"
expect_exit 2 "$CFSCTL" gc --basedir "$S" --bogus "$T/a.img"
expect_exit 0 "$CFSCTL" gc --help
assert_contains "$T/out" "^Usage: cfsctl gc --basedir DIR"

# A corrupt image, a missing image, an empty list: exit 1, nothing removed.
head -c 4096 "$T/a.img" >"$T/bad.img"
python3 - "$T/bad.img" <<'EOF'
import sys
p = sys.argv[1]
b = bytearray(open(p, 'rb').read())
for i in range(64, len(b)):
    b[i] ^= 0xA5
open(p, 'wb').write(b)
EOF
"$CFSCTL" inspect "$T/bad.img" >/dev/null 2>&1 && fail "the damaged image still reads"
expect_exit 1 "$CFSCTL" gc --basedir "$S" "$T/a.img" "$T/bad.img"
assert_contains "$T/err" "gc: .*'$T/bad.img': .*nothing removed"
[ ! -s "$T/out" ] || fail "a failed gc printed removals: $(head -n 3 "$T/out")"
expect_exit 1 "$CFSCTL" gc --basedir "$S" "$T/a.img" "$T/no-such.img"
assert_contains "$T/err" "'$T/no-such.img': No such file or directory"
: >"$T/empty-list"
expect_exit 1 "$CFSCTL" gc --basedir "$S" --images-from "$T/empty-list"
store_all >"$T/after"
cmp -s "$T/before" "$T/after" || fail "a failed gc changed the store: $(diff "$T/before" "$T/after" | head -n 5)"

# Things that are not objects, and temporaries of a dead and a live process.
dead=$(sh -c 'echo $$')
printf 'dead build\n' >"$S/.tmp-$dead-7"
printf 'dead fetch!\n' >"$S/.cfs-fetch.$dead.3"
sleep 300 &
live=$!
trap 'kill $live 2>/dev/null; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
printf 'live\n' >"$S/.tmp-$live-0"
printf 'stray\n' >"$S/stray"
mkdir "$S/not-hex" "$S/zz"
some=$(head -n 1 "$T/b-only.objs")
mkdir -p "$S/${some:0:2}"
printf 'short\n' >"$S/${some:0:2}/abc"
printf 'upper\n' >"$S/${some:0:2}/$(printf 'A%.0s' $(seq 62))"
mkdir "$S/${some:0:2}/$(printf 'b%.0s' $(seq 62))"
ln -s "../$some" "$S/${some:0:2}/$(printf 'c%.0s' $(seq 62))"
ln -s "${some:0:2}" "$S/ee"
store_all >"$T/before"

# --dry-run: nothing removed, every removal listed.
expect_exit 0 "$CFSCTL" gc --basedir "$S" --dry-run "$T/a.img"
cp "$T/out" "$T/dry.out"
cp "$T/err" "$T/dry.err"
store_all >"$T/after"
cmp -s "$T/before" "$T/after" || fail "--dry-run changed the store: $(diff "$T/before" "$T/after" | head -n 5)"
grep '^would remove object ' "$T/dry.out" | cut -d' ' -f4 >"$T/dry.objs"
cmp -s "$T/b-only.objs" "$T/dry.objs" ||
	fail "--dry-run lists other objects than b has beyond a: $(diff "$T/b-only.objs" "$T/dry.objs" | head -n 5)"
assert_contains "$T/dry.out" "^would remove temporary \.tmp-$dead-7 \(11 bytes\)$"
assert_contains "$T/dry.out" "^would remove temporary \.cfs-fetch\.$dead\.3 \(12 bytes\)$"
assert_contains "$T/dry.out" "^would remove: $n_b_only objects, 2 temporaries, [0-9]+ bytes would be freed$"
assert_contains "$T/dry.out" "^kept: $(wc -l <"$T/a.objs") objects, "
assert_contains "$T/dry.out" "^missing: 0 objects"

# The real run removes what the dry run listed, keeps exactly a's objects.
expect_exit 0 "$CFSCTL" gc --basedir "$S" "$T/a.img"
sed 's/^would remove/removed/; s/bytes would be freed$/bytes freed/' "$T/dry.out" >"$T/dry-as-real"
cmp -s "$T/dry-as-real" "$T/out" || fail "gc did not do what --dry-run said: $(diff "$T/dry-as-real" "$T/out" | head -n 5)"
cmp -s "$T/dry.err" "$T/err" || fail "gc and --dry-run report other non-objects"
cp "$T/err" "$T/gc.err"
grep -v '/' "$T/a.objs" && fail "a backing path that is not xx/..."
store_objects | grep -E '^[0-9a-f]{2}/[0-9a-f]{62}$' >"$T/left.objs"
cmp -s "$T/a.objs" "$T/left.objs" || fail "the store does not hold exactly a's objects: $(diff "$T/a.objs" "$T/left.objs" | head -n 5)"
expect_exit 0 "$CFSCTL" verify --basedir "$S" "$T/a.img"
[ ! -e "$S/.tmp-$dead-7" ] && [ ! -e "$S/.cfs-fetch.$dead.3" ] || fail "a dead temporary is still there"

# Each thing that is not an object was reported, and is still there.
for p in ".tmp-$live-0" stray not-hex zz ee "${some:0:2}/abc" \
	"${some:0:2}/$(printf 'A%.0s' $(seq 62))" "${some:0:2}/$(printf 'b%.0s' $(seq 62))" \
	"${some:0:2}/$(printf 'c%.0s' $(seq 62))"; do
	[ -e "$S/$p" ] || [ -L "$S/$p" ] || fail "gc removed '$p', which is not an object"
	grep -qF "not an object, left alone: '$S/$p': " "$T/gc.err" || { cat "$T/gc.err"; fail "'$p' was not reported"; }
done
assert_eq 9 "$(grep -c 'not an object, left alone' "$T/gc.err")" "entries reported as not objects"
[ -e "$S/$some" ] && fail "the object a symlink points to should have gone with b"

# --json, with --images-from: parses, and the counts match the lists.
expect_exit 0 "$CFSCTL" build --digest-store="$S" "$T/b" "$T/b.img"
printf 'dead build\n' >"$S/.tmp-$dead-8"
printf '%s\n\n' "$T/a.img" >"$T/list"
expect_exit 0 "$CFSCTL" gc --basedir "$S" --json --images-from "$T/list"
python3 -m json.tool "$T/out" >/dev/null || fail "--json is not JSON: $(head -c 300 "$T/out")"
python3 - "$T/out" "$T/b-only.objs" "$(wc -l <"$T/a.objs")" <<'EOF' || fail "--json counts do not match"
import json, sys
d = json.load(open(sys.argv[1]))
want = set(open(sys.argv[2]).read().split())
objs = [r for r in d["removed"] if r["kind"] == "object"]
tmps = [r for r in d["removed"] if r["kind"] == "temporary"]
checks = [
    (d["dry_run"] is False, "dry_run"),
    (d["images"] == 1, "images"),
    (d["referenced"] == int(sys.argv[3]) == d["kept"], "referenced/kept"),
    (d["missing"] == 0, "missing"),
    (set(r["path"] for r in objs) == want, "removed objects are b's own"),
    (d["removed_objects"] == len(objs) == len(want), "removed_objects"),
    (d["removed_temporaries"] == len(tmps) == 1, "removed_temporaries"),
    (d["bytes_freed"] == sum(r["bytes"] for r in d["removed"]), "bytes_freed"),
    (d["left_alone"] == len(d["not_objects"]) == 9, "left_alone"),
    (all(n["reason"] for n in d["not_objects"]), "reasons"),
    (d["failed"] == 0, "failed"),
]
bad = [w for ok, w in checks if not ok]
if bad:
    print("wrong:", bad, json.dumps(d)[:500])
    sys.exit(1)
EOF
[ ! -s "$T/err" ] || fail "--json also wrote to stderr: $(head -n 3 "$T/err")"
store_objects | grep -E '^[0-9a-f]{2}/[0-9a-f]{62}$' >"$T/left.objs"
cmp -s "$T/a.objs" "$T/left.objs" || fail "after --json, the store does not hold exactly a's objects"
kill "$live"

# gc waits for a holder of the store lock (as a build or fetch holds it).
if command -v flock >/dev/null; then
	flock -s "$S" sleep 2 &
	holder=$!
	sleep 0.3
	start=$(date +%s%N)
	expect_exit 0 "$CFSCTL" gc --basedir "$S" "$T/a.img"
	took=$((($(date +%s%N) - start) / 1000000))
	wait "$holder"
	assert_contains "$T/err" "gc: waiting for the store '$S'"
	[ "$took" -ge 1000 ] || fail "gc did not wait for the lock holder (took $took ms)"
else
	echo "note: no flock tool; the lock wait is not checked on its own"
fi

# A gc racing a build: a build's objects are never removed while it
# publishes them. gc either runs first (the image has all its objects) or
# after the build (all its objects are gone, none of them are referenced),
# never between, which would leave some of them missing.
# The symlink "ee" planted above: no build writes through it (an object of
# "ee/" is refused, docs/security.md), and the races build 3000 objects.
rm "$S/ee"
mkdir "$T/race"
first=0 after=0
for i in $(seq 1 20); do
	c=$T/race/c$i
	mkdir -p "$c/d"
	for k in $(seq 1 150); do printf 'race %s %s\n' "$i" "$k" >"$c/d/f$k"; done
	"$CFSCTL" gc --basedir "$S" --json "$T/a.img" >"$T/race/gc$i.json" 2>"$T/race/gc$i.err" &
	gc=$!
	"$CFSCTL" build --digest-store="$S" "$c" "$T/race/c$i.img" 2>"$T/race/build.err" ||
		{ cat "$T/race/build.err"; fail "build $i failed"; }
	wait "$gc" || { cat "$T/race/gc$i.err"; fail "gc $i failed"; }
	"$CFSCTL" inspect missing --basedir "$S" "$T/race/c$i.img" >"$T/race/missing" ||
		fail "inspect missing failed"
	n=$(wc -l <"$T/race/missing")
	if [ "$n" -eq 0 ]; then
		first=$((first + 1))
	elif [ "$n" -eq 150 ]; then
		after=$((after + 1))
	else
		fail "round $i: $n of 150 objects of the built image are missing"
	fi
	python3 -m json.tool "$T/race/gc$i.json" >/dev/null || fail "round $i: gc --json is not JSON"
done
# The objects of the last round's image come back for the final check.
expect_exit 0 "$CFSCTL" build --digest-store="$S" "$T/race/c20" "$T/race/again.img"
expect_exit 0 "$CFSCTL" verify --basedir "$S" "$T/race/c20.img"
expect_exit 0 "$CFSCTL" verify --basedir "$S" "$T/a.img"
echo "race: gc before the build's objects were published $first times, after $after times"
