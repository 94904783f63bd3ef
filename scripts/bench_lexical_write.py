#!/usr/bin/env python3
"""Search while a writer runs: the lexical channel's per-query time while
an ingest adds chunks to an index bench_lexical.py built.

Takes a work directory of bench_lexical.py (docs/, data/, config.toml:
lexical only), writes ADD more copies of the SciFact abstracts in new
folders, starts `kebab ingest docs/` in the background and, until it
ends, calls `search --bulk` over the first QUERIES claims (punctuation
removed, k = 10, lexical) again and again; then once more after it.
Per call: how many queries the lexical index answered (its `engine_ms`
is logged only then; the others fell back to FTS5), the channel's
p50/p95 (`lexical_ms`), and the reader's catch-ups with the chunks the
writer changed (how many it read, in how many ms; the largest). Prints one JSON line for the calls during the
write and one for the call after. The added folders are removed and the
tree ingested again at the end, so the work directory is as it was.

usage: bench_lexical_write.py KEBAB BEIR_DIR WORK_DIR [--add 2] [--queries 20] [--per-file 10]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

from bench_lexical import bulk_of, ingest_lexical, logged_ms, p50_p95, plain_log, run, write_copy


def catch_ups(log: str) -> list:
    """(changed chunks read, milliseconds) of every catch-up a reader's
    debug log records."""
    return [(int(n), float(ms)) for n, ms in
            re.findall(r"changed=([0-9]+) held=[0-9]+ ms=([0-9.]+)", plain_log(log))]


def figures(channel: list, engine: list, caught_up: list, queries: int) -> dict:
    p50, p95 = p50_p95(channel)
    return {
        "queries": queries,
        "answered_by_index": len(engine),
        "channel_p50_ms": p50,
        "channel_p95_ms": p95,
        "channel_max_ms": round(max(channel), 3),
        "catch_ups": len(caught_up),
        "catch_up_max": max(caught_up, default=None),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("beir")
    ap.add_argument("work")
    ap.add_argument("--add", type=int, default=2, help="copies of the abstracts the writer adds")
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--per-file", type=int, default=10)
    a = ap.parse_args()
    beir, work = Path(a.beir), Path(a.work)
    data, docs, cfg = work / "data", work / "docs", work / "config.toml"
    corpus = [json.loads(l) for l in (beir / "corpus.jsonl").open()]
    queries = [json.loads(l)["text"] for l in (beir / "queries.jsonl").open()][: a.queries]
    bulk = bulk_of(queries)
    added = [9000 + i for i in range(a.add)]
    for copy in added:
        write_copy(corpus, docs, copy, a.per_file)
    run(a.kebab, data, cfg, "search", "--bulk", stdin=bulk)  # warm the page cache
    writer = subprocess.Popen(
        [a.kebab, "--data-dir", str(data), "--json", "ingest", str(docs)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env=dict(os.environ, KEBAB_CONFIG=str(cfg)),
    )
    started = time.perf_counter()
    channel, engine, caught_up, calls = [], [], [], 0
    try:
        while writer.poll() is None:
            _, _, err = run(a.kebab, data, cfg, "search", "--bulk", stdin=bulk, debug=True)
            if writer.poll() is not None:
                break  # this call may have run after the write: not counted
            in_call, by_engine = logged_ms(err)
            channel.extend(in_call)
            engine.extend(by_engine)
            caught_up.extend(catch_ups(err))
            calls += 1
    finally:
        if writer.poll() is None:  # a search failed: do not leave the writer behind
            writer.kill()
            writer.wait(timeout=60)
    write_s = time.perf_counter() - started
    assert writer.returncode == 0, f"ingest failed ({writer.returncode})"
    if calls:
        print(json.dumps({"during_write": figures(channel, engine, caught_up, calls * len(queries)),
                          "calls": calls, "write_s": round(write_s, 1)}))
    _, _, err = run(a.kebab, data, cfg, "search", "--bulk", stdin=bulk, debug=True)
    print(json.dumps({"after_write": figures(*logged_ms(err), catch_ups(err), len(queries))}))
    for copy in added:
        shutil.rmtree(docs / f"copy{copy:04d}")
    ingest_lexical(a.kebab, data, cfg, docs)


if __name__ == "__main__":
    main()
