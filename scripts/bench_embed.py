#!/usr/bin/env python3
"""Raw ONNX Runtime embedding throughput on the chunk texts of a kebab
index: the ceiling kebab's own embedding is compared with (BENCHMARKS.md
"Embedding throughput").

Usage: bench_embed.py INDEX.sqlite MODEL_DIR [--file model.onnx] [--batch 32] [--threads 2]
                      [--max-length 256]
Needs `onnxruntime` and `tokenizers` (PyPI). Prints chunks/s for the
texts in stored order and sorted by length (as kebab batches them).
"""
import argparse
import sqlite3
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def run(session, tokenizer, texts, batch):
    started = time.perf_counter()
    for i in range(0, len(texts), batch):
        enc = tokenizer.encode_batch(texts[i : i + batch])
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        types = np.array([e.type_ids for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if any(i.name == "token_type_ids" for i in session.get_inputs()):
            feed["token_type_ids"] = types
        hidden = session.run(None, feed)[0]
        pooled = (hidden * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1)
        pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    return len(texts) / (time.perf_counter() - started)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("index")
    p.add_argument("model_dir")
    p.add_argument("--file", default="model.onnx", help="model.int8.onnx for compute = int8")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-length", type=int, default=256)
    a = p.parse_args()
    texts = [r[0] for r in sqlite3.connect(a.index).execute("SELECT text FROM chunks ORDER BY rowid")]
    tokenizer = Tokenizer.from_file(f"{a.model_dir}/tokenizer.json")
    tokenizer.enable_truncation(a.max_length)
    tokenizer.enable_padding()
    options = ort.SessionOptions()
    options.intra_op_num_threads = a.threads
    session = ort.InferenceSession(f"{a.model_dir}/{a.file}", options)
    print(f"{len(texts)} chunks, {a.file}, batch {a.batch}, {a.threads} threads, "
          f"max length {a.max_length}")
    print(f"raw ORT, stored order:    {run(session, tokenizer, texts, a.batch):.1f} chunks/s")
    print(f"raw ORT, sorted by length: {run(session, tokenizer, sorted(texts, key=len), a.batch):.1f} chunks/s")


if __name__ == "__main__":
    main()
