#!/usr/bin/env python3
"""Whole-ingest time of two kebab builds on the same corpus, alternately,
each run into a fresh data directory: what embedding beside parsing (the
bounded pipeline of crates/kebab/src/ingest/embed_ahead.rs) saves over embedding
after the document pass.

The corpus is either the first DOCS documents of a BEIR corpus written as
markdown notes (as bench_index_hygiene.py writes them) or, with --dir, an
existing folder. Per run it prints one JSON line: wall seconds, CPU
seconds (user + sys of the ingest process), the report's stage timings,
and how many chunks got their vector before the last file was stored
(from the `ingest_progress.v1` lines). Then the median wall time per build
and their ratio.

usage: bench_ingest_overlap.py BEFORE AFTER ASSETS WORK
           (--beir BEIR_DIR [--docs 2000] | --dir DIR) [--runs 3] [--compute auto]
"""

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import time
from pathlib import Path

from bench_config import model_config
from bench_index_hygiene import file_name, note


def ingest(kebab: str, env: dict, corpus: Path) -> dict:
    """One ingest: wall and CPU seconds, stage timings, chunks embedded
    before the last file was stored."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run([kebab, "--json", "ingest", str(corpus)], capture_output=True,
                         text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"ingest failed ({out.returncode}): {out.stderr[-800:]}")
    lines = [json.loads(l) for l in out.stdout.splitlines()]
    report, events = lines[-1], lines[:-1]
    last_file = max(i for i, e in enumerate(events) if e["kind"] == "asset_finished")
    early = sum(e["n_chunks"] for e in events[:last_file] if e["kind"] == "embed_batch_finished")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "chunks": report["chunks_indexed"],
        "embedded": report["vectors"]["embedded"],
        "embedded_before_last_file": early,
        "timings_ms": {k: round(v) for k, v in report["timings"].items()},
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("assets")
    ap.add_argument("work")
    ap.add_argument("--beir")
    ap.add_argument("--docs", type=int, default=2000)
    ap.add_argument("--dir")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--compute", default="auto")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    if a.dir:
        corpus = Path(a.dir)
    else:
        corpus = work / "docs"
        corpus.mkdir(exist_ok=True)
        with (Path(a.beir) / "corpus.jsonl").open() as f:
            for doc in [json.loads(l) for l in f][: a.docs]:
                (corpus / file_name(doc)).write_text(note(doc, 0))
    cfg = work / "config.toml"
    cfg.write_text(model_config(a.assets) + f'compute = "{a.compute}"\n')
    # Warm-up: each build compiles its plugins to machine code once.
    warm = work / "warm-up"
    warm.mkdir(exist_ok=True)
    (warm / "a.md").write_text("# Warm-up\n\nOne note.\n")
    for label, kebab in (("before", a.before), ("after", a.after)):
        data = work / f"data-{label}"
        shutil.rmtree(data, ignore_errors=True)
        ingest(kebab, dict(os.environ, KEBAB_CONFIG=str(cfg), KEBAB_DATA_DIR=str(data)), warm)
    walls: dict[str, list[float]] = {"before": [], "after": []}
    for run in range(a.runs):
        for label, kebab in (("before", a.before), ("after", a.after)):
            data = work / f"data-{label}"
            shutil.rmtree(data, ignore_errors=True)
            env = dict(os.environ, KEBAB_CONFIG=str(cfg), KEBAB_DATA_DIR=str(data))
            result = ingest(kebab, env, corpus)
            walls[label].append(result["wall_s"])
            print(json.dumps({"build": label, "run": run, **result}), flush=True)
    median = {k: statistics.median(v) for k, v in walls.items()}
    print(json.dumps({
        "median_wall_s": median,
        "after_over_before": round(median["after"] / median["before"], 3),
    }))


if __name__ == "__main__":
    main()
