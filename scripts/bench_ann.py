#!/usr/bin/env python3
"""ANN recall and warm hybrid latency at ~100k chunks of real text embedded
by the real model (BENCHMARKS.md, "Vector search at 100k chunks").

usage: python3 scripts/bench_ann.py KEBAB ASSETS WORK [--chunks 100000]
           [--queries 200] [--calls 200] [--nprobes 1,5,20,50] [--ef 15,40,100]
           [--refine 1,4] [--ann-min-rows N]

Corpus: the README/markdown files and then the Rust sources of the crates
pinned in Cargo.lock, read from the cargo registry the build fetched
(`~/.cargo/registry/src/*/<name>-<version>`): a developer's notes and code,
reproducible from the lock file. Chunks are small (`target_tokens = 40`,
model `max_length = 48`) so that embedding 100k of them with MiniLM on two
cores takes ~20 minutes, not hours; the vectors are the real model's.
Files are added crate by crate and ingested in rounds until the index holds
CHUNKS chunks (a re-run reuses WORK and ingests nothing new).

Then, on the index ingest built (IVF-HNSW-SQ above `ann_min_rows`):
- `kebab eval ann` over QUERIES queries (distinct markdown headings of the
  corpus, three words or more) for every nprobes × ef × refine setting:
  recall@10 against the exact scan, p50/p95 per search;
- CALLS warm `search` calls per mode through one `kebab mcp` server
  (the MCP Python SDK, as scripts/bench_mcp.py): p50/p95 and resident memory.
Prints one JSON line per result.
"""

import argparse
import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_mcp import pct, warm_mcp  # noqa: E402
from bench_config import model_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def locked_crates() -> list[Path]:
    """Registry source dirs of the crates in Cargo.lock, sorted by name."""
    lock = (ROOT / "Cargo.lock").read_text()
    pinned = sorted(set(re.findall(
        r'name = "([^"]+)"\nversion = "([^"]+)"\nsource = "registry', lock)))
    registries = sorted((Path.home() / ".cargo/registry/src").glob("*"))
    out = []
    for name, version in pinned:
        for reg in registries:
            d = reg / f"{name}-{version}"
            if d.is_dir():
                out.append(d)
                break
    return out


def corpus_files(crates: list[Path]):
    """Markdown of every crate first, then Rust sources, crate by crate."""
    for pattern in ("*.md", "*.rs"):
        for crate in crates:
            files = sorted(p for p in crate.rglob(pattern)
                           if p.is_file() and "/target/" not in str(p))
            if files:
                yield crate, files


def kebab(binary: str, env: dict, *args: str, stdin: str = "") -> dict:
    out = subprocess.run([binary, "--json", *args], input=stdin, env=env,
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"kebab {args[0]} failed ({out.returncode}): {out.stderr[-800:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def indexed_chunks(binary: str, env: dict) -> int:
    return kebab(binary, env, "schema")["stats"]["chunks"]


def headings(corpus: Path, n: int) -> list[str]:
    """Distinct markdown headings of three words or more, in file order."""
    seen, out = set(), []
    for md in sorted(corpus.rglob("*.md")):
        for line in md.read_text(errors="replace").splitlines():
            m = re.match(r"#{1,4}\s+(.+)", line)
            if not m:
                continue
            text = re.sub(r"[`*_\[\]()<>#]", " ", m.group(1))
            text = " ".join(text.split())
            if len(text.split()) >= 3 and text.lower() not in seen:
                seen.add(text.lower())
                out.append(text)
    # Spread over the corpus rather than the first few crates.
    step = max(1, len(out) // n)
    return out[::step][:n]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("assets")
    ap.add_argument("work")
    ap.add_argument("--chunks", type=int, default=100_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--nprobes", default="1,5,20,50")
    ap.add_argument("--ef", default="15,40,100")
    ap.add_argument("--refine", default="1,4")
    ap.add_argument("--ann-min-rows", type=int,
                    help="[search] ann_min_rows: index smaller corpora than the default does")
    a = ap.parse_args()
    work = Path(a.work)
    corpus = work / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    config = work / "config.toml"
    config.write_text(
        model_config(a.assets)
        + "max_length = 48\n\n[chunking]\ntarget_tokens = 40\noverlap_tokens = 0\n"
        + (f"\n[search]\nann_min_rows = {a.ann_min_rows}\n" if a.ann_min_rows else "")
    )
    env = dict(os.environ, KEBAB_CONFIG=str(config), KEBAB_DATA_DIR=str(work / "data"))

    # Ingest in rounds of ~15k estimated chunks until the target is reached.
    chunks = indexed_chunks(a.binary, env) if (work / "data").exists() else 0
    pending, estimate, ingest_s = 0, chunks, 0.0
    sources = corpus_files(locked_crates())
    while chunks < a.chunks:
        for crate, files in sources:
            for f in files:
                dest = corpus / crate.name / f.relative_to(crate)
                if not dest.exists():
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(f, dest)
                    # ~200 bytes of text per 40-token chunk.
                    pending += max(1, f.stat().st_size // 200)
            if estimate + pending >= min(a.chunks, chunks + 15_000):
                break
        else:
            if pending == 0:
                raise SystemExit(f"corpus exhausted at {chunks} chunks")
        t = time.perf_counter()
        report = kebab(a.binary, env, "ingest", str(corpus))
        round_s = time.perf_counter() - t
        ingest_s += round_s
        chunks = indexed_chunks(a.binary, env)
        estimate, pending = chunks, 0
        print(json.dumps({"ingest_round_s": round(round_s, 1),
                          "chunks": chunks, "new": report.get("new"),
                          "ann_index": (report.get("vectors") or {}).get("ann_index")}),
              flush=True)
    print(json.dumps({"chunks": chunks, "ingest_s_this_run": round(ingest_s, 1),
                      "disk_mb": round(sum(p.stat().st_size for p in (work / "data").rglob("*")
                                           if p.is_file()) / 2**20, 1)}), flush=True)

    qs = headings(corpus, a.queries)
    qfile = work / "queries.txt"
    qfile.write_text("\n".join(qs) + "\n")
    sweep = ["eval", "ann", "--queries", str(qfile)]
    for flag, values in (("--nprobes", a.nprobes), ("--ef", a.ef), ("--refine", a.refine)):
        for v in values.split(","):
            sweep += [flag, v]
    ann = kebab(a.binary, env, *sweep)
    print(json.dumps({"rows": ann["rows"], "indexed": ann["indexed"], "queries": ann["queries"],
                      "exact": ann["exact"]}), flush=True)
    for row in ann["settings"]:
        print(json.dumps(row), flush=True)
    configured = kebab(a.binary, env, "eval", "ann", "--queries", str(qfile))["settings"][0]
    print(json.dumps({"configured": configured}), flush=True)

    by_mode = {m: [qs[i % len(qs)] for i in range(a.calls)] for m in ("lexical", "vector", "hybrid")}
    warm = asyncio.run(warm_mcp(env, a.binary, by_mode))
    for mode in by_mode:
        print(json.dumps({"mcp_warm": mode, "calls": a.calls,
                          "p50_ms": round(pct(warm[mode], 50), 1),
                          "p95_ms": round(pct(warm[mode], 95), 1)}), flush=True)
    print(json.dumps({"mcp_server_rss_mb": round(warm["rss_mb"])}), flush=True)


if __name__ == "__main__":
    main()
