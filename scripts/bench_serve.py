"""Throughput and latency of `kebab serve` with 1, 4 and 16 concurrent
clients (BENCHMARKS.md, "kebab serve"), and the memory of N editor
sessions: N `kebab mcp` serving in process vs N forwarding to one server.

usage: python3 scripts/bench_serve.py KEBAB_BINARY ASSETS_DIR [--docs 5000]
           [--seconds 10] [--clients 1,4,16] [--sessions 4] [--work DIR] [--api]

The corpus is bench_mcp.py's (seeded markdown notes over 12 topics,
ingested with the offline MiniLM model); with --work it is kept and a
second run reuses its index. Then one `kebab serve --listen 127.0.0.1:0`
runs on the index and, per mode (lexical, hybrid) and client count, that
many threads each call `search` (k = 10, 3-word queries) over the MCP
endpoint for SECONDS: every thread is its own MCP session of the official
Python SDK's Streamable HTTP client, so the protocol and the HTTP round
trip are in the figures (with --api, each thread instead keeps one HTTP
connection to the JSON API's `GET /v1/search`, a client light enough that
the two cores are the server's). Prints p50/p95 per call, calls/s, the server's
RSS (VmRSS, and the peak VmHWM) and the server's CPU time per call (the
rest of the two cores' time went to the Python clients).
"""

import argparse
import asyncio
import http.client
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

import httpx2
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from bench_config import model_config
from bench_mcp import corpus, pct, queries


def status_mb(pid, key):
    """`key` of /proc/PID/status in MB."""
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(rf"^{key}:\s+(\d+)", f.read(), re.M).group(1)) / 1024


