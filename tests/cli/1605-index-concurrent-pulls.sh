#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Concurrent pulls into one repository's sha256 index: in rounds, two
# zstd:chunked images are pulled at once from a docker-registry on
# 127.0.0.1 (pushed there by cfsctl push), sharing a directory with each
# other and one with the round before, so each pull looks files up in the
# index (a partial pull) while the other appends to it and merges its log.
# No entry is lost or torn, every entry names an object of its sha256,
# every image verifies, and the files the index had are not fetched again.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v python3 >/dev/null || skip "needs python3 (tests/lib/index.py)"
umask 022

R=$T/repo
IX=(python3 "$TESTS_DIR/lib/index.py")
# skipped FILE: bytes_skipped of pull --json's FILE
skipped() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bytes_skipped"])' "$1"; }
start_registry reg
for round in 1 2 3; do
	"${IX[@]}" tree "$T/a$round" 700 "a$round"
	"${IX[@]}" tree "$T/b$round" $((400 + 100 * round)) "b$round"
	cp -r "$T/a$round/d00" "$T/b$round/shared"
	[ "$round" -gt 1 ] && cp -r "$T/a$((round - 1))/d01" "$T/a$round/before"
	for x in a b; do
		expect_exit 0 "$CFSCTL" push --plain-http "$T/$x$round" "$REG/t/$x:r$round"
	done
done
for round in 1 2 3; do
	for x in a b; do
		"$CFSCTL" pull --plain-http --repo "$R" --json "$REG/t/$x:r$round" "$x$round" \
			> "$T/$x.json" 2> "$T/$x.err" &
		eval "p$x=\$!"
	done
	wait "$pa" || fail "round $round: the pull of a failed: $(cat "$T/a.err")"
	wait "$pb" || fail "round $round: the pull of b failed: $(cat "$T/b.err")"
	"${IX[@]}" count "$R" > "$T/c" || fail "round $round: the index cannot be read"
	grep -q ' bad 0$' "$T/c" || fail "round $round: torn entries: $(cat "$T/c")"
	"${IX[@]}" verify "$R" > "$T/v"
	read -r _ entries _ objects _ unindexed _ wrong < "$T/v"
	[ "$entries" = "$objects" ] && [ "$unindexed" = 0 ] && [ "$wrong" = 0 ] ||
		fail "round $round: the index after two pulls at once: $(cat "$T/v")"
	for x in a b; do
		expect_exit 0 "$CFSCTL" verify --repo "$R" "$x$round"
	done
	if [ "$round" -gt 1 ]; then
		# a's files of the round before were in the index: fewer bytes
		# fetched than a pull of a into an empty repository fetches
		expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/alone$round" --json \
			"$REG/t/a:r$round" a
		alone=$(skipped "$T/out") && shared=$(skipped "$T/a.json") ||
			fail "round $round: no bytes_skipped in $(cat "$T/a.json")"
		[ "$shared" -gt "$alone" ] ||
			fail "round $round: a skipped $shared bytes, as many as into an empty repository ($alone)"
	fi
done
[ -z "$(find "$R/index" -name '*.tmp')" ] || fail "a merge left its temporary"
echo ok
