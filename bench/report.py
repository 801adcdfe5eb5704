#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Turns one 'make bench' run into its results: the host's figures
# (bench/run.sh's host.txt and hyperfine's JSON) and the guest's sample
# lines (bench/guest.sh) become bench/results/DATE-KERNEL.json, the
# Markdown tables bench/results/latest.md, the ratio chart
# bench/results/latest.png (gnuplot), and README's "## Benchmarks" section
# (between its bench:begin and bench:end markers). Every time figure is the
# median of the runs with min and max, and its ratio to squashfs (default
# compression) of the same input, metric and mode: below 1 is faster. The
# read rows also give each composefs system's ratio to "store", the same
# files read straight from the store: the limit of a stacking filesystem.
#
# Usage: report.py --top DIR --host FILE --hyperfine DIR --guest LOG
#        --kernel KREL --accel A --machine TEXT --mode quick|full --runs N
#        --os-cap BYTES --params TEXT
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

SYSTEMS = ["cfs", "cfs1", "squashfs", "squashfs-u", "erofs", "store"]
LABEL = {"cfs": "composefs", "cfs1": "cfs1 (EROFS + overlayfs)", "squashfs": "squashfs",
         "squashfs-u": "squashfs (uncompr.)", "erofs": "erofs", "store": "store (ext4)"}
# The systems composefs is compared with in "Where composefs is behind".
PEERS = ["cfs1", "squashfs", "erofs"]
BUILD_TEXT = {"cfs": "cfsctl build --digest-store",
              "cfs1": "cfsctl build --format=erofs --digest-store", "squashfs": "mksquashfs",
              "squashfs-u": "mksquashfs -noI -noD -noF -noX", "erofs": "mkfs.erofs"}
