#!/usr/bin/env python3
"""The lexical channel as the index grows: the lexical index (tantivy,
block-max WAND) against the FTS5 table it replaced, on the same chunks.

Writes a BEIR corpus (corpus.jsonl) as markdown files, PER_FILE abstracts
per file (each under its own heading, so each is one chunk), COPIES times
over in distinct folders, ingests it lexical-only with the given kebab
binary (under GNU time, for its peak RSS), and for each size times `search --bulk` over the first QUERIES
queries (punctuation removed, k = 10) twice: as it is (the lexical index
answers), then with `lexical/` moved aside (search falls back to FTS5).
Per query it reads kebab's own debug figures for p50/p95: `lexical_ms`
(the channel: engine, filter and joining the hits' rows) and `engine_ms`
(tantivy's search alone, when the lexical index answered), and the
bulk call's wall time minus one call's start-up for the end-to-end mean.
A third run asks the lexical index the same queries restricted to the
first copy (`path: copy0000/*`), a filter that keeps 1/COPIES of the
chunks. With --tantivy-cli, tantivy-cli indexes the same abstracts (title
and body, each abstract a document) and `tantivy bench` times the same
queries (top 10 + count) in the same run. With --assets, the last size's
chunks are then embedded with the bundled model and the lexical, vector
and hybrid modes timed on it (`total_ms`: every channel's candidates,
the query's embedding included). Prints one JSON line per size (and one
for the model step).

usage: bench_lexical.py KEBAB BEIR_DIR WORK_DIR [--copies 1,10,100] [--queries 100] [--per-file 10]
           [--tantivy-cli TANTIVY] [--assets ASSETS]
"""

import argparse
import json
import os
import re
import shutil
import sqlite3
import statistics
import subprocess
import time
from pathlib import Path

from bench_config import model_config


def write_copy(corpus: list, root: Path, copy: int, per_file: int) -> None:
    folder = root / f"copy{copy:04d}"
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, len(corpus), per_file):
        part = corpus[start : start + per_file]
        text = "".join(f"# {d.get('title') or d['_id']}\n\n{d['text']}\n\n" for d in part)
        (folder / f"part{start // per_file:05d}.md").write_text(text)


def run(kebab: str, data: Path, cfg: Path, *args: str, stdin: str = "", debug: bool = False,
        direct: bool = False):
    """Run kebab on DATA with CFG (ARGS as they are with DIRECT, which
    lets a wrapper such as GNU time come first)."""
    env = dict(os.environ, KEBAB_CONFIG=str(cfg))
    if debug:
        env["RUST_LOG"] = "kebab_search=debug,kebab_store=debug"
    start = time.perf_counter()
    out = subprocess.run(
        [kebab, *args] if direct else [kebab, "--data-dir", str(data), "--json", *args],
        input=stdin, capture_output=True, text=True, env=env,
    )
    # 1 is "no hit" (the empty call that measures start-up).
    if out.returncode not in (0, 1):
        raise SystemExit(f"{args[0]} failed ({out.returncode}): {out.stdout[-500:]}{out.stderr[-500:]}")
    return time.perf_counter() - start, out.stdout, out.stderr


# tantivy-cli's index of the same abstracts: title and body, the default
# tokenizer, positions, stored (as `tantivy new` would write it).
TANTIVY_META = {
    "index_settings": {"docstore_compression": "lz4", "docstore_blocksize": 16384},
    "segments": [],
    "schema": [
        {"name": name, "type": "text", "options": {
            "indexing": {"record": "position", "fieldnorms": True, "tokenizer": "default"},
            "stored": True, "fast": False}}
        for name in ("title", "body")
    ],
    "opstamp": 0,
}


