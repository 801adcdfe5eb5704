#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A repository holding the image of an archive ostree commit (build
# --from-ostree --repo unpacks its contents as REPO/objects/xx/<62
# hex>.file): gc and verify agree that every object is there, gc reports
# nothing left alone and none missing, and once the name is gone gc removes
# those objects like any other. gc refuses an ostree repository's own
# objects directory.
. "$(dirname "$0")/../lib/common.sh"
command -v ostree >/dev/null || skip "no ostree (Debian package ostree)"

mkdir -p "$T/src/d"
echo one >"$T/src/d/f"
head -c 150000 /dev/urandom >"$T/src/big"
A=$T/archive
ostree --repo="$A" init --mode=archive || fail "ostree init"
ostree --repo="$A" commit -b main --tree=dir="$T/src" -s one >/dev/null || fail "commit"
R=$T/repo
expect_exit 0 "$CFSCTL" build --from-ostree --repo "$R" "$A:main" os/main
n=$(find "$R/objects" -name '*.file' | wc -l)
[ "$n" -gt 0 ] || fail "no .file objects in the repository"
expect_exit 0 "$CFSCTL" verify --repo "$R" os/main

expect_exit 0 "$CFSCTL" gc --repo "$R"
! grep -q 'not an object' "$T/err" || fail "gc called the ostree payloads no objects: $(cat "$T/err")"
assert_contains "$T/out" "^missing: 0 objects"
assert_eq "$n" "$(find "$R/objects" -name '*.file' | wc -l)" ".file objects after a gc that keeps them"
expect_exit 0 "$CFSCTL" gc --repo "$R" --json
python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
assert j["missing"] == 0 and j["left_alone"] == 0 and j["kept"] == int(sys.argv[2]), j' \
	"$T/out" "$n" || fail "gc --json: $(cat "$T/out")"
expect_exit 0 "$CFSCTL" verify --repo "$R" os/main

# No name, no image: its objects go.
expect_exit 0 "$CFSCTL" images --repo "$R" --remove os/main
expect_exit 0 "$CFSCTL" gc --repo "$R"
assert_eq 0 "$(find "$R/objects" -type f | wc -l)" "objects left after the last image went"

# An ostree repository's own objects are ostree's to prune.
B=$T/bare
ostree --repo="$B" init --mode=bare-user && ostree --repo="$B" pull-local "$A" main >/dev/null ||
	fail "pull-local"
expect_exit 0 "$CFSCTL" build --from-ostree "$B:main" "$T/b.img"
find "$B/objects" -type f | sort >"$T/before"
expect_exit 1 "$CFSCTL" gc --basedir "$B/objects" "$T/b.img"
assert_contains "$T/err" "'$B/objects' is the objects of an ostree repository, which ostree prunes"
find "$B/objects" -type f | sort | diff "$T/before" - || fail "gc touched an ostree repository"
