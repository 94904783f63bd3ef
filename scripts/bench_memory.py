#!/usr/bin/env python3
"""Memory of `kebab ingest` and of `kebab watch` with the bundled model.

1. `kebab ingest CORPUS` into a fresh index, with the bundled embedding
   model and without one: the process's peak RSS (wait4's ru_maxrss) and
   wall time.
2. `kebab --json watch CORPUS` on that index: RSS once the first sync is
   done; then EDITS files of the corpus get a new paragraph each (one
   batch, embedded), and the watcher's peak RSS (VmHWM) is read once the
   batch is applied, and its RSS again after SETTLE seconds of idling with
   the model loaded.

Prints one JSON object. CORPUS is copied, never written.

usage: bench_memory.py KEBAB ASSETS CORPUS WORK_DIR [--edits 40] [--settle 10]
"""

import argparse
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from bench_config import model_config
from bench_watch import status


def run_peak(cmd: list[str], env: dict) -> tuple[float, float]:
    """Run `cmd`; its wall seconds and peak RSS in MB."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, code, usage = os.wait4(p.pid, 0)
    if code != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr.read().decode()[-2000:]}")
    return round(time.perf_counter() - t, 1), round(usage.ru_maxrss / 1024, 1)


def rss(pid: int) -> dict:
    """RSS in MB, and how much of it is anonymous memory (the heap, ONNX
    Runtime's arena, the model) and file pages (the binary's code, mapped
    libraries and compiled plugins: shared, and dropped first under
    memory pressure)."""
    mb = lambda key: round(status(pid, key) / 1024, 1)
    return {"rss_mb": mb("VmRSS"), "anon_mb": mb("RssAnon"), "file_mb": mb("RssFile")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("assets")
    ap.add_argument("corpus")
    ap.add_argument("work")
    ap.add_argument("--edits", type=int, default=40)
    ap.add_argument("--settle", type=int, default=10)
    args = ap.parse_args()

    work = Path(args.work)
    root = work / "root"
    shutil.copytree(args.corpus, root)
    files = sorted(p for p in root.rglob("*.md"))
    out = {"files": len(files)}

    def env_for(name: str, model: bool) -> dict:
        config = work / f"{name}.toml"
        config.write_text(model_config(args.assets) if model else '[models.embedding]\nmodel = ""\n')
        return dict(os.environ, KEBAB_CONFIG=str(config), KEBAB_DATA_DIR=str(work / name),
                    KEBAB_CACHE_DIR=str(work / f"{name}-cache"))

    lexical = env_for("lexical", False)
    secs, peak = run_peak([args.kebab, "ingest", str(root)], lexical)
    out["ingest_without_model"] = {"seconds": secs, "peak_rss_mb": peak}
    env = env_for("model", True)
    secs, peak = run_peak([args.kebab, "ingest", str(root)], env)
    count = subprocess.run([args.kebab, "--json", "schema"], env=env, capture_output=True,
                           text=True, check=True)
    out["ingest_with_model"] = {"seconds": secs, "peak_rss_mb": peak,
                                "chunks": json.loads(count.stdout)["stats"]["chunks"]}

    watcher = subprocess.Popen([args.kebab, "--json", "watch", str(root)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    applied = threading.Semaphore(0)

    def read() -> None:
        for line in watcher.stdout:
            try:
                if json.loads(line).get("event") == "applied":
                    applied.release()
            except ValueError:
                pass

    threading.Thread(target=read, daemon=True).start()
    if not applied.acquire(timeout=600):
        raise SystemExit("the watcher's first sync never ended")
    time.sleep(args.settle)
    pid = watcher.pid
    out["watch_after_first_sync"] = rss(pid)

    extra = "\n\n## Added while watched\n\n" + " ".join(
        f"paragraph word{i} about memory, arenas and batches." for i in range(60)) + "\n"
    for p in files[: args.edits]:
        with open(p, "a") as f:
            f.write(extra)
    if not applied.acquire(timeout=600):
        raise SystemExit("the edits were never applied")
    time.sleep(args.settle)
    out["watch_embedding"] = {
        "edited_files": min(args.edits, len(files)),
        "peak_rss_mb": round(status(pid, "VmHWM") / 1024, 1),
        "idle_after": rss(pid),
    }
    watcher.terminate()
    watcher.wait(timeout=120)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
