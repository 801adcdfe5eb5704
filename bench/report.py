#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The results of 'make bench' (bench/run.sh), which measures in parts:
#
#   report.py record --top DIR --part P --input I --mode full|quick ...
#       turns one part's figures (bench/run.sh's host.txt, hyperfine's JSON,
#       the guest's sample lines of bench/guest.sh) into
#       bench/results/DATE-KERNEL-PART[-quick].json
#   report.py done --top DIR --part P --mode M --commit C --kernel K
#       exits 0 when a result of that part, mode, commit and kernel exists
#   report.py expected --top DIR --part P --mode M
#       prints the seconds the newest such result took, if there is one
#   report.py render --top DIR
#       builds bench/results/latest.md, the ratio chart latest.png (gnuplot)
#       and the "## The latest figures" section of docs/bench.md (between
#       its bench:begin and bench:end markers) from the newest result of every part, each table
#       saying which run (date, mode, commit) it comes from.
#
# Every time figure is the median of the runs with min and max, and its
# ratio to squashfs (default compression) of the same input, figure and
# cache state: below 1 is faster. The read rows also give each system's
# ratio to "store", the same files read straight from the store (the limit
# of a stacking filesystem), and to "tree", the image's tree as directories
# of hardlinks to the store's files, read with the same walk as a mount:
# a composefs system's ratio to the tree is what it adds to the same walk
# and opens, the tree's to the store what the walk costs. Results of whole runs made before the
# parts existed (DATE-KERNEL.json) are read as one result of each part they
# hold.
import argparse
import datetime
import glob
import json
import os
import statistics
import subprocess
import sys

SYSTEMS = ["cfs", "cfs-v", "cfs1", "squashfs", "squashfs-u", "erofs", "tree", "store"]
LABEL = {"cfs": "composefs", "cfs-v": "composefs (sealed, digest=)", "cfs1": "cfs1 (EROFS + overlayfs)", "squashfs": "squashfs",
         "squashfs-u": "squashfs (uncompr.)", "erofs": "erofs", "tree": "tree (ext4)",
         "store": "store (ext4)"}
# The systems composefs is compared with in "Where composefs is behind".
PEERS = ["cfs1", "squashfs", "erofs"]
BUILDS = ["cfs", "cfs1", "cp-a", "cfs-image", "squashfs", "squashfs-u", "erofs"]
BUILD_TEXT = {"cfs": "cfsctl build --digest-store",
              "cfs1": "cfsctl build --format=erofs --digest-store",
              "cp-a": "cp -a (yardstick of a store build)",
              "cfs-image": "cfsctl build (image only)", "squashfs": "mksquashfs",
              "squashfs-u": "mksquashfs -noI -noD -noF -noX", "erofs": "mkfs.erofs"}
META = ["walk", "ls-lR", "stat-sample", "readdir-widest"]
READ = ["read-all", "seq-4k", "rand-4k"]
METRIC_TEXT = {
    "walk": "walk, lstat every inode",
    "ls-lR": "ls -lR",
    "stat-sample": "lstat 1000 random paths (warm: mean of 20 passes)",
    "readdir-widest": "readdir widest dir",
    "read-all": "read every file",
    "seq-4k": "sequential 4k reads",
    "rand-4k": "random 4k reads",
}
INPUT_TEXT = {"os": "CentOS Stream 9 tree, files cut to {cap} bytes",
              "synth": "synthetic: wide directories, deep paths, one large file"}
PART_ORDER = ["os-build", "os-meta", "os-read", "synth-build", "synth-meta", "synth-read",
              "versions"]


def resdir(top):
    return os.path.join(top, "bench", "results")


