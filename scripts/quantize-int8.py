#!/usr/bin/env python3
"""Derive MODEL_DIR/model.int8.onnx from MODEL_DIR/model.onnx: the same
transformer with its weight matrix multiplies in 8-bit integers (ONNX
Runtime's dynamic quantisation: weights signed 8-bit per output channel,
activations quantised per call), which `[models.embedding] compute =
"auto"` runs on CPUs with ONNX Runtime's int8 kernels.

usage: quantize-int8.py MODEL_DIR
Needs `onnxruntime` and `onnx` (PyPI). A model whose weights are stored as
int8 and dequantised in the graph (as the bundled MiniLM) is first folded
to plain float weights by ONNX Runtime's basic graph optimisation, so the
quantiser sees ordinary float MatMuls.
"""
import os
import sys
import tempfile

import onnxruntime as ort
from onnxruntime.quantization import QuantType, quantize_dynamic


def main() -> None:
    model_dir = sys.argv[1]
    source = os.path.join(model_dir, "model.onnx")
    target = os.path.join(model_dir, "model.int8.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        folded = os.path.join(tmp, "folded.onnx")
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = folded
        ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])
        partial = os.path.join(tmp, "model.int8.onnx")
        quantize_dynamic(folded, partial, weight_type=QuantType.QInt8, per_channel=True)
        # Whole or not at all: a crash leaves no half-written model.
        with open(partial, "rb") as f, open(target + ".part", "wb") as out:
            out.write(f.read())
        os.replace(target + ".part", target)
    print(target)


if __name__ == "__main__":
    main()
