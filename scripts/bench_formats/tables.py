#!/usr/bin/env python3
"""Markdown tables from run.sh's raw results.

    tables.py RESULTS_DIR UNITS_TSV
"""

import json
import os
import re
import sys

res, units_tsv = sys.argv[1], sys.argv[2]
units = {}
for line in open(units_tsv):
    name, unit, n = line.split("\t")
    units[name] = (unit, int(n))
# The legacy files are LibreOffice conversions of the big OOXML ones.
units["big.doc"] = units["big.docx"]
units["big.ppt"] = units["big.pptx"]
units["big.xls"] = units["big.xlsx"]

native = {}
for line in open(os.path.join(res, "native.txt")):
    f = line.rstrip("\n").split("\t")
    name = os.path.basename(f[0])
    best = float(re.search(r"best ([\d.]+) ms", f[5]).group(1))
    median = float(re.search(r"median ([\d.]+) ms", f[5]).group(1))
    native[name] = (best, median, f[3], f[4])

pt = {}
for line in open(os.path.join(res, "plugin_test.txt")):
    f = line.rstrip("\n").split("\t")
    name = os.path.basename(f[0])
    pt.setdefault(name, []).append(int(f[5].split()[-1]))


def ingest(name):
    stem = "ingest_" + name.replace(".", "_")
    r = json.load(open(os.path.join(res, stem + ".json")))
    t = open(os.path.join(res, stem + ".time")).read()
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
    wall = re.search(r"Elapsed \(wall clock\) time.*: (.*)", t).group(1)
    secs = sum(float(p) * 60**i for i, p in enumerate(reversed(wall.split(":"))))
    return r, secs, rss


order = ["big.docx", "big.odt", "big.rtf", "big.doc", "big.pptx", "big.odp", "big.ppt",
         "big.xlsx", "big.xls", "big.ods", "big.csv", "big.epub", "big.mbox"]
print("| file | units | native parse+chunk, best of 5 (ms) | native units/s | sandbox `plugin test` ms (2 runs + validation), best of 3 | sandbox units/s (≥, from ms/2) | sandbox/native time | ingest `parse_ms` | units/s by `parse_ms` | ingest wall (s) | units/s by ingest wall | ingest peak RSS (MiB) |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for name in order:
    if name not in native:
        continue
    unit, n = units[name]
    nb, nm, blocks, chunks = native[name]
    ptm = min(pt[name])
    r, wall, rss = ingest(name)
    pm = r["timings"]["parse_ms"]
    per_run = ptm / 2
    print(f"| {name} ({blocks}, {chunks}) | {n:,} {unit} | {nb:.0f} | {n / nb * 1e3:,.0f} | {ptm} | {n / per_run * 1e3:,.0f} | "
          f"{per_run / nb:.1f}× | {pm:.0f} | {n / pm * 1e3:,.0f} | {wall:.2f} | {n / wall:,.0f} | {rss / 1024:.0f} |")
