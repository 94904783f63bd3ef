#!/usr/bin/env python3
"""What keeping a root fresh costs: `kebab watch` on a FILES-file root.

1. Writes FILES markdown notes (in 100 directories) into a git repository,
   ingests them (timed), and starts `kebab --json watch` on the root.
2. Idle: samples the watcher's CPU time and RSS over IDLE seconds, and
   counts its inotify watches (/proc/PID/fdinfo).
3. Edit-to-searchable: EDITS times, one note gets a new unique word; the
   latency is from the write to the `watch_event.v1` "applied" line of the
   batch holding it (the batch is committed, chunks and vectors included,
   when that line is printed); then `kebab search` confirms the word is
   found. p50/p95 over the edits.
4. Branch switch: a branch that rewrites SWITCH notes is checked out; time
   until the index holds the new text everywhere, and the watcher's peak
   RSS (VmHWM) over the whole run.

Prints one JSON object. With --model, the bundled embedding model is
configured (vectors are embedded as part of each batch), else lexical
only.

usage: bench_watch.py KEBAB ASSETS WORK_DIR [--files 10000] [--edits 30]
           [--switch 5000] [--idle 60] [--model]
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import threading
import time
from pathlib import Path

from bench_config import model_config


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def status(pid: int, key: str) -> int:
    """A kB field of /proc/PID/status (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def cpu_secs(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def inotify_watches(pid: int) -> int:
    n = 0
    for fd in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            n += sum(1 for l in fd.read_text().splitlines() if l.startswith("inotify wd:"))
        except OSError:
            pass
    return n


def note(i: int, word: str) -> str:
    return (f"# Note {i}\n\nThis note talks about topic {i % 97} and {word}.\n\n"
            f"## Details\n\nSome more text for note {i}: lorem ipsum {i * 7}.\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("kebab")
    ap.add_argument("assets")
    ap.add_argument("work")
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--edits", type=int, default=30)
    ap.add_argument("--switch", type=int, default=5_000)
    ap.add_argument("--idle", type=int, default=60)
    ap.add_argument("--model", action="store_true")
    args = ap.parse_args()

    work = Path(args.work)
    root = work / "root"
    root.mkdir(parents=True)
    config = work / "config.toml"
    config.write_text((model_config(args.assets) if args.model else '[models.embedding]\nmodel = ""\n'))
    env = dict(os.environ, KEBAB_CONFIG=str(config), KEBAB_DATA_DIR=str(work / "data"),
               KEBAB_CACHE_DIR=str(work / "cache"))
    git = lambda *a: subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@b", "-C",
                                     str(root), *a], check=True, capture_output=True)
    git("init", "-q", "-b", "main")
    for i in range(args.files):
        p = root / f"d{i % 100}" / f"n{i}.md"
        p.parent.mkdir(exist_ok=True)
        p.write_text(note(i, "mainword"))
    git("add", "-A")
    git("commit", "-q", "-m", "main")
    git("checkout", "-q", "-b", "other")
    for i in range(args.switch):
        (root / f"d{i % 100}" / f"n{i}.md").write_text(note(i, "otherword"))
    git("commit", "-q", "-am", "other")
    git("checkout", "-q", "main")

    out = {"files": args.files, "model": args.model}
    started = time.perf_counter()
    subprocess.run([args.kebab, "--json", "ingest", str(root)], env=env, check=True,
                   capture_output=True)
    out["ingest_s"] = round(time.perf_counter() - started, 1)

    watcher = subprocess.Popen([args.kebab, "--json", "watch", str(root)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    events: list[tuple[float, dict]] = []
    lock = threading.Condition()

    def read() -> None:
        for line in watcher.stdout:
            try:
                v = json.loads(line)
            except ValueError:
                continue
            with lock:
                events.append((time.perf_counter(), v))
                lock.notify_all()

    threading.Thread(target=read, daemon=True).start()

    def wait_applied(after: float, timeout: float = 600) -> float:
        """The time of the first `applied` event after `after`."""
        deadline = time.time() + timeout
        with lock:
            while True:
                for t, v in events:
                    if t >= after and v.get("event") == "applied":
                        return t
                if time.time() > deadline:
                    raise SystemExit("no applied event")
                lock.wait(1)

    wait_applied(0)  # the first sync
    pid = watcher.pid

    # Idle.
    cpu0, t0 = cpu_secs(pid), time.perf_counter()
    time.sleep(args.idle)
    out["idle"] = {
        "cpu_percent": round(100 * (cpu_secs(pid) - cpu0) / (time.perf_counter() - t0), 2),
        "rss_mb": round(status(pid, "VmRSS") / 1024, 1),
        "inotify_watches": inotify_watches(pid),
    }

    # Edit to searchable.
    latencies = []
    rng = random.Random(7)
    for e in range(args.edits):
        i = rng.randrange(args.files)
        word = f"editword{e}x{i}"
        t = time.perf_counter()
        (root / f"d{i % 100}" / f"n{i}.md").write_text(note(i, word))
        applied = wait_applied(t)
        latencies.append(applied - t)
        found = subprocess.run([args.kebab, "--json", "search", word, "--mode", "lexical"],
                               env=env, capture_output=True, text=True)
        if word not in found.stdout and f"n{i}.md" not in found.stdout:
            raise SystemExit(f"{word} not found after its batch")
        time.sleep(0.5)
    out["edit_to_searchable_ms"] = {
        "p50": round(1000 * statistics.median(latencies)),
        "p95": round(1000 * pct(latencies, 95)),
        "max": round(1000 * max(latencies)),
    }

    # Branch switch: done once the watcher has applied a batch since, then
    # queued nothing and applied nothing for 5 s; then the index must hold
    # the new text.
    def queued() -> int:
        r = subprocess.run([args.kebab, "--json", "schema"], env=env, capture_output=True,
                           text=True)
        return sum(rt["queued"] for rt in json.loads(r.stdout).get("roots", []))

    git("commit", "-q", "-am", "edits")  # the edits, so the switch finds a clean tree
    time.sleep(2)
    t = time.perf_counter()
    git("checkout", "-q", "other")
    wait_applied(t)
    deadline = time.time() + 3600
    while True:
        time.sleep(1)
        with lock:
            last = events[-1][0] if events else 0
        if time.perf_counter() - last > 5 and queued() == 0:
            break
        if time.time() > deadline:
            raise SystemExit("the switch never finished")
    switched = time.perf_counter() - t - 5
    r = subprocess.run([args.kebab, "--json", "search", "otherword", "--mode", "lexical",
                        "--k", "1000"], env=env, capture_output=True, text=True)
    hits = json.loads(r.stdout.strip().splitlines()[-1])["hits"]
    if len({h["doc_path"] for h in hits}) != min(args.switch, 1000):
        raise SystemExit(f"after the switch {len(hits)} notes hold the new text: {out}")
    out["branch_switch"] = {
        "files": args.switch,
        "seconds": round(switched, 1),
        "watcher_peak_rss_mb": round(status(pid, "VmHWM") / 1024, 1),
    }
    watcher.terminate()
    watcher.wait(timeout=120)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
