#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Malformed dumpfiles: each tests/data/bad-dumps/NAME.dump must be rejected
# with exit 1, no image, and an error "NAME.dump:LINE: reason" containing
# the text of NAME.err.
. "$(dirname "$0")/../lib/common.sh"

dir=$TOP/tests/data/bad-dumps
n=0
for dump in "$dir"/*.dump; do
	name=$(basename "$dump" .dump)
	[ -f "$dir/$name.err" ] || fail "$name.dump has no $name.err"
	want="$name.dump$(cat "$dir/$name.err")"
	expect_exit 1 "$CFSCTL" build --from-dump "$dump" "$T/$name.img"
	grep -qF -- "$want" "$T/err" || { cat "$T/err"; fail "$name: expected '$want'"; }
	[ ! -e "$T/$name.img" ] || fail "$name: image written"
	n=$((n + 1))
done
[ "$n" -ge 30 ] || fail "only $n bad dumps"

# From stdin the messages name "stdin".
expect_exit 1 "$CFSCTL" build --from-dump - "$T/stdin.img" <"$dir/duplicate.dump"
assert_contains "$T/err" "^cfsctl: stdin:3: duplicate PATH '/a'"
[ -z "$(ls -A "$T" | grep -v '^out$\|^err$')" ] || fail "files left: $(ls -A "$T")"
echo "ok ($n dumps)"
