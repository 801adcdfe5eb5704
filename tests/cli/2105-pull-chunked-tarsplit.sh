#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# zstd:chunked layers with a tar-split (tests/lib/chunked-tarsplit.py adds one
# to skopeo 1.9's images, as containers/storage writes it): a partial pull
# rebuilds the layer's tar stream from the tar-split's segments and the
# files' content, those reused from the store and those fetched, and it
# must have the config's diff_id. A and then B pass, each image the full
# pull's of the same tree. Each lie fails the pull with exit 1, a message
# naming the layer, no name set and no new object: a changed tar header, a
# file entry naming another file or one file twice, a wrong checksum
# annotation, a wrong diff_id. --full-pull checks the same diff_id.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"

push_images
for v in A B; do
	python3 "$TESTS_DIR/lib/chunked-tarsplit.py" "$REG" t/chunked:$v t/ts:$v good ||
		fail "adding a tar-split to $v"
	expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/want-store" "$REG/t/gzip:$v" "$T/want.$v"
done
R=$T/repo
image_of() { echo "$R/images/$(readlink "$R/images/refs/$1" | sed 's|.*/||')"; }

expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$R" "$REG/t/ts:A" a
grep -q '"layers_partial":1' "$T/out" || fail "A with a tar-split was not pulled in part: $(cat "$T/out")"
cmp -s "$T/want.A" "$(image_of a)" || fail "A with a tar-split: not the full pull's image"
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$R" "$REG/t/ts:B" b
grep -q '"bytes_reused":[1-9]' "$T/out" || fail "B with a tar-split reused nothing: $(cat "$T/out")"
cmp -s "$T/want.B" "$(image_of b)" || fail "B with a tar-split: not the full pull's image"
expect_exit 0 "$CFSCTL" pull --plain-http --full-pull --digest-store="$T/full-store" "$REG/t/ts:B" "$T/full.B"
cmp -s "$T/want.B" "$T/full.B" || fail "B with a tar-split, pulled whole: not the image of the gzip B"

# Each lie, into a copy of the repository that holds A: B's new files are
# fetched and checked, and the check of the whole stream must refuse.
for mode in bad-segment bad-name twice bad-sum bad-diffid; do
	python3 "$TESTS_DIR/lib/chunked-tarsplit.py" "$REG" t/chunked:B t/ts:$mode $mode ||
		fail "writing the image $mode"
	rm -rf "$T/r2"
	mkdir -p "$T/r2"
	"$CFSCTL" pull --plain-http --repo "$T/r2" "$REG/t/ts:A" a > /dev/null 2>&1 || fail "$mode: pulling A"
	(cd "$T/r2/objects" && find . -type f | sort) > "$T/objects.before"
	expect_exit 1 "$CFSCTL" pull --plain-http --repo "$T/r2" "$REG/t/ts:$mode" b
	case $mode in
	bad-segment | bad-diffid) want="the tar stream its tar-split rebuilds has the digest sha256:[0-9a-f]*, not the config's diff_id" ;;
	bad-name) want="the tar-split has the file '.*' of [0-9]* bytes, which the TOC has of another size" ;;
	twice) want="the tar-split has the file '.*' of [0-9]* bytes, which the TOC has once only" ;;
	bad-sum) want="the tar-split has the digest sha256:[0-9a-f]*, not its annotation's" ;;
	esac
	grep -q "t/ts@sha256:[0-9a-f]*': $want" "$T/err" || fail "$mode: no '$want' naming the layer: $(cat "$T/err")"
	[ ! -e "$T/r2/images/refs/b" ] || fail "$mode: the name b was set"
	(cd "$T/r2/objects" && find . -type f | sort) > "$T/objects.after"
	cmp -s "$T/objects.before" "$T/objects.after" || fail "$mode: new objects in the store: $(diff "$T/objects.before" "$T/objects.after" | head -n 3)"
done
echo ok
