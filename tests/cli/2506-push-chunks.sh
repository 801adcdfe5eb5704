#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The chunks of a zstd:chunked layer that cfsctl push writes: a large file
# is cut where containers/storage's rolling checksum cuts it, a run of 1 KiB
# of zeros or more is a "zeros" chunk, a run shorter is data, a file of one
# chunk has no chunk entries; each chunk's digest is its bytes' and its
# frames hold them (tests/lib/push-chunks.py computes the cuts itself from
# the files, as compressor.go and rollsum.go make them). skopeo 1.9 copies
# the image, GNU tar unpacks the layer to the tree, and cfsctl pull, in part
# and whole, gives byte for byte the image cfsctl build makes of the tree.
# Version B changes 4 KiB in the middle of the large file: its chunks
# before the change and after it (from 64 bytes past, the window) are A's,
# so only the chunks the change touches are new; and a pull of B after A
# fetches that file and nothing else of the layer.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

# A tree whose bytes are the same on every run (random.Random(seed)).
mkdir -p "$T/A"
python3 - "$T/A" <<'EOF' || fail "making the tree"
import random, sys
d = sys.argv[1]
r = random.Random(43)
rb = lambda n: r.randbytes(n)
open(f"{d}/big", "wb").write(rb(1 << 20))
# data, a hole, data, a short run of zeros (data), data, a hole at the end
open(f"{d}/holes", "wb").write(rb(100000) + bytes(5000) + rb(100000) + bytes(700) +
                               rb(50000) + bytes(2000))
open(f"{d}/zeros", "wb").write(bytes(3000))  # one chunk, of zeros
open(f"{d}/small", "wb").write(b"hello\n")
EOF
find "$T/A" -exec touch -h -d '2024-05-06 07:08:09' {} +
cp -a "$T/A" "$T/B"
python3 - "$T/B/big" <<'EOF' || fail "changing the large file"
import random, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(500000)
    f.write(random.Random(44).randbytes(4096))
EOF
touch -d '2024-05-06 07:08:09' "$T/B/big"

echo '{"default": [{"type": "insecureAcceptAnything"}]}' >"$T/policy.json"
for v in A B; do
	expect_exit 0 "$CFSCTL" push --plain-http --json "$T/$v" "$REG/t/chunks:$v"
	layer=$(manifest t/chunks $v | python3 -c 'import json,sys; print(json.load(sys.stdin)["layers"][0]["digest"])')
	blob t/chunks "$layer" >"$T/$v.blob" || fail "$v: fetching the layer"
	python3 "$TESTS_DIR/lib/push-chunks.py" "$T/$v.blob" "$T/$v" >"$T/$v.chunks" 2>&1 ||
		{ cat "$T/$v.chunks"; fail "$v: the layer's chunks are not the compressor's"; }
	# big: some 16 chunks of 64 KiB; holes: 2 zeros chunks and 3 of data
	read -r _ files _ chunks _ zeros <"$T/$v.chunks"
	echo "$v: $files files, $chunks chunks in files cut in several, $zeros of zeros"
	assert_eq 4 "$files" "$v: files with content in the TOC"
	[ "$chunks" -ge 10 ] || fail "$v: $chunks chunks: the large file is not cut"
	assert_eq 2 "$zeros" "$v: zeros chunks (the 700 zeros are data, the 3000-byte file one chunk)"

	# the peers read it
	rm -rf "$T/lay" "$T/untar"
	skopeo --policy "$T/policy.json" copy -q --src-tls-verify=false "docker://$REG/t/chunks:$v" \
		"oci:$T/lay:$v" >"$T/copy.out" 2>&1 || { cat "$T/copy.out"; fail "$v: skopeo copy"; }
	[ -f "$T/lay/blobs/sha256/${layer#sha256:}" ] || fail "$v: skopeo copy has not the layer"
	mkdir "$T/untar"
	zstd -dcq <"$T/$v.blob" | tar -x --numeric-owner -p -f - -C "$T/untar" 2>"$T/tar.err" ||
		{ cat "$T/tar.err"; fail "$v: GNU tar cannot unpack the layer"; }
	for f in big holes zeros small; do
		cmp -s "$T/$v/$f" "$T/untar/$f" || fail "$v: GNU tar unpacks another '$f'"
	done

	# cfsctl pull, in part and whole: build's image
	"$CFSCTL" build "$T/$v" "$T/want.$v" >/dev/null 2>&1 || fail "$v: build"
	rm -rf "$T/store"
	expect_exit 0 "$CFSCTL" pull --plain-http --json --digest-store "$T/store" "$REG/t/chunks:$v" "$T/pulled"
	grep -q '"layers_partial":1' "$T/out" || fail "$v: not pulled in part: $(cat "$T/out")"
	cmp -s "$T/want.$v" "$T/pulled" || fail "$v: a partial pull gives another image than build"
	expect_exit 0 "$CFSCTL" pull --plain-http --full-pull "$REG/t/chunks:$v" "$T/pulled"
	cmp -s "$T/want.$v" "$T/pulled" || fail "$v: a full pull gives another image than build"
