#!/usr/bin/env python3
"""The web page's time to first result, in a real browser (headless
Chromium through Selenium), against a `kebab serve` over an index of
COPIES × the BEIR corpus (lexical only), and the page's weight.

For each query the box is filled the way typing ends (its value set, one
`input` event), and the time is taken in the page from that event until
the hits are in the DOM (a MutationObserver on the result list). That
time includes the page's 200 ms debounce; the table also gives it without,
and the search request's own time from the browser's Resource Timing.

usage: bench_page.py KEBAB BEIR_DIR WORK_DIR [--copies 19] [--per-file 20] [--queries 50]
(WORK_DIR keeps the corpus and index: a second run reuses them.)
"""

import argparse
import gzip
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from bench_lexical import write_copy

DEBOUNCE_MS = 200

TIME_ONE = """
const [query, done] = [arguments[0], arguments[arguments.length - 1]];
const box = document.getElementById("q");
const results = document.getElementById("results");
const status = document.getElementById("status");
performance.clearResourceTimings();
const started = performance.now();
const observer = new MutationObserver(() => {
  if (status.textContent === "Searching…") return;
  observer.disconnect();
  const shown = performance.now();
  const request = performance.getEntriesByType("resource")
    .filter((e) => e.name.includes("/v1/search")).pop();
  done({ total: shown - started, request: request ? request.duration : null,
         hits: results.children.length });
});
observer.observe(status, { childList: true, characterData: true, subtree: true });
box.value = query;
box.dispatchEvent(new InputEvent("input", { inputType: "insertText", data: query }));
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def page_weight(base: str) -> dict:
    sizes = {}
    for path in ("/", "/page/app.js", "/page/app.css"):
        body = urllib.request.urlopen(base + path).read()
        sizes[path] = (len(body), len(gzip.compress(body, 9)))
    return sizes


def pct(values: list, p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("beir")
    ap.add_argument("work")
    ap.add_argument("--copies", type=int, default=19)
    ap.add_argument("--per-file", type=int, default=20)
    ap.add_argument("--queries", type=int, default=50)
    a = ap.parse_args()
    beir, work = Path(a.beir), Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    cfg = work / "config.toml"
    cfg.write_text('[models.embedding]\nmodel = ""\n')
    data, docs = work / "data", work / "docs"
    env = dict(os.environ, KEBAB_CONFIG=str(cfg))
    if not data.exists():
        corpus = [json.loads(l) for l in (beir / "corpus.jsonl").open()]
        for copy in range(a.copies):
            write_copy(corpus, docs, copy, a.per_file)
        started = time.perf_counter()
        subprocess.run([a.kebab, "--data-dir", str(data), "ingest", str(docs)],
                       env=env, check=True, stdout=subprocess.DEVNULL)
        print(f"ingest: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    schema = json.loads(subprocess.run([a.kebab, "--data-dir", str(data), "--json", "schema"],
                                       env=env, check=True, capture_output=True, text=True).stdout)
    chunks = schema["stats"]["chunks"]
    queries = [re.sub(r"[^\w\s]", " ", json.loads(l)["text"])
               for l in (beir / "queries.jsonl").open()][: a.queries]

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([a.kebab, "--data-dir", str(data), "serve", "--listen",
                               f"127.0.0.1:{port}"], env=env, stderr=subprocess.DEVNULL)
    from selenium import webdriver
    driver = None
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/healthz")
                break
            except OSError:
                time.sleep(0.1)
        options = webdriver.ChromeOptions()
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
            options.add_argument(arg)
        options.binary_location = "/usr/bin/chromium"
        driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(
            executable_path="/usr/bin/chromedriver"))
        driver.set_script_timeout(30)
        driver.get(base + "/")
        driver.execute_async_script(TIME_ONE, "warm up")
        runs = [driver.execute_async_script(TIME_ONE, q) for q in queries]
        total = [r["total"] for r in runs]
        request = [r["request"] for r in runs if r["request"] is not None]
        weight = page_weight(base)
    finally:
        if driver:
            driver.quit()
        server.terminate()
        server.wait()
    raw = sum(r for r, _ in weight.values())
    packed = sum(g for _, g in weight.values())
    print(f"chunks {chunks}, {len(runs)} queries, hits/query {statistics.mean(r['hits'] for r in runs):.1f}")
    print(f"first result after the last keystroke: p50 {pct(total, 50):.0f} ms, "
          f"p95 {pct(total, 95):.0f} ms (of which {DEBOUNCE_MS} ms debounce)")
    print(f"  without the debounce: p50 {pct(total, 50) - DEBOUNCE_MS:.0f} ms, "
          f"p95 {pct(total, 95) - DEBOUNCE_MS:.0f} ms")
    print(f"  the /v1/search request: p50 {pct(request, 50):.1f} ms, p95 {pct(request, 95):.1f} ms")
    print(f"page weight: {raw} bytes, {packed} bytes gzip -9 "
          + ", ".join(f"{p} {r}/{g}" for p, (r, g) in weight.items()))


if __name__ == "__main__":
    main()
