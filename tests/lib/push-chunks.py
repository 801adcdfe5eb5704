#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# push-chunks.py BLOB TREE [OLD_BLOB]: checks the chunks of a zstd:chunked
# layer that cfsctl push wrote of the directory TREE, for
# tests/cli/2506-push-chunks.sh. It reads the footer and the TOC (zstd -dc
# decompresses), and for each regular file with content computes, from the
# file in TREE, the chunks containers/storage's compressor cuts: its
# rolling checksum (pkg/chunked/compressor/rollsum.go: bup's sums over a
# 64-byte window, a cut after a byte at which s2's 16 low bits are set)
# and its holes finder (a run of at least 1024 zeros is a chunk of type
# "zeros", its zeros rolled in too, every one of them). The TOC must list
# exactly those chunks (chunkOffset, chunkSize, chunkType, and chunkDigest
# the sha256 of the chunk's bytes; one chunk: no chunk members at all), and
# each chunk's frame, from its offset to the next chunk's (or the file's
# endOffset), must decompress to the chunk's bytes.
# With OLD_BLOB, the same layer of an earlier version: prints, for each file
# in both, the chunk digests of the new one the old one lacks.
# Prints "files N chunks C zeros Z" (chunks of files cut in several).
# Python 3 standard library and the zstd command only.
import hashlib, json, struct, subprocess, sys

M = 0xFFFFFFFF


def unzstd(data):
    return subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE, check=True).stdout


def toc_of(blob):
    off, clen, ulen, typ = struct.unpack("<4Q", blob[-64:-32])
    assert blob[-8:] == b"GNUlInUx", "no zstd:chunked footer"
    text = unzstd(blob[off:off + clen])
    assert len(text) == ulen, "the TOC has not its size"
    return json.loads(text)


def cuts(data):
    """The chunks (offset, size, zeros) the compressor makes of data."""
    s1, s2, win, wofs = 64 * 31, 64 * 63 * 31, [0] * 64, 0
    out, start, pos, n = [], 0, 0, len(data)

    def roll(c):
        nonlocal s1, s2, wofs
        drop = win[wofs]
        s1 = (s1 + c - drop) & M
        s2 = (s2 + s1 - 64 * (drop + 31)) & M
        win[wofs] = c
        wofs = (wofs + 1) & 63

    while pos < n:
        if data[pos] == 0:
            end = pos
            while end < n and data[end] == 0:
                end += 1
            if end - pos >= 1024:
                if pos > start:
                    out.append((start, pos - start, False))
                for _ in range(end - pos):
                    roll(0)
                out.append((pos, end - pos, True))
                pos = start = end
                continue
        roll(data[pos])
        pos += 1
        if s2 & 0xFFFF == 0xFFFF:
            out.append((start, pos - start, False))
            start = pos
    if pos > start:
        out.append((start, pos - start, False))
    return out


def files_of(toc):
    """name -> [main entry, chunk entries...] of the regular files with content."""
    files, last = {}, None
    for e in toc["entries"]:
        if e["type"] == "chunk":
            assert last and e["name"] == last, f"a chunk of '{e['name']}' after another file"
            files[last].append(e)
        elif e["type"] == "reg" and e.get("size"):
            last = e["name"]
            files[last] = [e]
        else:
            last = None
    return files


def main():
    blob = open(sys.argv[1], "rb").read()
    tree = sys.argv[2]
    files = files_of(toc_of(blob))
    n_chunks = n_zeros = 0
    for name, ents in files.items():
        data = open(f"{tree}/{name}", "rb").read()
        want = cuts(data)
        main_e = ents[0]
        if len(want) == 1:
            assert len(ents) == 1, f"{name}: one chunk, and chunk entries"
            assert not any(k.startswith("chunk") for k in main_e), f"{name}: chunk members on a file of one chunk"
            continue
        assert len(ents) == len(want), f"{name}: {len(ents)} chunks in the TOC, {len(want)} cut by the compressor's rules"
        for i, (e, (off, size, zeros)) in enumerate(zip(ents, want)):
            assert e.get("chunkOffset", 0) == off, f"{name}: chunk {i} at {e.get('chunkOffset', 0)}, not {off}"
            assert e["chunkSize"] == size, f"{name}: chunk {i} of {e['chunkSize']} bytes, not {size}"
            assert (e.get("chunkType") == "zeros") == zeros, f"{name}: chunk {i}: chunkType {e.get('chunkType')}"
            part = data[off:off + size]
            assert e["chunkDigest"] == "sha256:" + hashlib.sha256(part).hexdigest(), f"{name}: chunk {i}: chunkDigest"
            end = ents[i + 1]["offset"] if i + 1 < len(ents) else main_e["endOffset"]
            assert unzstd(blob[e["offset"]:end]) == part, f"{name}: chunk {i}: its frame holds other bytes"
            n_chunks += 1
            n_zeros += zeros
    if len(sys.argv) > 3:
        old = files_of(toc_of(open(sys.argv[3], "rb").read()))
        for name, ents in files.items():
            if name in old:
                have = {e.get("chunkDigest", e.get("digest")) for e in old[name]}
                new = [e.get("chunkOffset", 0) for e in ents if e.get("chunkDigest", e.get("digest")) not in have]
                print(f"new {name} {' '.join(map(str, new))}")
    print(f"files {len(files)} chunks {n_chunks} zeros {n_zeros}")


main()