METRIC_TEXT = {
    "walk": "walk, lstat every inode",
    "ls-lR": "ls -lR",
    "stat-sample": "lstat 1000 random paths",
    "readdir-widest": "readdir widest dir",
    "read-all": "read every file",
    "seq-4k": "sequential 4k reads",
    "rand-4k": "random 4k reads",
}


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
    trees, sizes, stores, stores1, widest = {}, {}, {}, {}, {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if p[0] == "tree":
                trees[p[1]] = {"entries": int(p[2]), "bytes": int(p[3])}
            elif p[0] == "size":
                sizes.setdefault(p[1], {})[p[2]] = {"bytes": int(p[3]), "allocated": int(p[4])}
            elif p[0] == "store":
                stores[p[1]] = int(p[2])
            elif p[0] == "store1":
                stores1[p[1]] = int(p[2])
            elif p[0] == "widest":
                widest[p[1]] = {"dir": p[2], "entries": int(p[3])}
    return trees, sizes, stores, stores1, widest


def mib(n):
    if n < 1048576:
        return f"{n / 1024:.0f} KiB"
    return f"{n / 1048576:.1f} MiB"


def main():
    ap = argparse.ArgumentParser()
    for a in ("top", "host", "hyperfine", "guest", "kernel", "accel", "machine", "mode",
              "params"):
        ap.add_argument("--" + a, required=True)
    ap.add_argument("--runs", type=int, required=True)
    ap.add_argument("--os-cap", type=int, required=True)
    args = ap.parse_args()

    samples, sharing = parse_guest(args.guest)
    trees, sizes, stores, stores1, widest = parse_host(args.host)
    now = datetime.datetime.now(datetime.timezone.utc)
    date = now.strftime("%Y-%m-%d")

    results = []
    keys = sorted({k[:3] for k in samples}, key=lambda k: (
        ["os", "synth"].index(k[0]) if k[0] in ("os", "synth") else 9,
        list(METRIC_TEXT).index(k[1]), ["cold", "warm"].index(k[2])))
    for inp, metric, mode in keys:
        base = samples.get((inp, metric, mode, "squashfs"))
        base_med = statistics.median(s[0] for s in base) if base else None
        lim = samples.get((inp, metric, mode, "store"))
        lim_med = statistics.median(s[0] for s in lim) if lim else None
        for system in SYSTEMS:
            ss = samples.get((inp, metric, mode, system))
            if not ss:
                continue
            med, lo, hi = stats([s[0] for s in ss])
            results.append({
                "input": inp, "metric": metric, "mode": mode, "system": system,
                "runs": len(ss), "median_ms": med / 1e6, "min_ms": lo / 1e6, "max_ms": hi / 1e6,
                "ratio_to_squashfs": med / base_med if base_med else None,
                "ratio_to_store": med / lim_med if lim_med and system != "store" else None,
                "count": ss[0][1], "bytes": ss[0][2],
                "pgpgin_kib_median": statistics.median(s[3] for s in ss),
            })

    build = {}
    for fn in sorted(os.listdir(args.hyperfine)):
        if not fn.endswith(".json"):
            continue
        with open(os.path.join(args.hyperfine, fn)) as f:
            hf = json.load(f)
        t = fn[:-5]
        for r in hf["results"]:
            build.setdefault(t, {})[r["command"]] = {
                "median_s": r["median"], "min_s": r["min"], "max_s": r["max"],
                "runs": len(r["times"])}

    share = []
    for (pair, system), vals in sorted(sharing.items(), key=lambda kv: SYSTEMS.index(kv[0][1])):
        share.append({"pair": pair, "system": system, "runs": len(vals),
                      "growth_a_kib": statistics.median(v[0] for v in vals),
                      "growth_b_kib": statistics.median(v[1] for v in vals)})

    doc = {
        "benchmark": "images", "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "kernel": args.kernel, "machine": args.machine, "accel": args.accel,
        "mode": args.mode, "runs": args.runs, "os_file_cap_bytes": args.os_cap,
        "params": args.params, "trees": trees, "widest": widest, "sizes": sizes,
        "stores": stores, "stores_cfs1": stores1, "build": build, "results": results, "sharing": share,
    }

    resdir = os.path.join(args.top, "bench", "results")
    os.makedirs(resdir, exist_ok=True)
    jpath = os.path.join(resdir, f"{date}-{args.kernel}.json")
    with open(jpath + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.rename(jpath + ".tmp", jpath)

    md = markdown(doc, date)
    mpath = os.path.join(resdir, "latest.md")
    with open(mpath + ".tmp", "w") as f:
        f.write(md)
    os.rename(mpath + ".tmp", mpath)
    chart(doc, resdir)
    readme(args.top, md)
    print(md)
    print(f"results: {jpath}, {mpath}, {os.path.join(resdir, 'latest.png')}", file=sys.stderr)


def not_warm(r):
    """A warm run that read more than 1 MiB from the disk: the caches did not hold."""
    return r["mode"] == "warm" and r["pgpgin_kib_median"] > 1024


def cell(r):
    ratio = f" **×{r['ratio_to_squashfs']:.2f}**" if r["ratio_to_squashfs"] is not None else ""
    mark = " †" if not_warm(r) else ""
    return f"{r['median_ms']:.1f} ({r['min_ms']:.1f}–{r['max_ms']:.1f}){ratio}{mark}"


def markdown(doc, date):
    L = []
    L.append(f"Run of {date} ({doc['mode']}, {doc['runs']} runs per figure), kernel "
             f"{doc['kernel']}, {doc['machine']}. Times in ms: median (min–max) and "
             f"**×ratio** to squashfs; below 1 is faster than squashfs. Under TCG only "
             f"the ratios mean something.")
    L.append("")
    inputs = []
    for r in doc["results"]:
        if r["input"] not in inputs:
            inputs.append(r["input"])
    for inp in inputs:
        t = doc["trees"].get(inp, {})
        wd = doc["widest"].get(inp, {})
        desc = {"os": f"CentOS Stream 9 tree, files cut to {doc['os_file_cap_bytes']} bytes",
                "synth": "synthetic: wide directories, deep paths, one large file"}.get(inp, inp)
        L.append(f"#### {inp}: {desc} ({t.get('entries', '?')} entries, {mib(t.get('bytes', 0))};"
                 f" widest dir {wd.get('dir', '?')}, {wd.get('entries', '?')} entries)")
        L.append("")
        L.append("| operation | cache | " + " | ".join(LABEL[s] for s in SYSTEMS) + " |")
        L.append("|---|---|" + "---|" * len(SYSTEMS))
        rows = {}
        for r in doc["results"]:
            if r["input"] == inp:
                rows.setdefault((r["metric"], r["mode"]), {})[r["system"]] = r
        for (metric, mode), by in rows.items():
            L.append(f"| {METRIC_TEXT.get(metric, metric)} | {mode} | " +
                     " | ".join(cell(by[s]) if s in by else "-" for s in SYSTEMS) + " |")
        if any(not_warm(r) for by in rows.values() for r in by.values()):
            L.append("")
            L.append("† a warm figure for which more than 1 MiB (median) was read from the disk "
                     "(squashfs reads its metadata through a small cache of its own, not the "
                     "page cache).")
        L.append("")
        # What the cold runs read from the disk explains most cold figures.
        L.append(f"Read from the disk during the cold runs of {inp} (median of pgpgin, MiB):")
        L.append("")
        L.append("| operation | " + " | ".join(LABEL[s] for s in SYSTEMS) + " |")
        L.append("|---|" + "---|" * len(SYSTEMS))
        for (metric, mode), by in rows.items():
            if mode != "cold":
                continue
            L.append(f"| {METRIC_TEXT.get(metric, metric)} | " +
                     " | ".join(f"{by[s]['pgpgin_kib_median'] / 1024:.1f}" if s in by else "-"
                                for s in SYSTEMS) + " |")
        L.append("")
        # The limit of reads: the same files opened and read from the store.
        lim = [(k, by) for k, by in rows.items() if "store" in by]
        if lim:
            L.append(f"Reads against the store of {inp} (each file's object opened and read "
                     f"straight from the ext4 disk): median ms, and each composefs system's "
                     f"**×ratio** to the store; 1 is the limit:")
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

    if doc["build"]:
        L.append("#### Image build time on the host (hyperfine; s, median (min–max) ×ratio)")
        L.append("")
        built = [s for s in SYSTEMS if any(s in by for by in doc["build"].values())]
        L.append("| tree | " + " | ".join(BUILD_TEXT.get(s, s) for s in built) + " |")
        L.append("|---|" + "---|" * len(built))
        for t, by in doc["build"].items():
            base = by.get("squashfs", {}).get("median_s")
            cells = []
            for s in built:
                b = by.get(s)
                if not b:
                    cells.append("-")
                    continue
                ratio = f" **×{b['median_s'] / base:.2f}**" if base else ""
                cells.append(f"{b['median_s']:.2f} ({b['min_s']:.2f}–{b['max_s']:.2f}){ratio}")
            L.append(f"| {t} | " + " | ".join(cells) + " |")
        L.append("")

    L.append("#### Sizes (bytes on disk, allocated)")
    L.append("")
    L.append("| tree | content | composefs descriptor | + its store | cfs1 image | + its store | squashfs | "
             "squashfs (uncompr.) | erofs |")
    L.append("|---|---|---|---|---|---|---|---|---|")
    s1 = doc.get("stores_cfs1", {})

    def alloc(by, k):
        return mib(by[k]["allocated"]) if k in by else "-"

    def store_cell(stores, t):
        return mib(stores[t]) if t in stores else ("shared with verA" if t == "verB" else "-")
    for t, by in doc["sizes"].items():
        L.append(f"| {t} | {mib(doc['trees'].get(t, {}).get('bytes', 0))} | {alloc(by, 'cfs')} | "
                 f"{store_cell(doc['stores'], t)} | {alloc(by, 'cfs1')} | {store_cell(s1, t)} | "
                 f"{alloc(by, 'sqfs')} | {alloc(by, 'sqfsu')} | {alloc(by, 'erofs')} |")
    if "verA" in doc["sizes"] and "verB" in doc["sizes"]:
        s = doc["sizes"]
        two = {k: s["verA"][k]["allocated"] + s["verB"][k]["allocated"]
               for k in ("cfs", "cfs1", "sqfs", "sqfsu", "erofs") if k in s["verA"] and k in s["verB"]}
        cfs = two["cfs"] + doc["stores"].get("verA+verB", 0)
        cells = [f"{mib(cfs)} (2 descriptors + 1 shared store)", ""]
        if "cfs1" in two and "verA+verB" in s1:
            cells += [f"{mib(two['cfs1'] + s1['verA+verB'])} (2 images + 1 shared store)", ""]
        else:
            cells += ["-", ""]
        L.append(f"| **two versions (A+B)** | | " + " | ".join(cells) + " | "
                 f"{mib(two['sqfs'])} | {mib(two['sqfsu'])} | {mib(two['erofs'])} |")
    L.append("")
    if s1:
        L.append("One store serves both composefs systems; the cfs1 column's store is what "
                 "`cfsctl build --format=erofs --digest-store` writes alone, before the v1 build.")
        L.append("")

    if doc["sharing"]:
        L.append("#### Page-cache sharing: read every file of version A, then of B (growth of Cached+Buffers)")
        L.append("")
        L.append("| system | after A | after B | B as share of A |")
        L.append("|---|---|---|---|")
        for r in doc["sharing"]:
            frac = r["growth_b_kib"] / r["growth_a_kib"] if r["growth_a_kib"] else 0
            L.append(f"| {LABEL[r['system']]} | {r['growth_a_kib'] / 1024:.1f} MiB | "
                     f"{r['growth_b_kib'] / 1024:.1f} MiB | {frac:.0%} |")
        L.append("")

    behind = []
    for r in doc["results"]:
        if r["system"] != "cfs":
            continue
        for other in PEERS:
            o = next((x for x in doc["results"] if x["system"] == other and
                      (x["input"], x["metric"], x["mode"]) == (r["input"], r["metric"], r["mode"])), None)
            if o and r["median_ms"] > o["median_ms"] * 1.05:
                behind.append(f"- {r['input']} {METRIC_TEXT.get(r['metric'], r['metric'])}, {r['mode']}: "
                              f"composefs {r['median_ms']:.1f} ms against {LABEL[other]} {o['median_ms']:.1f} ms "
                              f"(×{r['median_ms'] / o['median_ms']:.2f}); read from disk: composefs "
                              f"{r['pgpgin_kib_median']:.0f} KiB, {LABEL[other]} {o['pgpgin_kib_median']:.0f} KiB")
    L.append("#### Where composefs is behind (more than 5% slower than "
             + ", ".join(LABEL[p] for p in PEERS[:-1]) + f" or {LABEL[PEERS[-1]]})")
    L.append("")
    L.extend(behind or ["- nowhere in this run"])
    L.append("")
    return "\n".join(L)


def chart(doc, resdir):
    """Clustered bars: each operation's ratio to squashfs, one bar per system."""
    dat = os.path.join(resdir, "latest.dat.tmp")
    rows = {}
    for r in doc["results"]:
        key = f"{r['input']} {r['metric']} {r['mode']}"
        rows.setdefault(key, {})[r["system"]] = r["ratio_to_squashfs"]
    with open(dat, "w") as f:
        f.write("op " + " ".join(f'"{LABEL[s]}"' for s in SYSTEMS) + "\n")
        for key, by in rows.items():
            f.write(f'"{key}" ' + " ".join(f"{by[s]:.4f}" if by.get(s) else "NaN"
                                           for s in SYSTEMS) + "\n")
    png = os.path.join(resdir, "latest.png")
    script = f"""
set terminal pngcairo size 1400,700 font ",9"
set output "{png}.tmp"
set title "Time relative to squashfs (1 = squashfs, lower is faster) - {doc['date'][:10]}, {doc['kernel']}, {doc['accel']}"
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
plot "{dat}" using 2:xtic(1) title columnheader(2), '' using 3 title columnheader(3), \\
     '' using 4 title columnheader(4), '' using 5 title columnheader(5), \\
     '' using 6 title columnheader(6), '' using 7 title columnheader(7)
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    os.rename(png + ".tmp", png)
    os.unlink(dat)


def readme(top, md):
    """Rewrite README's Benchmarks section between its markers."""
    path = os.path.join(top, "README.md")
    with open(path) as f:
        text = f.read()
    begin, end = "<!-- bench:begin -->", "<!-- bench:end -->"
    body = (f"{begin}\n![composefs against composefs 1.0, squashfs and erofs: time ratios](bench/results/latest.png)\n\n"
            f"{md}\n{end}")
    if begin in text and end in text:
        text = text[:text.index(begin)] + body + text[text.index(end) + len(end):]
    else:
        text = text.rstrip("\n") + ("\n\n## Benchmarks\n\n`make bench` compares composefs with composefs 1.0, squashfs "
                                    "and erofs in QEMU; docs/bench.md has the method and how to read "
                                    "the figures.\n\n" + body + "\n")
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.rename(path + ".tmp", path)


if __name__ == "__main__":
    main()