done

# B's new chunks: those the 4096 changed bytes at 500000 touch, or the 63
# after them (the window): the chunks of big at or after 500000 and before
# 504159; every other chunk of B is one of A's.
python3 "$TESTS_DIR/lib/push-chunks.py" "$T/B.blob" "$T/B" "$T/A.blob" >"$T/new" 2>&1 ||
	{ cat "$T/new"; fail "comparing B's chunks with A's"; }
assert_eq "" "$(grep '^new \./\(holes\|zeros\|small\) .' "$T/new")" "B's new chunks in unchanged files"
python3 - "$T/new" "$T/B.blob" <<'EOF' || fail "B's new chunks of big: $(cat "$T/new")"
import json, struct, subprocess, sys
new = [int(x) for l in open(sys.argv[1]) if l.startswith("new ./big ") for x in l.split()[2:]]
assert new, "no new chunk in the changed file"
blob = open(sys.argv[2], "rb").read()
off, clen = struct.unpack("<2Q", blob[-64:-48])
toc = json.loads(subprocess.run(["zstd", "-dcq"], input=blob[off:off + clen],
                                stdout=subprocess.PIPE, check=True).stdout)
ents = [e for e in toc["entries"] if e["name"] == "./big"]
starts = [e.get("chunkOffset", 0) for e in ents]
ends = starts[1:] + [ents[0]["size"]]
touched = [s for s, e in zip(starts, ends) if e > 500000 and s < 500000 + 4096 + 63]
assert sorted(new) == touched, (new, touched)
print(f"B: {len(new)} of {len(ents)} chunks of big are new, at {new}")
EOF

# A pull of B after A fetches the changed file's frames, and no other file.
rm -rf "$T/repo"
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/chunks:A" a
log0=$(stat -c %s "$T/reg/log")
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$REG/t/chunks:B" b
python3 - "$T/out" "$T/B.blob" <<'EOF' || fail "the pull of B after A: $(cat "$T/out")"
import json, struct, subprocess, sys
j = json.load(open(sys.argv[1]))
blob = open(sys.argv[2], "rb").read()
off, clen = struct.unpack("<2Q", blob[-64:-48])
ts_len = struct.unpack("<Q", blob[-64 + 40:-64 + 48])[0]
toc = json.loads(subprocess.run(["zstd", "-dcq"], input=blob[off:off + clen],
                                stdout=subprocess.PIPE, check=True).stdout)
big = next(e for e in toc["entries"] if e["name"] == "./big")
frames = big["endOffset"] - big["offset"]
# the file's frames, the TOC, the tar-split, and room for the ranges' gaps
limit = frames + clen + ts_len + 4096
assert j["layers_partial"] == 1, j
assert frames < j["bytes_fetched"] <= limit, (j["bytes_fetched"], frames, limit)
print(f"B after A: fetched {j['bytes_fetched']} bytes; big's frames {frames}, limit {limit}")
EOF
cmp -s "$T/want.B" "$T/repo/images/$(readlink "$T/repo/images/refs/b" | sed 's|.*/||')" ||
	fail "the pull of B after A gives another image than build"
echo ok
