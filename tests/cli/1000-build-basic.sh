#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl build: help and usage errors, a build of examples/tree, --print-digest
# against the fsverity tool, and no image (nor temporary file) after a failure.
. "$(dirname "$0")/../lib/common.sh"

expect_exit 0 "$CFSCTL" build --help
assert_contains "$T/out" '^Usage: cfsctl build \[OPTIONS\] SOURCE IMAGE'
for opt in --from-dump --digest-store --require-verity --print-digest --use-epoch \
	--skip-xattrs --skip-devices --threads; do
	assert_contains "$T/out" "^  $opt"
done

expect_exit 2 "$CFSCTL" build
assert_contains "$T/err" '^cfsctl: build: expected SOURCE and IMAGE'
expect_exit 2 "$CFSCTL" build --no-such-option "$TOP/examples/tree" "$T/x.img"
expect_exit 2 "$CFSCTL" build --threads=0 "$TOP/examples/tree" "$T/x.img"
expect_exit 2 "$CFSCTL" build --require-verity "$TOP/examples/tree" "$T/x.img"
[ ! -e "$T/x.img" ] || fail "usage error left an image"

expect_exit 0 "$CFSCTL" build --print-digest "$TOP/examples/tree" "$T/ex.img"
[ -s "$T/ex.img" ] || fail "no image written"
want=$(fsverity digest "$T/ex.img" | cut -d' ' -f1)
assert_eq "$want" "sha256:$(cat "$T/out")" "--print-digest"
[ "$(wc -l <"$T/out")" -eq 1 ] || fail "--print-digest printed more than the digest"
assert_eq "$(od -An -tx1 -N8 "$T/ex.img" | tr -d ' ')" "010000009a6278c0" "header version+magic"

# Without --print-digest nothing goes to stdout.
expect_exit 0 "$CFSCTL" build "$TOP/examples/tree" "$T/ex2.img"
[ ! -s "$T/out" ] || fail "build printed to stdout"
[ ! -s "$T/err" ] || fail "build printed to stderr, which is no terminal"

# On a terminal, a progress line counts the files hashed, then is erased.
if command -v script >/dev/null; then
	script -qec "'$CFSCTL' build '$TOP/examples/tree' '$T/tty.img'" /dev/null >"$T/tty" ||
		fail "build on a terminal failed"
	assert_contains "$T/tty" 'build: hashing files: 5/5 \(100%\)'
	cmp "$T/ex.img" "$T/tty.img" || fail "build on a terminal gives another image"
fi
cmp "$T/ex.img" "$T/ex2.img" || fail "same source, different image"

# A failed build leaves nothing at IMAGE and no temporary file.
mkdir "$T/out-dir"
expect_exit 1 "$CFSCTL" build "$T/does-not-exist" "$T/out-dir/img"
assert_contains "$T/err" "^cfsctl: .*'$T/does-not-exist'"
[ -z "$(ls -A "$T/out-dir")" ] || fail "failed build left $(ls -A "$T/out-dir")"
expect_exit 1 "$CFSCTL" build "$TOP/examples/tree" "$T/no-such-dir/img"
assert_contains "$T/err" "^cfsctl: .*no-such-dir"

# A full disk is an error (if /dev/full exists, stdout there fails).
if [ -w /dev/full ]; then
	"$CFSCTL" build --print-digest "$TOP/examples/tree" "$T/full.img" >/dev/full 2>"$T/err"
	[ $? -eq 1 ] || fail "write error on stdout not reported"
fi
echo "ok"