def start_server(binary, env):
    """`kebab serve` on a free port: the process and its base URL."""
    p = subprocess.Popen(
        [binary, "serve", "--listen", "127.0.0.1:0", "--queue", "256"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    for line in p.stderr:
        m = re.search(r"listening on (http://\S+)", line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stderr], daemon=True).start()
            return p, m.group(1)
    raise SystemExit("kebab serve did not start")


async def client(url, mode, qs, until, times):
    """One MCP session calling `search` until `until`."""
    async with httpx2.AsyncClient(timeout=httpx2.Timeout(60)) as http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.list_tools()
                i = 0
                while time.perf_counter() < until:
                    q = qs[i % len(qs)]
                    i += 1
                    t = time.perf_counter()
                    r = await s.call_tool("search", {"query": q, "k": 10, "mode": mode})
                    times.append((time.perf_counter() - t) * 1000)
                    assert not r.is_error, r.structured_content


def api_client(base, mode, qs, until, times):
    """One keep-alive HTTP connection calling `GET /v1/search` until
    `until`: the same engine and dispatch as the MCP tool, with a client
    that costs little CPU."""
    conn = http.client.HTTPConnection(base.split("//", 1)[1], timeout=60)
    i = 0
    while time.perf_counter() < until:
        q = qs[i % len(qs)]
        i += 1
        t = time.perf_counter()
        conn.request("GET", "/v1/search?" + urllib.parse.urlencode({"q": q, "k": 10, "mode": mode}))
        r = conn.getresponse()
        body = r.read()
        times.append((time.perf_counter() - t) * 1000)
        assert r.status == 200, body[:300]
    conn.close()


def load(url, mode, qs, n, seconds, api=False):
    """`n` clients, each in a thread of its own (its own event loop), for
    `seconds`; every call's latency. `api`: HTTP JSON API clients on the
    server's base URL instead of MCP sessions."""
    times = []
    until = time.perf_counter() + seconds

    def one(k):
        mine = qs[k:] + qs[:k]
        if api:
            api_client(url, mode, mine, until, times)
        else:
            asyncio.run(client(url, mode, mine, until, times))

    threads = [threading.Thread(target=one, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return times


async def mcp_session(binary, env, ready, stop):
    """One stdio `kebab mcp` session that has made a hybrid search."""
    params = StdioServerParameters(command=binary, args=["mcp"], env=env)
    async with stdio_client(params) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            await s.call_tool("search", {"query": "raft leader", "mode": "hybrid"})
            ready.release()
            while not stop.is_set():
                await asyncio.sleep(0.1)


def kebab_mcp_rss(n, binary, env):
    """Total RSS (MB) of the `kebab mcp` processes of `n` sessions."""
    ready, stop = threading.Semaphore(0), threading.Event()
    threads = [
        threading.Thread(target=lambda: asyncio.run(mcp_session(binary, env, ready, stop)))
        for _ in range(n)
    ]
    for t in threads:
        t.start()
    for _ in range(n):
        ready.acquire()
    total = 0.0
    me = str(os.getpid())
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read().split(b"\0")
            ppid = status_ppid(pid)
        except OSError:
            continue
        named = os.path.basename(cmd[0]) == os.path.basename(binary).encode()
        if ppid == me and named and cmd[1:2] == [b"mcp"]:
            total += status_mb(pid, "VmRSS")
    stop.set()
    for t in threads:
        t.join()
    return total


def cpu_seconds(pid):
    """User + system CPU time of process PID so far, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_ppid(pid):
    with open(f"/proc/{pid}/status") as f:
        return re.search(r"^PPid:\s+(\d+)", f.read(), re.M).group(1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("assets")
    ap.add_argument("--docs", type=int, default=5000)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--clients", default="1,4,16")
    ap.add_argument("--sessions", type=int, default=4)
    ap.add_argument("--work", help="keep the corpus and index here (reused when present)")
    ap.add_argument("--config-extra", default="",
                    help="TOML appended to the config, e.g. '[search]\\nann_ef = 40'")
    ap.add_argument("--api", action="store_true",
                    help="load the HTTP JSON API (GET /v1/search) with light clients, not MCP sessions")
    a = ap.parse_args()
    rng = random.Random(7)
    work = a.work or tempfile.mkdtemp(prefix="kebab-bench-serve-")
    root = os.path.join(work, "corpus")
    corpus(root, a.docs, rng)
    config = os.path.join(work, "config.toml")
    with open(config, "w") as f:
        f.write(model_config(a.assets) + a.config_extra.replace("\\n", "\n") + "\n")
    env = dict(os.environ, KEBAB_CONFIG=config, KEBAB_DATA_DIR=os.path.join(work, "data"))
    env.pop("KEBAB_SERVE_TOKEN", None)
    subprocess.run([a.binary, "--json", "ingest", root], env=env, capture_output=True, check=True)
    qs = queries(rng, 500)

    server, base = start_server(a.binary, env)
    try:
        url = f"{base}/mcp"
        print(f"{'mode':<8} {'clients':>7} {'calls':>6} {'p50 ms':>8} {'p95 ms':>8} "
              f"{'calls/s':>8} {'RSS MB':>7} {'server CPU ms/call':>18}")
        for mode in ["lexical", "hybrid"]:
            load(url, mode, qs, 1, 1)  # warm: what this mode needs is loaded
            for n in [int(c) for c in a.clients.split(",")]:
                cpu = cpu_seconds(server.pid)
                times = load(base if a.api else url, mode, qs, n, a.seconds, a.api)
                per_call = (cpu_seconds(server.pid) - cpu) * 1000 / max(1, len(times))
                print(f"{mode:<8} {n:>7} {len(times):>6} {statistics.median(times):>8.1f} "
                      f"{pct(times, 95):>8.1f} {len(times) / a.seconds:>8.1f} "
                      f"{status_mb(server.pid, 'VmRSS'):>7.0f} {per_call:>18.2f}")
        print(f"server peak RSS (VmHWM): {status_mb(server.pid, 'VmHWM'):.0f} MB")
        # N editor sessions forwarding to this server.
        forwarding = kebab_mcp_rss(a.sessions, a.binary, env)
        print(f"{a.sessions} x kebab mcp forwarding: {forwarding:.0f} MB in total, "
              f"+ the server's {status_mb(server.pid, 'VmRSS'):.0f} MB")
    finally:
        server.terminate()
        server.wait()
    alone = kebab_mcp_rss(a.sessions, a.binary, env)
    print(f"{a.sessions} x kebab mcp in process: {alone:.0f} MB in total")


if __name__ == "__main__":
    sys.exit(main())
