#!/usr/bin/env python3
"""Lexical index size and query latency as the corpus grows.

Writes a BEIR corpus (corpus.jsonl) as markdown files, COPIES times over
(each copy its own folder, so every chunk is distinct by path), ingests
them lexical-only with the given kebab binary, and times `search --bulk`
over the first QUERIES queries at each size. Prints one line per size:
chunks, SQLite bytes, ingest seconds, ms/query.

usage: bench_scale.py KEBAB BEIR_DIR WORK_DIR [--copies 1,10,20] [--queries 200]
"""

import argparse
import json
import os
import re
import subprocess
import time
from pathlib import Path


def write_copy(corpus: list, root: Path, copy: int) -> None:
    folder = root / f"copy{copy:03d}"
    folder.mkdir(parents=True, exist_ok=True)
    for doc in corpus:
        name = re.sub(r"[^A-Za-z0-9_-]", "_", doc["_id"])
        text = f"# {doc.get('title') or doc['_id']}\n\n{doc['text']}\n"
        (folder / f"{name}.md").write_text(text)


def run(kebab: str, data: Path, cfg: Path, *args: str, stdin: str = "") -> tuple[float, str]:
    env = dict(os.environ, KEBAB_CONFIG=str(cfg))
    start = time.perf_counter()
    out = subprocess.run(
        [kebab, "--data-dir", str(data), "--json", *args],
        input=stdin, capture_output=True, text=True, env=env,
    )
    # 1 is "no hit" (the empty call that measures start-up).
    if out.returncode not in (0, 1):
        raise SystemExit(f"{args[0]} failed ({out.returncode}): {out.stdout[-500:]}")
    return time.perf_counter() - start, out.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("beir")
    ap.add_argument("work")
    ap.add_argument("--copies", default="1,10,20")
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    beir, work = Path(a.beir), Path(a.work)
    corpus = [json.loads(l) for l in (beir / "corpus.jsonl").open()]
    queries = [json.loads(l)["text"] for l in (beir / "queries.jsonl").open()][: a.queries]
    bulk = "".join(json.dumps({"query": re.sub(r"[^\w\s]", " ", q), "mode": "lexical", "k": 10}) + "\n"
                   for q in queries)
    cfg = work / "config.toml"
    work.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[models.embedding]\nmodel = ""\n')
    data, docs = work / "data", work / "docs"
    written = 0
    for size in [int(c) for c in a.copies.split(",")]:
        while written < size:
            write_copy(corpus, docs, written)
            written += 1
        ingest_s, out = run(a.kebab, data, cfg, "ingest", str(docs))
        report = json.loads(out.strip().splitlines()[-1])
        db = data / "kebab.sqlite"
        db_bytes = sum(p.stat().st_size for p in data.glob("kebab.sqlite*"))
        run(a.kebab, data, cfg, "search", "--bulk", stdin=bulk)  # warm the page cache
        times = [run(a.kebab, data, cfg, "search", "--bulk", stdin=bulk)[0] for _ in range(3)]
        startup, _ = run(a.kebab, data, cfg, "search", "--bulk", stdin="")
        per_query = (min(times) - startup) / len(queries) * 1000
        chunks = report.get("chunks", {})
        print(json.dumps({
            "copies": size, "documents": size * len(corpus), "report_chunks": chunks,
            "sqlite_mb": round(db_bytes / 2**20, 1), "ingest_s": round(ingest_s, 1),
            "lexical_ms_per_query": round(per_query, 2), "queries": len(queries),
        }), flush=True)
        assert db.exists()


if __name__ == "__main__":
    main()