def tantivy_cli(binary: str, corpus: list, copies: int, work: Path, queries: list) -> dict:
    """The same abstracts COPIES times over indexed by tantivy-cli, and
    `tantivy bench` (top 10 + count, 3 rounds) over the same queries:
    its per-query times."""
    index = work / f"tantivy-cli-{copies}"
    shutil.rmtree(index, ignore_errors=True)
    index.mkdir(parents=True)
    (index / "meta.json").write_text(json.dumps(TANTIVY_META))
    docs = "".join(json.dumps({"title": d.get("title") or d["_id"], "body": d["text"]}) + "\n"
                   for _ in range(copies) for d in corpus)
    start = time.perf_counter()
    subprocess.run([binary, "index", "-i", str(index)], input=docs, text=True,
                   capture_output=True, check=True)
    index_s = time.perf_counter() - start
    qfile = work / "tantivy-cli-queries.txt"
    qfile.write_text("".join(re.sub(r"[^\w\s]", " ", q) + "\n" for q in queries))
    out = subprocess.run([binary, "bench", "-i", str(index), "-q", str(qfile), "-n", "3"],
                         capture_output=True, text=True, check=True).stdout
    search = out.split("SEARCH", 1)[1].split("FETCH STORE", 1)[0]
    millis = [int(line.rsplit("\t", 1)[1]) / 1000 for line in search.splitlines()
              if line.count("\t") == 2 and line.rsplit("\t", 1)[1].isdigit()]
    p50, p95 = p50_p95(millis)
    return {
        "index_s": round(index_s, 2),
        "index_mb": round(du(index) / 2**20, 1),
        "p50_ms": p50,
        "p95_ms": p95,
        "mean_ms": round(statistics.mean(millis), 3),
    }


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def p50_p95(values: list) -> tuple:
    """The median of VALUES and the value 95 % of them are at or below,
    rounded to the microsecond (VALUES in ms)."""
    ordered = sorted(values)
    return (round(statistics.median(ordered), 3),
            round(ordered[max(int(len(ordered) * 0.95) - 1, 0)], 3))


def plain_log(log: str) -> str:
    """A debug log without its colours."""
    return re.sub(r"\x1b\[[0-9;]*m", "", log)


def logged_ms(log: str, channel_field: str = "lexical_ms") -> tuple:
    """From a debug log of `search`: every query's CHANNEL_FIELD figure,
    and every `engine_ms` (logged only when the lexical index answered,
    not FTS5)."""
    plain = plain_log(log)
    return ([float(m) for m in re.findall(channel_field + r"=([0-9.]+)", plain)],
            [float(m) for m in re.findall(r"engine_ms=([0-9.]+)", plain)])


def measure(kebab: str, data: Path, cfg: Path, bulk: str, queries: int,
            channel_field: str = "lexical_ms") -> dict:
    """Per-query figures of `search --bulk` over BULK: p50/p95 of the
    channel (kebab's debug figure CHANNEL_FIELD: `lexical_ms`, or
    `total_ms`, the candidates of every channel the mode uses, query
    embedding included), of the lexical engine alone when it answered,
    and the end-to-end mean (a bulk call's wall time minus one call's
    start-up), the best of three calls after a warm-up."""
    run(kebab, data, cfg, "search", "--bulk", stdin=bulk)  # warm the page cache
    walls, channel, engine = [], [], []
    for _ in range(3):
        wall, _, err = run(kebab, data, cfg, "search", "--bulk", stdin=bulk, debug=True)
        walls.append(wall)
        in_call, by_engine = logged_ms(err, channel_field)
        channel.extend(in_call)
        engine.extend(by_engine)
    startup = min(run(kebab, data, cfg, "search", "--bulk", stdin="")[0] for _ in range(3))
    # The engine alone (tantivy's search, without the filter's SQL and the
    # hits' rows): only when the lexical index answered.
    engine_figures = dict(zip(("engine_p50_ms", "engine_p95_ms"), p50_p95(engine))) if engine else {}
    channel_p50, channel_p95 = p50_p95(channel)
    return {
        **engine_figures,
        "channel_p50_ms": channel_p50,
        "channel_p95_ms": channel_p95,
        "end_to_end_mean_ms": round((min(walls) - startup) / queries * 1000, 3),
    }


def bulk_of(queries: list, **extra) -> str:
    """`search --bulk` input asking each of QUERIES (punctuation removed)
    for the best 10 lexical hits, EXTRA overriding or adding fields."""
    return "".join(json.dumps({"query": re.sub(r"[^\w\s]", " ", q), "mode": "lexical", "k": 10, **extra})
                   + "\n" for q in queries)


