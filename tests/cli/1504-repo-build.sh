#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build --repo: the image lands in REPO/images/<its fs-verity
# digest>, the objects in REPO/objects (the build --digest-store makes of
# the same tree), the name (with '/') is a symlink with the right number of
# ../; images lists names, digests, sizes and object counts (text and
# --json, checked against inspect); inspect, verify, diff, mount and tui
# take a name or a digest; --tag and --remove; bad names and usage errors;
# a name replaced in a loop is, to a reader at any moment, one of its two
# images, never missing.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "needs python3 (for --json)"
umask 022

R=$T/repo
mkdir -p "$T/a/dir" "$T/b"
printf 'hello\n' >"$T/a/dir/f"
head -c 100000 /dev/urandom >"$T/a/big"
cp -a "$T/a/." "$T/b/"
printf 'only in b\n' >"$T/b/new"
rm "$T/b/dir/f"

# The same image and objects as a build with --digest-store.
expect_exit 0 "$CFSCTL" build --print-digest --digest-store="$T/store" "$T/a" "$T/a.img"
want_a=$(cat "$T/out")
expect_exit 0 "$CFSCTL" build --repo "$R" --print-digest "$T/a" os/debian/a
da=$(cat "$T/out")
assert_eq "$want_a" "$da" "digest of the image built into the repository"
[ -f "$R/images/$da" ] || fail "no image at images/<digest>"
cmp -s "$T/a.img" "$R/images/$da" || fail "the repository's image differs from build's"
assert_eq "$da" "$(fsverity digest --compact "$R/images/$da")" "the image's name is its fs-verity digest"
assert_eq "../../../$da" "$(readlink "$R/images/refs/os/debian/a")" "symlink of a nested name"
diff <(cd "$T/store" && find . -type f | sort) <(cd "$R/objects" && find . -type f | sort) >/dev/null ||
	fail "the repository's objects differ from --digest-store's"
check_store "$R/objects"
[ -z "$(find "$R" -name '.tmp-*')" ] || fail "temporaries left in the repository"

expect_exit 0 "$CFSCTL" build --repo "$R" --print-digest "$T/b" b
db=$(cat "$T/out")
assert_eq "../$db" "$(readlink "$R/images/refs/b")" "symlink of a top-level name"
# The same tree again: the same image, one file, the name set again.
expect_exit 0 "$CFSCTL" build --repo "$R" --print-digest "$T/a" again
assert_eq "$da" "$(cat "$T/out")" "digest of a second build of the same tree"
assert_eq 2 "$(find "$R/images" -maxdepth 1 -type f | wc -l)" "images in the repository"

# images: one line per name, then the images no name reaches.
objs() { "$CFSCTL" inspect objects "$1" | wc -l; }
na=$(objs "$T/a.img")
nb=$(objs "$R/images/$db")
sa=$(stat -c %s "$R/images/$da")
sb=$(stat -c %s "$R/images/$db")
expect_exit 0 "$CFSCTL" images --repo "$R"
awk '{print $1, $2, $3, $4}' "$T/out" >"$T/list"
printf '%s\n' "again $da $sa $na" "b $db $sb $nb" "os/debian/a $da $sa $na" >"$T/want"
diff -u "$T/want" "$T/list" || fail "images lists other names, digests, sizes or counts"
expect_exit 0 "$CFSCTL" images --repo "$R" --json
python3 - "$T/out" "$da" "$db" "$sa" "$sb" "$na" "$nb" <<'PY' || fail "images --json"
import json, sys
d = json.load(open(sys.argv[1]))
da, db, sa, sb, na, nb = sys.argv[2:]
assert [(n["name"], n["digest"]) for n in d["names"]] == \
    [("again", da), ("b", db), ("os/debian/a", da)], d["names"]
imgs = {i["digest"]: i for i in d["images"]}
assert set(imgs) == {da, db}, imgs
assert imgs[da]["size"] == int(sa) and imgs[da]["objects"] == int(na), imgs[da]
assert imgs[db]["size"] == int(sb) and imgs[db]["objects"] == int(nb), imgs[db]
assert imgs[da]["names"] == ["again", "os/debian/a"] and imgs[db]["names"] == ["b"], imgs
assert imgs[da]["object_bytes"] > 100000
assert d["broken_names"] == []
PY

