#!/usr/bin/env python3
"""kebab's lexical search and qmd's BM25 search side by side on one BEIR
corpus, the same queries, one process per query for both (BENCHMARKS.md
"Side by side with qmd").

usage: bench_qmd.py KEBAB DATA_DIR QMD BEIR_DIR [--limit 200] [--words N]

DATA_DIR: a kebab data dir that indexed BEIR_DIR's corpus as
`<corpus-id>.md` files (what `kebab eval beir` leaves under
`eval/beir-<name>/`). QMD: the `qmd` executable (npm `@tobilu/qmd`, needs
Node >= 22) with a collection of the same `<corpus-id>.md` files in its
index (`qmd collection add DIR`). Prints, per engine, nDCG@10 against
qrels/test.tsv and the p50/p95 wall time of one search process.
`--words N` keeps only the first N words of four letters or more of each
query (keyword queries instead of whole claims).
"""
import argparse
import json
import math
import re
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mcp import pct  # noqa: E402


def ndcg_at_10(ranked: list[str], relevant: dict[str, int]) -> float:
    dcg = sum(relevant.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:10]))
    ideal = sorted(relevant.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def timed(cmd: list[str]) -> tuple[float, str]:
    t = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    ms = (time.perf_counter() - t) * 1000
    if out.returncode not in (0, 1):  # kebab: 1 = no hit
        raise SystemExit(f"{cmd[0]} failed ({out.returncode}): {out.stderr[-500:]}")
    return ms, out.stdout


def kebab_ids(stdout: str) -> list[str]:
    hits = json.loads(stdout)["hits"] if stdout.strip() else []
    return [Path(h["doc_path"]).stem for h in hits]


def qmd_ids(stdout: str) -> list[str]:
    return [Path(h["file"]).stem for h in (json.loads(stdout) if stdout.strip() else [])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("data_dir")
    ap.add_argument("qmd")
    ap.add_argument("beir")
    ap.add_argument("--limit", type=int, default=200)
    ap.add_argument("--words", type=int, default=0)
    a = ap.parse_args()
    beir = Path(a.beir)
    qrels: dict[str, dict[str, int]] = {}
    for line in (beir / "qrels/test.tsv").read_text().splitlines()[1:]:
        q, d, g = line.split("\t")
        qrels.setdefault(q, {})[d] = int(g)
    queries = [json.loads(l) for l in (beir / "queries.jsonl").read_text().splitlines() if l]
    queries = [(q["_id"], q["text"]) for q in queries if q["_id"] in qrels][: a.limit]
    if a.words:
        queries = [(qid, " ".join([w for w in re.findall(r"\w+", text) if len(w) >= 4][: a.words]))
                   for qid, text in queries]
    engines = {
        "kebab lexical": (lambda text: [a.kebab, "--data-dir", a.data_dir, "--json", "search",
                                        text, "--mode", "lexical", "--k", "10"], kebab_ids),
        "qmd search": (lambda text: [a.qmd, "search", text, "--format", "json", "-n", "10"],
                       qmd_ids),
    }
    for name, (command, ids) in engines.items():
        times, scores, empty = [], [], 0
        for qid, text in queries:
            ms, out = timed(command(text))
            ranked = ids(out)
            empty += not ranked
            times.append(ms)
            scores.append(ndcg_at_10(ranked, qrels[qid]))
        print(json.dumps({"engine": name, "queries": len(queries),
                          "ndcg_at_10": round(sum(scores) / len(scores), 4),
                          "no_hit": empty, "p50_ms": round(pct(times, 50), 1),
                          "p95_ms": round(pct(times, 95), 1)}), flush=True)


if __name__ == "__main__":
    main()
