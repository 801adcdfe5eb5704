#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull of zstd:chunked images (skopeo 1.9 --dest-compress-format
# zstd:chunked) from a docker-registry on 127.0.0.1, into a repository:
# version A pulled first fetches its files by ranges; version B (A rebuilt
# with files changed, added, removed) then fetches only what the store
# lacks: the bytes the registry's access log says it sent are within
# 1.25 x (the frames of B's new files + its TOC) + 64 KiB, and --json says
# what was fetched, reused and skipped. Each image, both formats, is the
# one a full pull of the gzip image of the same tree makes, byte for byte,
# with the same objects. The newer annotation names work as the older
# ones. A lost index only costs fetching again; an index entry that names
# the wrong object is not believed; cfsctl fetch fills the index too. The
# layers cache gives the same images, of either kind of layer.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"

push_images

# What the partial pulls must give: full pulls of the gzip images.
for v in A B; do
	for f in v1 erofs; do
		expect_exit 0 "$CFSCTL" pull --plain-http --format=$f --digest-store="$T/want-store.$f" \
			"$REG/t/gzip:$v" "$T/want.$v.$f"
	done
done

# A into an empty repository: every file is fetched, by ranges.
log0=$(stat -c %s "$T/reg/log")
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/chunked:A" app/a
sentA=$(sent_since "$log0")
grep -q '"layers_partial":1,"layers_full":0' "$T/out" || fail "A was not pulled in part: $(cat "$T/out")"
grep -q '"bytes_reused":0,' "$T/out" || fail "A reused bytes from an empty store: $(cat "$T/out")"
sizeA=$(layer_json A size)
[ "$sentA" -le "$sizeA" ] || fail "pulling A made the registry send $sentA bytes, more than the layer's $sizeA"
cmp -s "$T/want.A.v1" "$T/repo/images/$(readlink "$T/repo/images/refs/app/a" | sed 's|.*/||')" ||
	fail "the partial pull of A differs from the full pull of the same tree"
[ -n "$(python3 "$TESTS_DIR/lib/index.py" dump "$T/repo")" ] || fail "the pull filled no sha256 index"

# B after A: only what the store lacks.
get_toc A "$T/toc.A"
get_toc B "$T/toc.B"
budget=$(python3 - "$T/toc.A" "$T/toc.B" <<'PY'
import json, sys
a = {e.get("digest") for e in json.load(open(sys.argv[1]))["entries"]}
toc_len = 0
new = 0
for e in json.load(open(sys.argv[2]))["entries"]:
    if e["type"] == "reg" and e.get("size") and e.get("digest") not in a:
        new += e["endOffset"] - e["offset"]
print(new)
PY
) || fail "reading the TOCs"
tocB=$(layer_json B io.containers.zstd-chunked.manifest-position | cut -d: -f2)
sizeB=$(layer_json B size)
[ "$budget" -gt 0 ] || fail "B has no new files to fetch: the test tree is wrong"
log0=$(stat -c %s "$T/reg/log")
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/chunked:B" app/b
sentB=$(sent_since "$log0")
limit=$(((budget + tocB) * 5 / 4 + 65536))
echo "B after A: registry sent $sentB bytes; frames of new files $budget + TOC $tocB; limit $limit; layer $sizeB"
[ "$sentB" -le "$limit" ] || fail "B after A: the registry sent $sentB bytes, more than $limit"
[ "$sentB" -lt $((sizeB / 4)) ] || fail "B after A: $sentB bytes of a $sizeB-byte layer is no partial pull"
python3 - "$T/out" "$sentB" "$sizeB" <<'PY' || fail "--json of B: $(cat "$T/out")"
import json, sys
j = json.load(open(sys.argv[1]))
sent, size = int(sys.argv[2]), int(sys.argv[3])
assert j["layers_partial"] == 1 and j["layers_full"] == 0, j
assert j["bytes_reused"] > 3 << 20, j   # usr/lib/big at least
# what cfsctl received is what the registry sent, bar multipart headers
assert j["bytes_fetched"] <= sent and j["bytes_fetched"] > sent * 0.8, (j, sent)
assert j["bytes_skipped"] == size - j["bytes_fetched"], j
PY
# The layer's line says what was fetched of it, as --json does.
fetchedB=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["bytes_fetched"])' "$T/out")
assert_contains "$T/err" "^pull: layer 1/1 sha256:[0-9a-f]{64}: $sizeB bytes, $fetchedB fetched\$"
img=$(readlink "$T/repo/images/refs/app/b" | sed 's|.*/||')
cmp -s "$T/want.B.v1" "$T/repo/images/$img" || fail "the partial pull of B differs from the full pull"
# Every object the image names is in the repository, each the file it names.
"$CFSCTL" inspect objects "$T/repo/images/$img" | sort >"$T/objs.B"
while read -r o; do
	[ -f "$T/repo/objects/$o" ] || fail "object $o of B is missing from the repository"