# inspect, verify, diff, tui and mount: by name and by digest.
"$CFSCTL" inspect dump "$T/a.img" >"$T/a.dump" || fail "inspect dump"
for what in os/debian/a "$da"; do
	expect_exit 0 "$CFSCTL" inspect dump --repo "$R" "$what"
	cmp -s "$T/a.dump" "$T/out" || fail "inspect dump --repo $what differs"
	expect_exit 0 "$CFSCTL" inspect --repo "$R" --json "$what"
	assert_contains "$T/out" "\"$da\""
	expect_exit 0 "$CFSCTL" inspect ls --repo "$R" "$what" /dir
	assert_contains "$T/out" ' f$'
	expect_exit 0 "$CFSCTL" inspect missing --repo "$R" "$what"
	assert_eq "" "$(cat "$T/out")" "objects missing from the repository"
	expect_exit 0 "$CFSCTL" verify --repo "$R" "$what"
	assert_contains "$T/out" "$na objects in 1 basedir: $na ok"
	assert_contains "$T/out" "image fs-verity digest $da .*as expected"
done
expect_exit 1 "$CFSCTL" diff --repo "$R" os/debian/a "$db"
assert_contains "$T/out" '^\+ /new$'
assert_contains "$T/out" '^- /dir/f$'
expect_exit 0 "$CFSCTL" diff --repo "$R" again "$da"
assert_eq "" "$(cat "$T/out")" "diff of a name and its digest"
expect_exit 2 "$CFSCTL" diff --repo "$R" again nope
assert_contains "$T/err" "^cfsctl: diff: no name 'nope' in repository '$R'$"

# verify --repo checks the image against its name, and its objects.
obj=$(cd "$R/objects" && find . -type f -size +90k | head -n 1)
mv "$R/objects/$obj" "$T/saved"
expect_exit 1 "$CFSCTL" verify --repo "$R" os/debian/a
assert_contains "$T/out" "missing"
expect_exit 0 "$CFSCTL" inspect missing --repo "$R" os/debian/a
assert_eq "${obj#./}" "$(cat "$T/out")" "inspect missing --repo"
mv "$T/saved" "$R/objects/$obj"
cp "$R/images/$db" "$T/saved"
cp "$R/images/$da" "$R/images/$db.new" && mv "$R/images/$db.new" "$R/images/$db"
expect_exit 1 "$CFSCTL" verify --repo "$R" b
assert_contains "$T/out" "the image has fs-verity digest $da .*expected $db"
cp "$T/saved" "$R/images/$db"

# mount (checked up to the measuring, as tests/cli/60-mount.sh does): the
# name's image is the one measured; it has no fs-verity here.
expect_exit 1 "$CFSCTL" mount --repo "$R" --digest auto os/debian/a "$T"
if grep -q "fs-verity is not enabled on the image" "$T/err"; then
	assert_contains "$T/err" "^cfsctl: mount: measuring '$R/images/$da': "
else
	# fs-verity is enabled on the image here: the mount itself failed
	assert_contains "$T/err" "^cfsctl: mount: "
fi
expect_exit 1 "$CFSCTL" mount --repo "$R" nope "$T"
assert_contains "$T/err" "^cfsctl: mount: no name 'nope' in repository '$R'$"
expect_exit 2 "$CFSCTL" mount --repo "$R" --basedir a,b b "$T"

# tui: a name opens its image, with the repository's objects as basedir.
if command -v tmux >/dev/null && locale -a 2>/dev/null | grep -qix 'c\.utf-\?8'; then
	(
		. "$TESTS_DIR/lib/tmux.sh"
		trap 'tm kill-server 2>/dev/null' EXIT # $T is the test's, not this subshell's
		start_shell 100 24
		tui --repo "$R" os/debian/a
		keys j
		wait_for '^/big +2/3$'
		assert_screen "│ object   present in "
		keys v
		wait_for '│ verity   matches \((computed|measured by the kernel)\)$'
		keys q
		wait_for '^EXIT=0$'
	) || exit 1
else
	echo "note: no tmux or C.UTF-8 locale: tui --repo is not checked"
fi
expect_exit 1 "$CFSCTL" tui --repo "$R" nope
assert_contains "$T/err" "^cfsctl: tui: no name 'nope' in repository '$R'$"

# --tag and --remove; a removed name's empty directories go with it.
expect_exit 0 "$CFSCTL" images --repo "$R" --tag rel/stable "$db"
assert_eq "../../$db" "$(readlink "$R/images/refs/rel/stable")" "--tag by digest"
expect_exit 0 "$CFSCTL" images --repo "$R" --tag rel/stable os/debian/a
assert_eq "../../$da" "$(readlink "$R/images/refs/rel/stable")" "--tag by name replaces"
expect_exit 0 "$CFSCTL" images --repo "$R" --remove rel/stable os/debian/a
[ ! -e "$R/images/refs/rel" ] && [ ! -e "$R/images/refs/os" ] ||
	fail "--remove left empty directories of names"
