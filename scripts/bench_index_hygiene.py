#!/usr/bin/env python3
"""Vector index size and query latency over a series of incremental ingests.

Writes the first DOCS documents of a BEIR corpus (corpus.jsonl) as markdown
files, ingests them with the bundled embedding model, then ROUNDS times
edits CHANGED files (each edit replaces the file's chunks: old vector rows
deleted, new ones added) and ingests again. After every ingest it prints
one JSON line: the table's fragments (from the ingest report), the LanceDB
versions and bytes on disk, and vector-mode ms/query over QUERIES queries
(`search --bulk`, start-up subtracted).

usage: bench_index_hygiene.py KEBAB ASSETS BEIR_DIR WORK_DIR
           [--docs 1000] [--rounds 20] [--changed 25] [--queries 50] [--settle 0]
"""

import argparse
import json
import os
import re
import subprocess
import time
from pathlib import Path

from bench_config import model_config


def note(doc: dict, revision: int) -> str:
    extra = f"\n\nRevision {revision} of this note.\n" if revision else "\n"
    return f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}{extra}"


def file_name(doc: dict) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", doc["_id"]) + ".md"


def run(kebab: str, env: dict, *args: str, stdin: str = "") -> tuple[float, str]:
    start = time.perf_counter()
    out = subprocess.run([kebab, "--json", *args], input=stdin, capture_output=True,
                         text=True, env=env)
    if out.returncode not in (0, 1):  # 1: no hit (the empty start-up call)
        raise SystemExit(f"{args[0]} failed ({out.returncode}): {out.stdout[-500:]}{out.stderr[-500:]}")
    return time.perf_counter() - start, out.stdout


def lance_state(data: Path) -> tuple[int, int]:
    """(versions, bytes) of every LanceDB table under `data`."""
    versions = sum(1 for p in data.rglob("*.manifest") if p.parent.name == "_versions")
    size = sum(p.stat().st_size for p in data.rglob("*") if p.is_file() and ".lance" in str(p))
    return versions, size


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("assets")
    ap.add_argument("beir")
    ap.add_argument("work")
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--changed", type=int, default=25)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--settle", type=float, default=0)
    a = ap.parse_args()
    beir, work = Path(a.beir), Path(a.work)
    corpus = [json.loads(l) for l in (beir / "corpus.jsonl").open()][: a.docs]
    queries = [json.loads(l)["text"] for l in (beir / "queries.jsonl").open()][: a.queries]
    bulk = "".join(json.dumps({"query": q, "mode": "vector", "k": 10}) + "\n" for q in queries)
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "config.toml"
    cfg.write_text(model_config(a.assets))
    data, docs = work / "data", work / "docs"
    env = dict(os.environ, KEBAB_CONFIG=str(cfg), KEBAB_DATA_DIR=str(data))
    docs.mkdir(parents=True, exist_ok=True)
    for doc in corpus:
        (docs / file_name(doc)).write_text(note(doc, 0))

    rounds = list(range(a.rounds + 1)) + (["settled"] if a.settle else [])
    for round_ in rounds:
        if round_ == "settled":
            time.sleep(a.settle)
        elif round_:
            start = (round_ - 1) * a.changed % len(corpus)
            for i in range(start, start + a.changed):
                doc = corpus[i % len(corpus)]
                (docs / file_name(doc)).write_text(note(doc, round_))
        ingest_s, out = run(a.kebab, env, "ingest", str(docs))
        report = json.loads(out.strip().splitlines()[-1])
        vectors = report.get("vectors") or {}
        run(a.kebab, env, "search", "--bulk", stdin=bulk)  # page cache warm
        times = [run(a.kebab, env, "search", "--bulk", stdin=bulk)[0] for _ in range(3)]
        startup = min(run(a.kebab, env, "search", "--bulk", stdin="")[0] for _ in range(2))
        versions, size = lance_state(data)
        print(json.dumps({
            "round": round_, "ingest_s": round(ingest_s, 1),
            "embedded": vectors.get("embedded"), "removed": vectors.get("removed"),
            "rows": vectors.get("total"), "fragments": vectors.get("fragments"),
            "versions": versions, "lance_mb": round(size / 2**20, 2),
            "vector_ms_per_query": round((min(times) - startup) / len(queries) * 1000, 2),
        }), flush=True)


if __name__ == "__main__":
    main()
