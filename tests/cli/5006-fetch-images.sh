#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What cfsctl fetch asks for, from images built from dumpfiles: an object
# named by two hardlinked paths is fetched once, empty files need none,
# backing files without a digest or outside the digest store layout are
# reported (they cannot be verified or located on a mirror) but count as
# present once something put them there, and images that disagree about
# a backing file are an error.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"

mkdir -p "$T/served"
printf 'hello\n' >"$T/hello"
d=$(fsverity digest --compact "$T/hello")
obj="${d:0:2}/${d:2}"
mkdir -p "$T/served/${d:0:2}"
cp "$T/hello" "$T/served/$obj"
other=$(printf '%064d' 7)

cat >"$T/a.dump" <<EOF
/ 4096 40755 2 0 0 0 0.0 - - -
/e 0 100644 1 0 0 0 0.0 - - -
/f 6 100644 1 0 0 0 0.0 - - $d
/g 6 @100644 1 0 0 0 0.0 /f - -
/h 6 100644 1 0 0 0 0.0 - - $d
/n 5 100644 1 0 0 0 0.0 other/name - -
/w 7 100644 1 0 0 0 0.0 weird/path - $other
EOF
"$CFSCTL" build --from-dump "$T/a.dump" "$T/a.img" || fail "building a.img"

expect_exit 1 "$CFSCTL" fetch --json --basedir "$T/store" --url "file://$T/served" "$T/a.img"
assert_eq 3 "$(json_get "$T/out" objects)" "objects of the image"
assert_eq 1 "$(json_get "$T/out" fetched)" "objects fetched"
assert_eq 2 "$(json_get "$T/out" failed)" "objects that cannot be fetched"
assert_contains "$T/err" "missing object: 'other/name' \(for '/n' in '$T/a.img'\): the image records no digest"
assert_contains "$T/err" "missing object: 'weird/path' \(for '/w' in '$T/a.img'\): its backing path is not the digest store path"
echo "$obj" >"$T/want"
assert_store "$T/store" "$T/want"

# put there by other means, they count as present
mkdir -p "$T/store/other" "$T/store/weird"
printf '12345' >"$T/store/other/name"
printf '1234567' >"$T/store/weird/path"
expect_exit 0 "$CFSCTL" fetch --json --basedir "$T/store" --url "file://$T/served" "$T/a.img"
assert_eq 3 "$(json_get "$T/out" already_present)" "objects present"

# two images that disagree about the size of a backing file
cat >"$T/b.dump" <<EOF
/ 4096 40755 2 0 0 0 0.0 - - -
/other 6 100644 1 0 0 0 0.0 other/name - -
EOF
"$CFSCTL" build --from-dump "$T/b.dump" "$T/b.img" || fail "building b.img"
expect_exit 1 "$CFSCTL" fetch --basedir "$T/store" --url "file://$T/served" "$T/a.img" "$T/b.img"
assert_contains "$T/err" "backing file 'other/name': '/n' \(image 0\) and '/other' \(image 1\) disagree about its size"
assert_contains "$T/err" "^cfsctl: fetch: reading image: '$T/b.img': "