[ -f "$R/images/$da" ] || fail "--remove removed the image"
expect_exit 1 "$CFSCTL" images --repo "$R" --remove rel/stable
assert_contains "$T/err" "no name 'rel/stable' in repository"
expect_exit 1 "$CFSCTL" inspect --repo "$R" os/debian/a
assert_contains "$T/err" "^cfsctl: inspect: no name 'os/debian/a' in repository '$R'$"

# A broken name is reported, and listed as such in JSON.
ln -s "../$(printf '0%.0s' $(seq 64))" "$R/images/refs/dangling"
expect_exit 1 "$CFSCTL" images --repo "$R"
assert_contains "$T/err" "the name 'dangling' in '$R/images/refs': its image is missing"
expect_exit 1 "$CFSCTL" inspect --repo "$R" dangling
assert_contains "$T/err" "points at image 0{64}, which is missing"
expect_exit 1 "$CFSCTL" images --repo "$R" --json
python3 -c 'import json,sys; d = json.load(open(sys.argv[1]))
assert d["broken_names"] == [{"name": "dangling", "problem": "its image is missing"}], d' "$T/out" ||
	fail "broken_names"
rm "$R/images/refs/dangling"

# Bad names and usage errors: exit 2, nothing written.
before=$(cd "$R" && find . | sort)
for bad in "" "/abs" "a//b" "a/" ".hidden" "a/../b" "-dash" "sp ace" "$da"; do
	expect_exit 2 "$CFSCTL" build --repo "$R" -- "$T/a" "$bad"
	assert_contains "$T/err" "is not a valid name"
done
expect_exit 2 "$CFSCTL" build --repo "$R" --digest-store "$T/store" "$T/a" x
assert_contains "$T/err" "--repo and --digest-store exclude each other"
expect_exit 2 "$CFSCTL" build --repo "$R" --repo "$R" "$T/a" x
expect_exit 2 "$CFSCTL" images
assert_contains "$T/err" "--repo DIR is required"
expect_exit 2 "$CFSCTL" images --repo "$R" extra
expect_exit 2 "$CFSCTL" images --repo "$R" --tag onlyone
expect_exit 2 "$CFSCTL" images --repo "$R" --tag 'bad//name' b
expect_exit 2 "$CFSCTL" gc --repo "$R" --basedir "$R/objects"
after=$(cd "$R" && find . | sort)
assert_eq "$before" "$after" "the repository after refused commands"
expect_exit 1 "$CFSCTL" images --repo "$T/nothing"
assert_contains "$T/err" "^cfsctl: images: no repository '$T/nothing'"
mkdir "$T/notrepo"
expect_exit 1 "$CFSCTL" inspect --repo "$T/notrepo" x
assert_contains "$T/err" "'$T/notrepo' is not a repository: it has no objects/ directory"
# A name below a name, and a name over a directory of names.
expect_exit 1 "$CFSCTL" build --repo "$R" "$T/a" b/sub
assert_contains "$T/err" "a part of it is a name, not a directory of names"
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/a" dir/x
expect_exit 1 "$CFSCTL" build --repo "$R" "$T/a" dir
assert_contains "$T/err" "it is a directory of names"
assert_eq "../$db" "$(readlink "$R/images/refs/b")" "b after the refused names"
expect_exit 0 "$CFSCTL" images --help
assert_contains "$T/out" '^Usage: cfsctl images --repo DIR'
# Other directories in the repository are left alone.
mkdir -p "$R/index/xx" "$R/state"
expect_exit 0 "$CFSCTL" images --repo "$R"

# A name replaced atomically: a reader never sees it missing or half made.
expect_exit 0 "$CFSCTL" images --repo "$R" --tag cur "$da"
rounds=100
[ -n "${CFSCTL_REAL:-}" ] && rounds=15 # under valgrind, a run takes a second
(
	for i in $(seq 1 $rounds); do
		"$CFSCTL" images --repo "$R" --tag cur "$db" && "$CFSCTL" images --repo "$R" --tag cur "$da" ||
			exit 1
	done
) &
writer=$!
bad=0 reads=0
while kill -0 "$writer" 2>/dev/null; do
	t=$(readlink "$R/images/refs/cur")
	case $t in "../$da" | "../$db") ;; *) bad=$((bad + 1)) ;; esac
	reads=$((reads + 1))
done
wait "$writer" || fail "setting the name in a loop failed"
[ "$bad" -eq 0 ] || fail "$bad of $reads reads saw the name missing or wrong"
[ "$reads" -ge 20 ] || fail "only $reads reads during the loop: nothing was tested"
expect_exit 0 "$CFSCTL" inspect --repo "$R" cur
[ -z "$(find "$R" -name '.tmp-*')" ] || fail "temporaries left by the name loop"
echo "ok: $reads reads of a name replaced $((2 * rounds)) times"
