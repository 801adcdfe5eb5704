#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A store or repository that someone else left open to other users (made
# by hand, or by an older cfs, whose directories were 0755 and objects
# 0644): build, fetch and gc say so once on stderr, naming the fix; gc and
# verify --repo report it in their output (text and JSON). cfs never changes
# a directory it did not make: a digest store's directories and a
# repository's top directory stay as they are. A repository's own folders
# (objects/, images/), which cfs made, are made private by the next write
# into it, which says so; then nothing is reported, and nobody reads
# nothing.
. "$(dirname "$0")/../lib/common.sh"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody "$CFSCTL" --version >/dev/null 2>&1 || skip "cfsctl cannot be run as user nobody here"
chmod 0755 "$T"
umask 022
mkdir -p "$T/tree/etc"
head -c 3000 /dev/urandom >"$T/tree/etc/a"
head -c 4000 /dev/urandom >"$T/tree/etc/b"
head -c 5000 /dev/urandom >"$T/tree/etc/c"

# as an older cfs left them: directories 0755, files 0644
open_up() { find "$1" -type d -exec chmod 0755 {} + && find "$1" -type f -exec chmod 0644 {} +; }
# warned FILE DIR: FILE has the warning for DIR exactly once
warned() {
	local n
	n=$(grep -c "is open to other users, who can read what it holds; make it private: chmod 0700 '$2'" "$1")
	[ "$n" = 1 ] || { cat "$1"; fail "expected one warning naming the fix for '$2' in $1, got $n"; }
}

# a digest store made by hand, 0755, holding objects of an older cfs
mkdir -m 0755 "$T/S"
expect_exit 0 "$CFSCTL" build --digest-store="$T/S" "$T/tree" "$T/a.img"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "a store whose directories are private was warned of"; }
open_up "$T/S"
obj=$(cd "$T/S" && find . -type f | head -n 1)
nobody cat "$T/S/$obj" >/dev/null || fail "the open store's object is not readable: the test shows nothing"
ls -lR "$T/S" >"$T/before"

expect_exit 0 "$CFSCTL" build --digest-store="$T/S" "$T/tree" "$T/b.img"
warned "$T/err" "$T/S"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/S" --url "file://$T/nowhere" "$T/a.img"
warned "$T/err" "$T/S"
expect_exit 0 "$CFSCTL" gc --basedir "$T/S" "$T/a.img"
warned "$T/err" "$T/S"
assert_contains "$T/out" "^open: the store '$T/S' is open to other users, .*chmod 0700 '$T/S'$"
expect_exit 0 "$CFSCTL" gc --json --basedir "$T/S" "$T/a.img"
assert_contains "$T/out" '"open_to_others": true'
ls -lR "$T/S" >"$T/after"
diff -u "$T/before" "$T/after" || fail "a store cfs did not make was changed"

# made private by its owner: nothing said, gc reports it closed
chmod 0700 "$T/S"
expect_exit 0 "$CFSCTL" gc --json --basedir "$T/S" "$T/a.img"
assert_contains "$T/out" '"open_to_others": false'
[ ! -s "$T/err" ] || { cat "$T/err"; fail "a private store was warned of"; }

# a repository an older cfs made: everything open
expect_exit 0 "$CFSCTL" build --repo "$T/R" "$T/tree" app
open_up "$T/R"
img=$(readlink -f "$T/R/images/refs/app")
nobody cat "$img" >/dev/null || fail "the open repository's image is not readable: the test shows nothing"

expect_exit 0 "$CFSCTL" verify --repo "$T/R" app
warned "$T/err" "$T/R"
assert_contains "$T/out" "^warning: store-open: repository '$T/R' is open to other users, .*chmod 0700 '$T/R'$"
expect_exit 0 "$CFSCTL" verify --json --repo "$T/R" app
assert_contains "$T/out" '"kind": "store-open"'
expect_exit 0 "$CFSCTL" gc --repo "$T/R"
warned "$T/err" "$T/R"
assert_contains "$T/out" "^open: the repository '$T/R' is open to other users"
expect_exit 0 "$CFSCTL" gc --json --repo "$T/R"
assert_contains "$T/out" '"open_to_others": true'
assert_eq 755 "$(stat -c %a "$T/R/objects")" "mode of objects/ after gc (a reader, not a writer)"

# its next write makes its folders private, says so once, and leaves REPO as it was
expect_exit 0 "$CFSCTL" build --repo "$T/R" "$T/tree" app2
assert_contains "$T/err" "^cfsctl: build: repository '$T/R' was open to other users: made its objects/, images/, index/ private \(mode 0700\)$"
[ "$(grep -c 'open to other users' "$T/err")" = 1 ] || { cat "$T/err"; fail "said more than once"; }
assert_eq 755 "$(stat -c %a "$T/R")" "mode of the repository's top directory (not cfs's to change)"
for d in objects images index; do
	assert_eq 700 "$(stat -c %a "$T/R/$d")" "mode of $d/ after the write"
done
! nobody cat "$img" >/dev/null 2>&1 || fail "nobody still reads the repository's image"
! nobody cat "$T/R/objects/$obj" >/dev/null 2>&1 || fail "nobody still reads an object"
expect_exit 0 "$CFSCTL" verify --json --repo "$T/R" app
! grep -q store-open "$T/out" || fail "verify still reports the repository open"
[ ! -s "$T/err" ] || { cat "$T/err"; fail "verify still warns"; }
expect_exit 0 "$CFSCTL" gc --json --repo "$T/R"
assert_contains "$T/out" '"open_to_others": false'

# a folder of another user's is not changed: said, not fixed
expect_exit 0 "$CFSCTL" build --repo "$T/R2" "$T/tree" app
open_up "$T/R2"
chown 65534 "$T/R2/images"
expect_exit 0 "$CFSCTL" build --repo "$T/R2" "$T/tree" app2
assert_eq 755 "$(stat -c %a "$T/R2/images")" "mode of another user's images/"
assert_contains "$T/err" "made its objects/, index/ private"
warned "$T/err" "$T/R2"
echo "ok"
