"""Per-call latency through `kebab mcp` next to the cold CLI, on a generated
corpus (BENCHMARKS.md, "MCP server").

usage: python3 scripts/bench_mcp.py KEBAB_BINARY ASSETS_DIR [--docs 5000] [--calls 200]
           [--work DIR]

With --work, the corpus and index live in DIR and a second run (say, with
another build of kebab) reuses them: its ingest finds nothing changed.

Generates DOCS markdown notes from a fixed vocabulary (seeded, so every run
indexes the same text), ingests them with the offline MiniLM model, then:
- cold CLI: `kebab search` as a new process per query (lexical, hybrid);
- warm MCP: CALLS `search` tool calls per mode through one `kebab mcp`
  server driven by the official MCP Python SDK;
and prints p50/p95 per path plus resident memory.
"""

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bench_config import model_config

TOPICS = [
    "raft consensus leader election log replication quorum term heartbeat",
    "sourdough starter flour hydration proofing crumb oven steam crust",
    "kubernetes deployment replica pod rollout readiness probe service",
    "postgres vacuum autovacuum dead tuples bloat index freeze wraparound",
    "marathon training tempo run long run taper carbohydrate pacing",
    "bloom filter false positive hash functions bit array membership",
    "tcp handshake syn ack sequence window congestion retransmission",
    "photography exposure aperture shutter iso histogram metering",
    "rust ownership borrow checker lifetime move semantics reference",
    "garden tomatoes blight pruning suckers watering compost mulch",
    "http caching etag max-age revalidation cdn stale-while-revalidate",
    "linux cgroups memory limit cpu shares pids controller hierarchy",
]
FILLER = (
    "notes about the week and what went well what to try next time "
    "checked the numbers again and wrote down a few questions for later"
).split()


def corpus(root, n, rng):
    for i in range(n):
        topic = TOPICS[i % len(TOPICS)].split()
        words = [rng.choice(topic if rng.random() < 0.5 else FILLER) for _ in range(70)]
        text = f"# Note {i} on {topic[0]} {topic[1]}\n\n{' '.join(words)} ref{i:05d}.\n"
        d = os.path.join(root, f"d{i % 50:02d}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"note{i:05d}.md"), "w") as f:
            f.write(text)


def queries(rng, n):
    out = []
    for _ in range(n):
        topic = rng.choice(TOPICS).split()
        out.append(" ".join(rng.sample(topic, 3)))
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def cold_cli(env, binary, qs, mode):
    """Wall time of one `kebab search` process per query, and the largest
    resident set any of them reached (each child's own rusage)."""
    times, rss_kb = [], 0
    for q in qs:
        t = time.perf_counter()
        p = subprocess.Popen(
            [binary, "--json", "search", q, "--k", "10", "--mode", mode],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        _, _, usage = os.wait4(p.pid, 0)
        times.append((time.perf_counter() - t) * 1000)
        rss_kb = max(rss_kb, usage.ru_maxrss)
    return times, rss_kb / 1024


def server_rss_mb():
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            with open(f"/proc/{pid}/status") as f:
                status = f.read()
        except OSError:
            continue
        ppid = int(status.split("PPid:")[1].split()[0])
        if ppid == me and len(cmd) > 1 and cmd[0].endswith(b"kebab") and cmd[1] == b"mcp":
            return int(status.split("VmRSS:")[1].split()[0]) / 1024
    return float("nan")


async def warm_mcp(env, binary, by_mode):
    params = StdioServerParameters(command=binary, args=["mcp"], env=env)
    out = {}
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as session:
            await session.initialize()
            # One untimed call per mode loads what that mode needs.
            for mode in by_mode:
                await session.call_tool("search", {"query": "warm up", "mode": mode})
            for mode, qs in by_mode.items():
                times = []
                for q in qs:
                    t = time.perf_counter()
                    r = await session.call_tool("search", {"query": q, "k": 10, "mode": mode})
                    times.append((time.perf_counter() - t) * 1000)
                    assert not r.is_error, r
                out[mode] = times
            out["rss_mb"] = server_rss_mb()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("assets")
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--cold", type=int, default=10)
    ap.add_argument("--work", help="keep the corpus and index here (reused when present)")
    a = ap.parse_args()
    rng = random.Random(7)
    work = a.work or tempfile.mkdtemp(prefix="kebab-bench-mcp-")
    root = os.path.join(work, "corpus")
    corpus(root, a.docs, rng)
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write(model_config(a.assets))
    env = dict(os.environ, KEBAB_CONFIG=config, KEBAB_DATA_DIR=os.path.join(work, "data"))
    t = time.perf_counter()
    ingest = subprocess.run([a.binary, "--json", "ingest", root], env=env,
                            capture_output=True, text=True, check=True)
    report = json.loads(ingest.stdout.strip().splitlines()[-1])
    print(f"corpus: {a.docs} documents, {report['chunks_indexed']} chunks, "
          f"ingested in {time.perf_counter() - t:.1f} s")
    qs = queries(rng, a.calls)
    rows = []
    for mode in ["lexical", "hybrid"]:
        times, rss = cold_cli(env, a.binary, qs[: a.cold], mode)
        rows.append((f"cold CLI {mode}", times, rss))
    warm = asyncio.run(warm_mcp(env, a.binary, {"lexical": qs, "vector": qs, "hybrid": qs}))
    for mode in ["lexical", "vector", "hybrid"]:
        rows.append((f"MCP warm {mode}", warm[mode], warm["rss_mb"]))
    print(f"{'path':<20} {'calls':>5} {'p50 ms':>8} {'p95 ms':>8} {'RSS MB':>8}")
    for name, times, rss in rows:
        print(f"{name:<20} {len(times):>5} {statistics.median(times):>8.1f} "
              f"{pct(times, 95):>8.1f} {rss:>8.0f}")


if __name__ == "__main__":
    sys.exit(main())
