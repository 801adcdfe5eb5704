#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What a partial pull believes of the sha256 index without reading the
# object (docs/partial-pulls.md): both directions of the index agree and
# the object's inode (number, size, ctime) is the one read when it was
# indexed. B after A then reads none of the objects it reuses, and its
# image is the full pull's. Not believed, so read and hashed: an object
# changed in place (fetched again: the image is still the full pull's), an
# object whose ctime changed but not its content (reused, and the index
# learns it again), and entries of the older form without the inode's
# signature (reused, and upgraded). A planted entry is tests/cli/34's.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"
command -v strace >/dev/null || skip "strace is not installed (make deps)"

push_images
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/want-store" "$REG/t/gzip:B" "$T/want.B"
get_toc B "$T/toc.B"
R=$T/repo

# pull_b NAME: B pulled into the repository under strace as NAME, checked
# to be the full pull's image; $reads: the read() calls on the objects
# there were before, but for those of up to 64 bytes (an EROFS image
# inlines them, so the layer's fragment carries their content) and those
# B writes (the index reads them for their sha256)
pull_b() {
	find "$R/objects" -type f -size +64c -printf '%p>\n' > "$T/before"
	# LeakSanitizer cannot work under strace (the other pulls check leaks).
	expect_exit 0 env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -f -y -e trace=read -o "$T/strace" \
		"$CFSCTL" pull --plain-http --json --repo "$R" "$REG/t/chunked:B" "$1"
	cmp -s "$T/want.B" "$R/images/$(readlink "$R/images/refs/$1" | sed 's|.*/||')" ||
		fail "$1: the partial pull of B differs from the full pull of the same tree"
	grep -q '"bytes_reused":[1-9]' "$T/out" || fail "$1: B reused nothing: $(cat "$T/out")"
	reads=$(grep -F -c -f "$T/before" "$T/strace")
}
fetched() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes_fetched"])' "$T/out"; }
# object_of SHA256: the path of the object the index names for it
object_of() {
	local d
	d=$(python3 "$TESTS_DIR/lib/index.py" dump "$R" | awk -v s="$1" '$1 == s { print $2 }')
	[ -n "$d" ] || fail "no index entry for sha256:$1"
	echo "$R/objects/${d:0:2}/${d:2}"
}
# sha_of NAME: the sha256 the TOC of B gives the file NAME
sha_of() {
	python3 -c 'import json,sys; print([e["digest"][7:] for e in json.load(open(sys.argv[1]))["entries"] if e["name"] == sys.argv[2] and e["type"] == "reg"][0])' "$T/toc.B" "$1"
}

expect_exit 0 "$CFSCTL" pull --plain-http --repo "$R" "$REG/t/chunked:A" a
pull_b b1
[ "$reads" -eq 0 ] || fail "B read $reads times from the objects it reused, which the index vouches for"
# B again: every file is in the store now, only the TOC is fetched
pull_b b1-again
[ "$reads" -eq 0 ] || fail "B again read $reads times from the objects it reused"
base=$(fetched)

# An object changed in place, its size kept: the index no longer vouches,
# the object is read, found wrong, and its file fetched.
big=$(sha_of ./usr/lib/big)
obj=$(object_of "$big")
cp -p "$obj" "$T/saved"
printf 'changed' | dd of="$obj" bs=1 seek=100 conv=notrunc status=none
pull_b b2
[ "$(fetched)" -gt $((base + 100000)) ] || fail "the changed object's file was not fetched: $(cat "$T/out")"
cat "$T/saved" > "$obj"

# A ctime changed, the content not: read, found right, reused, and the
# index learns the inode anew, so the next pull reads nothing again.
f=$(python3 -c 'import json,sys; print([e["name"] for e in json.load(open(sys.argv[1]))["entries"] if e["type"] == "reg" and e.get("size", 0) >= 20000 and e["name"] != "./usr/lib/big"][0])' "$T/toc.B")
touch -h "$(object_of "$(sha_of "$f")")"
chmod 0444 "$(object_of "$(sha_of "$f")")"
pull_b b3
[ "$reads" -gt 0 ] || fail "an object whose ctime changed was believed without being read"
[ "$(fetched)" -eq "$base" ] || fail "an object whose ctime changed but not its content was fetched again: $(cat "$T/out")"
pull_b b4
[ "$reads" -eq 0 ] || fail "the index did not learn the object again: B read $reads times"

# Entries of the older form (no signature): read, and upgraded.
python3 "$TESTS_DIR/lib/index.py" unsign "$R"
pull_b b5
[ "$reads" -gt 0 ] || fail "entries without a signature were believed without reading"
[ "$(fetched)" -eq "$base" ] || fail "entries without a signature made B fetch again: $(cat "$T/out")"
pull_b b6
[ "$reads" -eq 0 ] || fail "the older entries were not upgraded: B read $reads times"
# every file of B with an object (over 64 bytes) has a signed entry again
python3 "$TESTS_DIR/lib/index.py" dump "$R" > "$T/dump"
python3 -c '
import json, sys
signed = {l.split()[0] for l in open(sys.argv[2]) if l.split()[2] != "-"}
b = {e["digest"][7:] for e in json.load(open(sys.argv[1]))["entries"] if e["type"] == "reg" and e.get("size", 0) > 64}
sys.exit("%d of B'"'"'s files have no signed entry" % len(b - signed) if b - signed else 0)' "$T/toc.B" "$T/dump" ||
	fail "the older entries were not all signed anew"
echo ok
