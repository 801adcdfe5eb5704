# SPDX-License-Identifier: GPL-2.0 OR MIT
# index.py CMD REPO ...: read and write a repository's sha256 index
# (lib/store/index.c) as the tests need, with no help from cfsctl:
#   dump REPO                    one line per entry, newest of each sha256:
#                                "<sha256 hex> <digest hex> <signature hex or ->"
#   put REPO SHA256 DIGEST [SIG] append an entry to the log (SIG in hex; none: unsigned)
#   unsign REPO                  append every entry again without its signature
#   legacy REPO                  turn the index into the earlier form, a pair of
#                                symlinks per entry, and remove its files
#   count REPO                   the entries in the table and in the log, and those
#                                whose check fails: "table N log N bad N"
#   verify REPO                  the newest entries against the objects: "entries N
#                                objects N unindexed N wrong N" (unindexed: objects
#                                of more than 64 bytes without an entry; wrong: entries
#                                whose object is there with another sha256)
#   tree DIR N SEED              a source tree: N files of 100-300 bytes, all
#                                different, in 20 directories (no REPO)
import base64, hashlib, os, struct, sys

M = (1 << 64) - 1
ENT = 80


def mix(h):
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & M
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & M
    return h ^ (h >> 31)


def check(e):
    h = 0x636673696E646578
    for i in range(0, 72, 8):
        h = (mix(h ^ struct.unpack_from("<Q", e, i)[0]) + 0x9E3779B97F4A7C15) & M
    return h


def entry(sha, digest, sig):
    e = sha + digest + sig
    return e + struct.pack("<Q", check(e))


def ok(e):
    return struct.unpack_from("<Q", e, 72)[0] == check(e[:72])


def entries(repo):
    """(table entries, log entries, bad ones): entries as (sha, digest, sig)."""
    table, log, bad = [], [], 0
    try:
        t = open(os.path.join(repo, "index", "table"), "rb").read()
        assert t[:8] == b"cfsindex", "not a table"
        n = struct.unpack_from("<Q", t, 16)[0]
        assert len(t) == 32 + 1024 + 84 * n, "table size"
        for i in range(n):
            e = t[1056 + ENT * i : 1056 + ENT * (i + 1)]
            if ok(e):
                table.append((e[:32], e[32:64], e[64:72]))
            else:
                bad += 1
    except FileNotFoundError:
        pass
    try:
        g = open(os.path.join(repo, "index", "log"), "rb").read()
        for i in range(0, len(g) - len(g) % ENT, ENT):
            e = g[i : i + ENT]
            if ok(e):
                log.append((e[:32], e[32:64], e[64:72]))
            else:
                bad += 1
    except FileNotFoundError:
        pass
    return table, log, bad


def newest(repo):
    table, log, _ = entries(repo)
    d = {}
    for sha, digest, sig in table + log:
        d[sha] = (digest, sig)
    return d


def append(repo, es):
    with open(os.path.join(repo, "index", "log"), "ab") as f:
        for e in es:
            f.write(e)


def b64(v):
    return base64.urlsafe_b64encode(v).decode().rstrip("=")


def tree(d, n, seed):
    import random
    rng = random.Random(seed)
    for i in range(n):
        sub = os.path.join(d, "d%02d" % (i % 20))
        os.makedirs(sub, exist_ok=True)
        with open(os.path.join(sub, "f%05d" % i), "wb") as f:
            f.write(("%s %d " % (seed, i)).encode() + rng.randbytes(rng.randint(100, 300)))


def main():
    cmd, repo = sys.argv[1], sys.argv[2]
    if cmd == "tree":
        return tree(repo, int(sys.argv[3]), sys.argv[4])
    if cmd == "dump":
        for sha, (digest, sig) in sorted(newest(repo).items()):
            s = sig.hex() if any(sig) else "-"
            print(sha.hex(), digest.hex(), s)
    elif cmd == "put":
        sig = bytes.fromhex(sys.argv[5]) if len(sys.argv) > 5 else bytes(8)
        append(repo, [entry(bytes.fromhex(sys.argv[3]), bytes.fromhex(sys.argv[4]), sig)])
    elif cmd == "unsign":
        append(repo, [entry(s, d, bytes(8)) for s, (d, _) in sorted(newest(repo).items())])
    elif cmd == "legacy":
        idx = os.path.join(repo, "index")
        for sha, (digest, sig) in newest(repo).items():
            for kind, key, target in (
                ("sha256", sha, b64(digest)),
                ("verity", digest, b64(sha) + ("." + b64(sig) if any(sig) else "")),
            ):
                d = os.path.join(idx, kind, key.hex()[:2])
                os.makedirs(d, exist_ok=True)
                os.symlink(target, os.path.join(d, key.hex()[2:]))
        for f in ("table", "log"):
            try:
                os.unlink(os.path.join(idx, f))
            except FileNotFoundError:
                pass
    elif cmd == "count":
        table, log, bad = entries(repo)
        print("table %d log %d bad %d" % (len(table), len(log), bad))
    elif cmd == "verify":
        d = newest(repo)
        objs = os.path.join(repo, "objects")
        named = {digest for digest, _ in d.values()}
        wrong = 0
        for sha, (digest, _) in d.items():
            h = digest.hex()
            try:
                data = open(os.path.join(objs, h[:2], h[2:]), "rb").read()
            except FileNotFoundError:
                continue
            wrong += hashlib.sha256(data).digest() != sha
        n_obj = unindexed = 0
        for xx in os.listdir(objs):
            if len(xx) != 2 or not os.path.isdir(os.path.join(objs, xx)):
                continue
            for name in os.listdir(os.path.join(objs, xx)):
                if len(name) != 62:
                    continue
                n_obj += 1
                if os.path.getsize(os.path.join(objs, xx, name)) > 64:
                    unindexed += bytes.fromhex(xx + name) not in named
        print("entries %d objects %d unindexed %d wrong %d" % (len(d), n_obj, unindexed, wrong))
    else:
        sys.exit("index.py: unknown command '%s'" % cmd)


main()