def write_atomic(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


def stats(values):
    return statistics.median(values), min(values), max(values)


def parse_guest(path):
    samples, sharing = {}, {}
    with open(path, errors="replace") as f:
        for line in f:
            p = line.split()
            if len(p) == 10 and p[0] == "R":
                _, inp, metric, mode, system, _run, ns, count, nbytes, pg = p
                samples.setdefault((inp, metric, mode, system), []).append(
                    (int(ns), int(count), int(nbytes), int(pg)))
            elif len(p) == 6 and p[0] == "S":
                _, pair, system, _run, ga, gb = p
                sharing.setdefault((pair, system), []).append((int(ga), int(gb)))
    return samples, sharing


def parse_host(path):
    h = {"trees": {}, "sizes": {}, "stores": {}, "stores_cfs1": {}, "widest": {}}
    with open(path) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "tree":
                h["trees"][p[1]] = {"entries": int(p[2]), "bytes": int(p[3])}
            elif p[0] == "size":
                h["sizes"].setdefault(p[1], {})[p[2]] = {"bytes": int(p[3]), "allocated": int(p[4])}
            elif p[0] == "store":
                h["stores"][p[1]] = int(p[2])
            elif p[0] == "store1":
                h["stores_cfs1"][p[1]] = int(p[2])
            elif p[0] == "widest":
                h["widest"][p[1]] = {"dir": p[2], "entries": int(p[3])}
    return h


def result_rows(samples):
    rows = []
    keys = sorted({k[:3] for k in samples}, key=lambda k: (
        list(METRIC_TEXT).index(k[1]) if k[1] in METRIC_TEXT else 99, ["cold", "warm"].index(k[2])))
    for inp, metric, mode in keys:
        base = samples.get((inp, metric, mode, "squashfs"))
        base_med = statistics.median(s[0] for s in base) if base else None
        lim = samples.get((inp, metric, mode, "store"))
        lim_med = statistics.median(s[0] for s in lim) if lim else None
        tree = samples.get((inp, metric, mode, "tree"))
        tree_med = statistics.median(s[0] for s in tree) if tree else None
        for system in SYSTEMS:
            ss = samples.get((inp, metric, mode, system))
            if not ss:
                continue
            med, lo, hi = stats([s[0] for s in ss])
            rows.append({
                "input": inp, "metric": metric, "mode": mode, "system": system,
                "runs": len(ss), "median_ms": med / 1e6, "min_ms": lo / 1e6, "max_ms": hi / 1e6,
                "ratio_to_squashfs": med / base_med if base_med else None,
                "ratio_to_store": med / lim_med if lim_med and system != "store" else None,
                "ratio_to_tree": (med / tree_med if tree_med and system not in ("tree", "store")
                                  else None),
                "count": ss[0][1], "bytes": ss[0][2],
                "pgpgin_kib_median": statistics.median(s[3] for s in ss),
                "pgpgin_kib_min": min(s[3] for s in ss), "pgpgin_kib_max": max(s[3] for s in ss),
            })
    return rows


def mib(n):
    if n < 1048576:
        return f"{n / 1024:.0f} KiB"
    return f"{n / 1048576:.1f} MiB"


def part_of(metric):
    return "meta" if metric in META else "read"


def split_legacy(doc, path):
    """A whole run from before the parts: one doc per part it holds."""
    base = {k: doc.get(k) for k in ("date", "kernel", "machine", "accel", "mode", "runs",
                                    "os_file_cap_bytes", "params")}
    base.update({"commit": None, "elapsed_s": None, "expected_s": None, "file": path,
                 "widest": doc.get("widest", {})})
    out = []
    inputs = sorted({r["input"] for r in doc["results"]})
    for inp in inputs:
        host = {"trees": {k: v for k, v in doc["trees"].items() if k == inp},
                "sizes": {k: v for k, v in doc["sizes"].items() if k == inp},
                "stores": {k: v for k, v in doc.get("stores", {}).items() if k == inp},
                "stores_cfs1": {k: v for k, v in doc.get("stores_cfs1", {}).items() if k == inp}}
        for kind in ("meta", "read"):
            rows = [r for r in doc["results"] if r["input"] == inp and part_of(r["metric"]) == kind]
            if rows:
                out.append(dict(base, **host, part=f"{inp}-{kind}", input=inp, results=rows,
                                build={}, sharing=[]))
        if inp in doc.get("build", {}):
            out.append(dict(base, **host, part=f"{inp}-build", input=inp, results=[],
                            build={inp: doc["build"][inp]}, sharing=[]))
    if doc.get("sharing"):
        ver = ("verA", "verB", "verA+verB")
        out.append(dict(base, part="versions", input="versions", results=[],
                        trees={k: v for k, v in doc["trees"].items() if k in ver},
                        sizes={k: v for k, v in doc["sizes"].items() if k in ver},
                        stores={k: v for k, v in doc.get("stores", {}).items() if k in ver},
                        stores_cfs1={k: v for k, v in doc.get("stores_cfs1", {}).items() if k in ver},
                        build={k: v for k, v in doc.get("build", {}).items() if k == "verA"},
                        sharing=doc["sharing"]))
    return out


def load(top):
    docs = []
    for path in sorted(glob.glob(os.path.join(resdir(top), "*.json"))):
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            print(f"report.py: {path}: {e}; left out", file=sys.stderr)
            continue
        if doc.get("benchmark") != "images":
            continue
        if "part" in doc:
            doc["file"] = path
            docs.append(doc)
        else:
            docs.extend(split_legacy(doc, path))
    return docs


def newest(docs):
    """The newest full result of each part, or its newest quick one when it
    has no full one: a quick run (fewer runs, smaller trees) never stands in
    docs/bench.md for a full one."""
    best = {}
    for d in docs:
        key = (d["mode"] == "full", d["date"])
        if d["part"] not in best or key > (best[d["part"]]["mode"] == "full", best[d["part"]]["date"]):
            best[d["part"]] = d
    return {p: best[p] for p in sorted(best, key=lambda p: PART_ORDER.index(p)
                                        if p in PART_ORDER else 99)}


def cmd_record(a):
    now = datetime.datetime.now(datetime.timezone.utc)
    host = parse_host(a.host)
    samples, sharing = parse_guest(a.guest) if a.guest else ({}, {})
    build = {}
    if a.hyperfine:
        with open(a.hyperfine) as f:
            hf = json.load(f)
        tree = os.path.basename(a.hyperfine)[:-5]
        for r in hf["results"]:
            build.setdefault(tree, {})[r["command"]] = {
                "median_s": r["median"], "min_s": r["min"], "max_s": r["max"],
                "runs": len(r["times"])}
    share = []
    for (pair, system), vals in sorted(sharing.items(), key=lambda kv: SYSTEMS.index(kv[0][1])):
        share.append({"pair": pair, "system": system, "runs": len(vals),
                      "growth_a_kib": statistics.median(v[0] for v in vals),
                      "growth_b_kib": statistics.median(v[1] for v in vals)})
    doc = {
        "benchmark": "images", "part": a.part, "input": a.input,
        "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "kernel": a.kernel, "machine": a.machine,
        "accel": a.accel, "mode": a.mode, "commit": a.commit, "runs": a.runs,
        "os_file_cap_bytes": a.os_cap, "params": a.params,
        "elapsed_s": a.elapsed, "expected_s": a.expected,
        **host, "build": build, "results": result_rows(samples), "sharing": share,
    }
    if a.guest and not doc["results"] and not share:
        sys.exit(f"report.py: {a.guest}: no figures in the guest's log")
    os.makedirs(resdir(a.top), exist_ok=True)
    name = f"{now.strftime('%Y-%m-%d')}-{a.kernel}-{a.part}{'-quick' if a.mode == 'quick' else ''}.json"
    path = os.path.join(resdir(a.top), name)
    write_atomic(path, json.dumps(doc, indent=1) + "\n")
    print(f"report.py: wrote {path}", file=sys.stderr)


def matching(a):
    return sorted((d for d in load(a.top) if d["part"] == a.part and d["mode"] == a.mode),
                  key=lambda d: d["date"])


def cmd_done(a):
    ok = any(d.get("commit") == a.commit and d.get("kernel") == a.kernel
             and not a.commit.endswith("-dirty") for d in matching(a))
    sys.exit(0 if ok else 1)


def cmd_expected(a):
    took = [d["elapsed_s"] for d in matching(a) if d.get("elapsed_s")]
    if took:
        print(int(took[-1]))


def not_warm(r):
    """A warm run that read more than 1 MiB from the disk: the caches did not hold."""
    return r["mode"] == "warm" and r["pgpgin_kib_median"] > 1024


def cell(r):
    ratio = f" **×{r['ratio_to_squashfs']:.2f}**" if r.get("ratio_to_squashfs") is not None else ""
    mark = " †" if not_warm(r) else ""
    return f"{r['median_ms']:.1f} ({r['min_ms']:.1f}–{r['max_ms']:.1f}){ratio}{mark}"


def source(d):
    took = ""
    if d.get("elapsed_s"):
        took = f"; the part took {d['elapsed_s'] // 60} min {d['elapsed_s'] % 60} s"
    commit = f"commit {d['commit']}" if d.get("commit") else "commit not recorded"
    return (f"*From the {d['mode']} run of {d['date'][:10]}: part `{d['part']}`, {commit}, "
            f"kernel {d['kernel']}, {d['runs']} runs per figure{took}.*")


def figure_table(L, d, inp):
    rows = {}
    for r in d["results"]:
        if r["input"] == inp:
            rows.setdefault((r["metric"], r["mode"]), {})[r["system"]] = r
    systems = [s for s in SYSTEMS if any(s in by for by in rows.values())]
    L.append(source(d))
    L.append("")
    L.append("| operation | cache | " + " | ".join(LABEL[s] for s in systems) + " |")
    L.append("|---|---|" + "---|" * len(systems))
    for (metric, mode), by in rows.items():
        L.append(f"| {METRIC_TEXT.get(metric, metric)} | {mode} | " +
                 " | ".join(cell(by[s]) if s in by else "-" for s in systems) + " |")
    if any(not_warm(r) for by in rows.values() for r in by.values()):
        L.append("")
        L.append("† a warm figure for which more than 1 MiB (median) was read from the disk "
                 "(squashfs reads its metadata through a small cache of its own, not the "
                 "page cache).")
    L.append("")
    L.append("Read from the disk during the cold runs (median of pgpgin, MiB):")
    L.append("")
    L.append("| operation | " + " | ".join(LABEL[s] for s in systems) + " |")
    L.append("|---|" + "---|" * len(systems))
    for (metric, mode), by in rows.items():
        if mode == "cold":
            L.append(f"| {METRIC_TEXT.get(metric, metric)} | " +
                     " | ".join(f"{by[s]['pgpgin_kib_median'] / 1024:.1f}" if s in by else "-"
                                for s in systems) + " |")
    L.append("")
    lim = [(k, by) for k, by in rows.items() if "store" in by]
    if lim and any("tree" in by for _, by in lim):
        L.append("Against the store and the tree (both on the bench disk's ext4: the store opens "
                 "and reads each file's object by its path, with no walk; the tree walks the "
                 "image's tree laid out as directories of hardlinks to those objects and reads "
                 "every file as on a mount): median ms and **×ratio** to the store (1 is the "
                 "limit), and each composefs system's ratio to the tree, what it adds to the "
                 "same walk, opens and reads of the same files. The tree's ratio to the store "
                 "is what the walk costs:")
        L.append("")
        L.append("| operation | cache | store (ext4) | tree (ext4) | composefs | composefs ÷ tree | "
                 "cfs1 (EROFS + overlayfs) | cfs1 ÷ tree |")
        L.append("|---|---|---|---|---|---|---|---|")
        for (metric, mode), by in lim:
            st = by["store"]["median_ms"]
            tr = by["tree"]["median_ms"] if "tree" in by else None
            cells = []
            for s in ("tree", "cfs", "cfs1"):
                ms = by[s]["median_ms"] if s in by else None
                cells.append(f"{ms:.1f} **×{ms / st:.2f}**" if ms is not None and st else "-")
                if s != "tree":
                    cells.append(f"**×{ms / tr:.2f}**" if ms is not None and tr else "-")
            L.append(f"| {METRIC_TEXT.get(metric, metric)} | {mode} | {st:.1f} | " +
                     " | ".join(cells) + " |")
        L.append("")
    elif lim:
        L.append("Against the store (each file's object opened and read straight from the ext4 "
                 "disk): median ms, and each composefs system's **×ratio** to the store; 1 is the "
                 "limit:")
        L.append("")
        L.append("| operation | cache | store (ext4) | composefs | cfs1 (EROFS + overlayfs) |")
        L.append("|---|---|---|---|---|")
        for (metric, mode), by in lim:
            st = by["store"]["median_ms"]
            cells = [f"{by[s]['median_ms']:.1f} **×{by[s]['median_ms'] / st:.2f}**"
                     if s in by and st else "-" for s in ("cfs", "cfs1")]
            L.append(f"| {METRIC_TEXT.get(metric, metric)} | {mode} | {st:.1f} | " +
                     " | ".join(cells) + " |")
        L.append("")


def markdown(parts):
    L = []
    L.append("Each part of the benchmark is measured in a boot (or, for builds, a host run) of its "
             "own; each table says which run it comes from. Times in ms: median (min–max) and "
             "**×ratio** to squashfs; below 1 is faster than squashfs. Under TCG only the ratios "
             "within one table mean something.")
    L.append("")
    machine = sorted({d["machine"] for d in parts.values() if d.get("machine")})
    if machine:
        L.append("Machine: " + "; ".join(machine) + ".")
        L.append("")
    for inp in ("os", "synth"):
        ds = [d for p, d in parts.items() if d["input"] == inp]
        if not ds:
            continue
        t = next((d["trees"][inp] for d in ds if inp in d.get("trees", {})), {})
        wd = next((d["widest"][inp] for d in ds if inp in d.get("widest", {})), {})
        cap = next((d["os_file_cap_bytes"] for d in ds if d.get("os_file_cap_bytes")), "?")
        L.append(f"#### {inp}: {INPUT_TEXT.get(inp, inp).format(cap=cap)} "
                 f"({t.get('entries', '?')} entries, {mib(t.get('bytes', 0))}; widest dir "
                 f"{wd.get('dir', '?')}, {wd.get('entries', '?')} entries)")
        L.append("")
        for kind, title in (("meta", "Metadata"), ("read", "Reads")):
            d = parts.get(f"{inp}-{kind}")
            if d:
                L.append(f"##### {title}")
                L.append("")
                figure_table(L, d, inp)
            else:
                L.append(f"##### {title}: not measured yet (`bench/run.sh --part {inp}-{kind}`)")
                L.append("")

    builds = [(t, by, d) for d in parts.values() for t, by in d.get("build", {}).items()]
    if builds:
        L.append("#### Image build time on the host (hyperfine; s, median (min–max) ×ratio to mksquashfs)")
        L.append("")
        built = [s for s in BUILDS if any(s in by for _, by, _ in builds)]
        L.append("| tree | " + " | ".join(BUILD_TEXT.get(s, s) for s in built) + " | measured |")
        L.append("|---|" + "---|" * (len(built) + 1))
        for t, by, d in builds:
            base = by.get("squashfs", {}).get("median_s")
            cells = []
            for s in built:
                b = by.get(s)
                if not b:
                    cells.append("-")
                    continue
                ratio = f" **×{b['median_s'] / base:.2f}**" if base else ""
                cells.append(f"{b['median_s']:.2f} ({b['min_s']:.2f}–{b['max_s']:.2f}){ratio}")
            when = f"{d['mode']} {d['date'][:10]}" + (f", {d['commit']}" if d.get("commit") else "")
            L.append(f"| {t} | " + " | ".join(cells) + f" | {when} |")
        L.append("")
        yard = [(t, by) for t, by, _ in builds if "cp-a" in by]
        if yard:
            L.append("Store builds against `cp -a` of the same tree into the same kind of "
                     "filesystem (each run into a new ext4, synced at the end): " + "; ".join(
                         f"{t}: composefs ×{by['cfs']['median_s'] / by['cp-a']['median_s']:.2f}, "
                         f"cfs1 ×{by['cfs1']['median_s'] / by['cp-a']['median_s']:.2f}"
                         for t, by in yard if "cfs" in by and "cfs1" in by) + ".")
            L.append("")

    sized = [(t, by, d) for d in parts.values() if d["part"].endswith("-build") or d["part"] == "versions"
             for t, by in d.get("sizes", {}).items()]
    if sized:
        L.append("#### Sizes (bytes on disk, allocated)")
        L.append("")
        L.append("| tree | content | composefs descriptor | + its store | cfs1 image | + its store | "
                 "squashfs | squashfs (uncompr.) | erofs |")
        L.append("|---|---|---|---|---|---|---|---|---|")

        def alloc(by, k):
            return mib(by[k]["allocated"]) if k in by else "-"

        for t, by, d in sized:
            st = d.get("stores", {}).get(t)
            s1 = d.get("stores_cfs1", {}).get(t)
            shared = "shared with verB" if t == "verA" else "shared with verA"
            L.append(f"| {t} | {mib(d['trees'].get(t, {}).get('bytes', 0))} | {alloc(by, 'cfs')} | "
                     f"{mib(st) if st else shared if t.startswith('ver') else '-'} | {alloc(by, 'cfs1')} | "
                     f"{mib(s1) if s1 else shared if t.startswith('ver') else '-'} | "
                     f"{alloc(by, 'sqfs')} | {alloc(by, 'sqfsu')} | {alloc(by, 'erofs')} |")
        v = parts.get("versions")
        if v and "verA" in v["sizes"] and "verB" in v["sizes"]:
            s = v["sizes"]
            two = {k: s["verA"][k]["allocated"] + s["verB"][k]["allocated"]
                   for k in ("cfs", "cfs1", "sqfs", "sqfsu", "erofs") if k in s["verA"] and k in s["verB"]}
            st, s1 = v.get("stores", {}).get("verA+verB"), v.get("stores_cfs1", {}).get("verA+verB")
            L.append("| **two versions (A+B)** | | " +
                     (f"{mib(two['cfs'] + st)} (2 descriptors + 1 shared store) | | " if st else "- | | ") +
                     (f"{mib(two['cfs1'] + s1)} (2 images + 1 shared store) | | " if s1 and "cfs1" in two else "- | | ") +
                     f"{mib(two['sqfs'])} | {mib(two['sqfsu'])} | {mib(two['erofs'])} |")
        L.append("")
        L.append("One store serves both composefs systems; the cfs1 column's store is what "
                 "`cfsctl build --format=erofs --digest-store` writes alone, before the v1 build.")
        L.append("")

    v = parts.get("versions")
    if v and v.get("sharing"):
        L.append("#### Page-cache sharing: read every file of version A, then of B (growth of Cached+Buffers)")
        L.append("")
        L.append(source(v))
        L.append("")
        L.append("| system | after A | after B | B as share of A |")
        L.append("|---|---|---|---|")
        for r in v["sharing"]:
            frac = r["growth_b_kib"] / r["growth_a_kib"] if r["growth_a_kib"] else 0
            L.append(f"| {LABEL[r['system']]} | {r['growth_a_kib'] / 1024:.1f} MiB | "
                     f"{r['growth_b_kib'] / 1024:.1f} MiB | {frac:.0%} |")
        L.append("")

    behind = []
    for d in parts.values():
        res = d["results"]
        for r in res:
            if r["system"] != "cfs":
                continue
            for other in PEERS:
                o = next((x for x in res if x["system"] == other and
                          (x["input"], x["metric"], x["mode"]) == (r["input"], r["metric"], r["mode"])), None)
                if o and r["median_ms"] > o["median_ms"] * 1.05:
                    behind.append(f"- {r['input']} {METRIC_TEXT.get(r['metric'], r['metric'])}, {r['mode']}: "
                                  f"composefs {r['median_ms']:.1f} ms against {LABEL[other]} {o['median_ms']:.1f} ms "
                                  f"(×{r['median_ms'] / o['median_ms']:.2f}); read from disk: composefs "
                                  f"{r['pgpgin_kib_median']:.0f} KiB, {LABEL[other]} {o['pgpgin_kib_median']:.0f} KiB "
                                  f"({d['mode']} {d['date'][:10]})")
    L.append("#### Where composefs is behind (more than 5% slower than "
             + ", ".join(LABEL[p] for p in PEERS[:-1]) + f" or {LABEL[PEERS[-1]]})")
    L.append("")
    L.extend(behind or ["- nowhere in these runs"])
    L.append("")
    return "\n".join(L)


def chart(parts, top):
    """Clustered bars: each operation's ratio to squashfs, one bar per system."""
    out = resdir(top)
    dat = os.path.join(out, "latest.dat.tmp")
    rows = {}
    for d in parts.values():
        for r in d["results"]:
            key = f"{r['input']} {r['metric']} {r['mode']}"
            rows.setdefault(key, {})[r["system"]] = r["ratio_to_squashfs"]
    if not rows:
        return
    dates = sorted({d["date"][:10] for d in parts.values() if d["results"]})
    systems = [s for s in SYSTEMS if any(s in by for by in rows.values())]
    with open(dat, "w") as f:
        f.write("op " + " ".join(f'"{LABEL[s]}"' for s in systems) + "\n")
        for key, by in rows.items():
            f.write(f'"{key}" ' + " ".join(f"{by[s]:.4f}" if by.get(s) else "NaN"
                                           for s in systems) + "\n")
    plot = ", \\\n     ".join(
        (f'"{dat}" using 2:xtic(1)' if i == 2 else f"'' using {i}") + f" title columnheader({i})"
        for i in range(2, len(systems) + 2))
    png = os.path.join(out, "latest.png")
    script = f"""
set terminal pngcairo size 1400,700 font ",9"
set output "{png}.tmp"
set title "Time relative to squashfs (1 = squashfs, lower is faster) - runs of {', '.join(dates)}"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by -45 scale 0
set ylabel "ratio to squashfs"
set logscale y 2
set yrange [0.005:8]
set grid ytics
set key outside top center horizontal
set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lw 2
plot {plot}
"""
    try:
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
        os.rename(png + ".tmp", png)
    finally:
        if os.path.exists(dat):
            os.unlink(dat)


def readme(top, md):
    """Rewrite docs/bench.md's latest figures between their markers."""
    path = os.path.join(top, "docs", "bench.md")
    with open(path) as f:
        text = f.read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    body = (f"{begin}\n![composefs against composefs 1.0, squashfs and erofs: time ratios](../bench/results/latest.png)\n\n"
            f"{md}\n{end}")
    if begin in text and end in text:
        text = text[:text.index(begin)] + body + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + "\n\n## The latest figures\n\n" + body + "\n"
    write_atomic(path, text)


def cmd_render(a):
    parts = newest(load(a.top))
    md = markdown(parts)
    write_atomic(os.path.join(resdir(a.top), "latest.md"), md)
    chart(parts, a.top)
    readme(a.top, md)
    print(md)


def main():
    ap = argparse.ArgumentParser(description="the results of make bench")
    sub = ap.add_subparsers(dest="cmd", required=True)
    rec = sub.add_parser("record")
    for o in ("top", "part", "input", "mode", "commit", "kernel", "accel", "machine", "params", "host"):
        rec.add_argument("--" + o, required=True)
    rec.add_argument("--hyperfine")
    rec.add_argument("--guest")
    for o in ("runs", "os-cap", "elapsed", "expected"):
        rec.add_argument("--" + o, type=int, required=True)
    for name in ("done", "expected"):
        p = sub.add_parser(name)
        for o in ("top", "part", "mode") + (("commit", "kernel") if name == "done" else ()):
            p.add_argument("--" + o, required=True)
    sub.add_parser("render").add_argument("--top", required=True)
    a = ap.parse_args()
    {"record": cmd_record, "done": cmd_done, "expected": cmd_expected, "render": cmd_render}[a.cmd](a)


if __name__ == "__main__":
    main()