done <"$T/objs.B"
for o in $(sed -n '1p;$p' "$T/objs.B"); do
	[ "$(fsverity digest --compact "$T/repo/objects/$o")" = "${o%%/*}${o#*/}" ] ||
		fail "object $o does not have the digest it is named by"
done

# composefs 1.0 images, and a plain digest store (no repository: no
# index, every file fetched): the same as the full pulls.
for v in A B; do
	expect_exit 0 "$CFSCTL" pull --plain-http --format=erofs --repo "$T/repo" \
		"$REG/t/chunked:$v" "erofs/$v"
	cmp -s "$T/want.$v.erofs" "$T/repo/images/$(readlink "$T/repo/images/refs/erofs/$v" | sed 's|.*/||')" ||
		fail "the partial pull of $v (erofs) differs from the full pull"
	for f in v1 erofs; do
		rm -rf "$T/store"
		expect_exit 0 "$CFSCTL" pull --plain-http --format=$f --digest-store="$T/store" \
			"$REG/t/chunked:$v" "$T/plain.img"
		cmp -s "$T/want.$v.$f" "$T/plain.img" || fail "the pull of $v ($f) into a plain store differs"
	done
done
# The objects of a partial pull are those of the full pull of the same image.
rm -rf "$T/store" "$T/fs"
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/store" "$REG/t/chunked:B" "$T/p.img"
expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/fs" "$REG/t/gzip:B" "$T/g.img"
[ "$(store_files "$T/store")" = "$(store_files "$T/fs")" ] ||
	fail "a partial pull stored other objects than the full pull"

# The layers cache keeps what a layer applied, nanoseconds of mtimes
# included, whether the layer came whole or in part.
for src in gzip chunked; do
	for i in 1 2; do
		expect_exit 0 "$CFSCTL" pull --plain-http --digest-store="$T/lcs" --layers-cache="$T/lc.$src" \
			"$REG/t/$src:A" "$T/lc.img"
		cmp -s "$T/want.A.v1" "$T/lc.img" || fail "pull $i of $src:A with a layers cache differs"
	done
done

# The newer annotation names (io.github.containers.zstd-chunked.*).
start_proxy newkeys
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$PROXY/t/chunked:B" app/b-new
grep -q '"layers_partial":1' "$T/out" || fail "the newer annotations were not taken: $(cat "$T/out")"
grep -q '"bytes_reused":[1-9]' "$T/out" || fail "nothing was reused with the newer annotations"
assert_eq "$img" "$(readlink "$T/repo/images/refs/app/b-new" | sed 's|.*/||')" "the image of B by the newer annotations"
stop_proxy

# A lost index: everything is fetched again, and the index comes back.
rm -rf "$T/repo/index"
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/chunked:B" app/b2
grep -q '"bytes_reused":0,' "$T/out" || fail "a pull without an index reused files: $(cat "$T/out")"
assert_eq "$img" "$(readlink "$T/repo/images/refs/app/b2" | sed 's|.*/||')" "the image of B without an index"
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/chunked:B" app/b3
grep -q '"bytes_reused":[1-9]' "$T/out" || fail "the index did not come back: $(cat "$T/out")"

# A stale entry: the index names another object for a file's sha256.
big=$(python3 -c 'import json,sys; print([e["digest"][7:] for e in json.load(open(sys.argv[1]))["entries"] if e["name"] == "./usr/lib/big" and e["type"] == "reg"][0])' "$T/toc.B")
other=$(python3 "$TESTS_DIR/lib/index.py" dump "$T/repo" | awk -v s="$big" '$1 != s { print $2; exit }')
python3 "$TESTS_DIR/lib/index.py" put "$T/repo" "$big" "$other"
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/chunked:B" app/b4
assert_eq "$img" "$(readlink "$T/repo/images/refs/app/b4" | sed 's|.*/||')" "the image of B with a stale index entry"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["bytes_fetched"] > 100000, j' "$T/out" ||
	fail "the file of the stale entry was not fetched: $(cat "$T/out")"

# cfsctl fetch into a repository's objects fills its index too: a pull of
# B after fetching B's objects fetches no file.
start_server objs "$T/repo/objects" ok
mkdir -p "$T/repo2/images"
expect_exit 0 "$CFSCTL" fetch --basedir "$T/repo2/objects" --url "$SERVER_URL" "$T/repo/images/$img"
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo2" "$REG/t/chunked:B" b
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["bytes_fetched"] == int(sys.argv[2]), j' \
	"$T/out" "$tocB" || fail "a pull after a fetch fetched more than the TOC: $(cat "$T/out")"
assert_eq "$img" "$(readlink "$T/repo2/images/refs/b" | sed 's|.*/||')" "the image of B after a fetch"
echo ok
