#!/usr/bin/env python3
"""The lexical channel's growth on distinct text: a tenth of a corpus,
then all of it, no entry repeated.

bench_lexical.py grows its index with copies of the SciFact abstracts, in
which every competitive abstract comes back once per copy with the same
score, so the documents an exact top 10 has to look at grow with the
copies. This bench grows it with distinct real text instead: the entries
of the GNU Collaborative International Dictionary of English (Debian's
`dict-gcide`) and WordNet's glosses (`wordnet-base`), shuffled with a
fixed seed, 20 entries to a markdown file (each under its own heading),
dealt into PARTS folders. It ingests the first folder lexical-only, times
the first QUERIES SciFact claims (punctuation removed, k = 10, lexical)
with bench_lexical.py's `measure`, then adds the other folders and times
them again. Prints one JSON line per size.

usage: bench_lexical_distinct.py KEBAB BEIR_DIR WORK_DIR [--parts 10] [--queries 100]
(install the data first: apt-get install dict-gcide wordnet-base)
"""

import argparse
import gzip
import json
import random
from pathlib import Path

from bench_lexical import bulk_of, ingest_lexical, measure

GCIDE = Path("/usr/share/dictd/gcide")
WORDNET = Path("/usr/share/wordnet")
B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64(s: str) -> int:
    n = 0
    for c in s:
        n = n * 64 + B64.index(c)
    return n


def gcide_entries() -> list:
    """(headword, text) of every distinct GCIDE entry."""
    raw = gzip.open(f"{GCIDE}.dict.dz").read()
    seen, out = set(), []
    for line in open(f"{GCIDE}.index", encoding="utf-8", errors="replace"):
        fields = line.rstrip("\n").split("\t")
        if len(fields) < 3 or fields[0].startswith("00-database"):
            continue
        at, length = b64(fields[1]), b64(fields[2])
        if at in seen:
            continue
        seen.add(at)
        out.append((fields[0], raw[at : at + length].decode("utf-8", "replace").strip()))
    return out


def wordnet_entries() -> list:
    """(words, gloss) of every WordNet synset."""
    out = []
    for part in ("noun", "verb", "adj", "adv"):
        for line in open(WORDNET / f"data.{part}", encoding="utf-8", errors="replace"):
            if line.startswith("  ") or "|" not in line:
                continue  # the licence at the top
            head, gloss = line.split("|", 1)
            fields = head.split()
            words = [fields[4 + 2 * i] for i in range(int(fields[3], 16))]
            out.append((", ".join(w.replace("_", " ") for w in words), gloss.strip()))
    return out


def write_part(entries: list, folder: Path, per_file: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(entries), per_file):
        text = "".join(f"# {head}\n\n{body}\n\n" for head, body in entries[start : start + per_file])
        (folder / f"f{start // per_file:05d}.md").write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("beir")
    ap.add_argument("work")
    ap.add_argument("--parts", type=int, default=10)
    ap.add_argument("--queries", type=int, default=100, help="at most 100 (one bulk call)")
    ap.add_argument("--per-file", type=int, default=20)
    a = ap.parse_args()
    work = Path(a.work)
    entries = gcide_entries() + wordnet_entries()
    random.Random(7).shuffle(entries)
    queries = [json.loads(l)["text"] for l in (Path(a.beir) / "queries.jsonl").open()][: a.queries]
    bulk = bulk_of(queries)
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "config.toml"
    cfg.write_text('[models.embedding]\nmodel = ""\n')
    data, docs = work / "data", work / "docs"
    for parts in (1, a.parts):
        for p in range(parts):
            if not (docs / f"part{p:02d}").exists():
                write_part(entries[p :: a.parts], docs / f"part{p:02d}", a.per_file)
        row = {
            "parts": parts,
            "entries": sum(len(entries[p :: a.parts]) for p in range(parts)),
            **ingest_lexical(a.kebab, data, cfg, docs),
            "queries": len(queries),
            "lexical_index": measure(a.kebab, data, cfg, bulk, len(queries)),
        }
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