def ingest_lexical(kebab: str, data: Path, cfg: Path, docs: Path) -> dict:
    """Ingest DOCS lexical-only (CFG has no model); what it took (time,
    peak RSS) and what the index then holds."""
    ingest_s, out, peak_rss = with_peak_rss(kebab, data, cfg, "ingest", str(docs))
    report = json.loads(out.strip().splitlines()[-1])
    assert report.get("errors") == 0, report
    return {
        "chunks": sqlite3.connect(f"file:{data / 'kebab.sqlite'}?mode=ro", uri=True)
                  .execute("SELECT count(*) FROM chunks").fetchone()[0],
        "ingest_s": round(ingest_s, 1),
        "ingest_peak_rss_mb": peak_rss,
        "lexical_ms_in_ingest": report.get("timings", {}).get("lexical_ms"),
        "sqlite_mb": round(sum(p.stat().st_size for p in data.glob("kebab.sqlite*")) / 2**20, 1),
        "lexical_index_mb": round(du(data / "lexical") / 2**20, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("beir")
    ap.add_argument("work")
    ap.add_argument("--copies", default="1,10,100")
    ap.add_argument("--queries", type=int, default=100, help="at most 100 (one bulk call)")
    ap.add_argument("--per-file", type=int, default=10)
    ap.add_argument("--fts5-up-to", type=int, default=20,
                    help="time FTS5 too while COPIES is at most this (it takes ~2 s a query at 1M chunks)")
    ap.add_argument("--tantivy-cli", help="tantivy-cli binary: index and time the same abstracts and queries beside kebab")
    ap.add_argument("--assets", help="the bundled model's assets (scripts/fetch-assets.sh): after the lexical "
                    "figures of the last size, embed its chunks and time the vector and hybrid modes too")
    a = ap.parse_args()
    beir, work = Path(a.beir), Path(a.work)
    corpus = [json.loads(l) for l in (beir / "corpus.jsonl").open()]
    queries = [json.loads(l)["text"] for l in (beir / "queries.jsonl").open()][: a.queries]
    bulk, filtered = bulk_of(queries), bulk_of(queries, path="copy0000/*")
    cfg = work / "config.toml"
    work.mkdir(parents=True, exist_ok=True)
    cfg.write_text('[models.embedding]\nmodel = ""\n')
    data, docs = work / "data", work / "docs"
    written = 0
    for size in [int(c) for c in a.copies.split(",")]:
        while written < size:
            write_copy(corpus, docs, written, a.per_file)
            written += 1
        lexical = data / "lexical"
        row = {
            "copies": size,
            **ingest_lexical(a.kebab, data, cfg, docs),
            "queries": len(queries),
            "lexical_index": measure(a.kebab, data, cfg, bulk, len(queries)),
            "lexical_index_filtered": measure(a.kebab, data, cfg, filtered, len(queries)),
        }
        if a.tantivy_cli:
            row["tantivy_cli"] = tantivy_cli(a.tantivy_cli, corpus, size, work, queries)
        if size <= a.fts5_up_to:
            aside = data / "lexical.aside"
            shutil.move(lexical, aside)
            try:
                row["fts5"] = measure(a.kebab, data, cfg, bulk, len(queries))
            finally:
                shutil.move(aside, lexical)
        print(json.dumps(row), flush=True)
    if a.assets:
        print(json.dumps(with_vectors(a.kebab, data, work, a.assets, queries)), flush=True)


def with_vectors(kebab: str, data: Path, work: Path, assets: str, queries: list) -> dict:
    """Embed the index's chunks with the bundled model (identical texts
    come from the vector cache) and time every mode on it; peak RSS of
    the ingest and of a lexical and a hybrid bulk call."""
    cfg = work / "config-model.toml"
    cfg.write_text(model_config(assets))
    ingest_s, out, ingest_rss = with_peak_rss(kebab, data, cfg, "ingest", str(work / "docs"))
    report = json.loads(out.strip().splitlines()[-1])
    row = {
        "ingest_with_model_s": round(ingest_s, 1),
        "ingest_peak_rss_mb": ingest_rss,
        "vectors": report.get("vectors"),
        "lancedb_mb": round(du(data / "lancedb") / 2**20, 1),
    }
    for mode in ("lexical", "vector", "hybrid"):
        row[mode] = measure(kebab, data, cfg, bulk_of(queries, mode=mode), len(queries), "total_ms")
    for mode in ("lexical", "hybrid"):
        row[f"{mode}_bulk_peak_rss_mb"] = with_peak_rss(
            kebab, data, cfg, "search", "--bulk", stdin=bulk_of(queries, mode=mode))[2]
    return row


def with_peak_rss(kebab: str, data: Path, cfg: Path, *args: str, stdin: str = ""):
    """`run` under GNU time (`apt-get install time`): wall seconds,
    stdout and the peak RSS in MB."""
    if not Path("/usr/bin/time").exists():
        raise SystemExit("peak RSS needs GNU time: apt-get install time")
    wall, out, err = run("/usr/bin/time", data, cfg, "-f", "%M", kebab, "--data-dir", str(data),
                         "--json", *args, stdin=stdin, direct=True)
    return wall, out, round(int(err.strip().splitlines()[-1]) / 1024)


if __name__ == "__main__":
    main()
