#!/usr/bin/env python3
"""Build the tiny cross-encoder graph kebab's reranker tests run.

Not a trained model: a real ONNX graph with a cross-encoder's interface
(inputs `input_ids`, `attention_mask`, `token_type_ids` of a tokenised
(query, passage) pair; output `logits` [batch, 1]) whose score is an
interaction of the two segments: the share of the passage's word pieces
that also occur in the query, times ten. Special and unused pieces (ids
below 1000 in BERT vocabularies) are not counted.

Usage: make-test-reranker.py OUT.onnx   (needs the `onnx` package)
The output is committed as tests/fixtures/reranker/model.onnx; re-run this
only to change the graph.
"""
import sys

import onnx
from onnx import TensorProto, helper


def main(out):
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [
        helper.make_tensor_value_info(name, i64, ["batch", "seq"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", f, ["batch", 1])
    const = lambda name, value, dtype=f: helper.make_node(  # noqa: E731
        "Constant", [], [name], value=helper.make_tensor(name, dtype, [len(value)] if isinstance(value, list) else [], value if isinstance(value, list) else [value])
    )
    nodes = [
        const("one", 1.0),
        const("ten", 10.0),
        const("min_id", 999, i64),
        const("axis1", [1], i64),
        const("axis2", [2], i64),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=f),
        helper.make_node("Cast", ["token_type_ids"], ["second"], to=f),
        helper.make_node("Sub", ["one", "second"], ["first"]),
        # query pieces: first segment, real tokens; passage pieces: second.
        helper.make_node("Mul", ["first", "mask"], ["query"]),
        helper.make_node("Greater", ["input_ids", "min_id"], ["content_b"]),
        helper.make_node("Cast", ["content_b"], ["content"], to=f),
        helper.make_node("Mul", ["second", "mask"], ["passage_all"]),
        helper.make_node("Mul", ["passage_all", "content"], ["passage"]),
        # same[b, i, j] = input_ids[b, i] == input_ids[b, j]
        helper.make_node("Unsqueeze", ["input_ids", "axis2"], ["ids_col"]),
        helper.make_node("Unsqueeze", ["input_ids", "axis1"], ["ids_row"]),
        helper.make_node("Equal", ["ids_col", "ids_row"], ["same_b"]),
        helper.make_node("Cast", ["same_b"], ["same"], to=f),
        helper.make_node("Unsqueeze", ["query", "axis1"], ["query_row"]),
        helper.make_node("Mul", ["same", "query_row"], ["in_query_all"]),
        # in_query[b, i]: passage piece i occurs among the query's pieces.
        helper.make_node("ReduceMax", ["in_query_all", "axis2"], ["in_query"], keepdims=0),
        helper.make_node("Mul", ["in_query", "passage"], ["overlap_each"]),
        helper.make_node("ReduceSum", ["overlap_each", "axis1"], ["overlap"], keepdims=1),
        helper.make_node("ReduceSum", ["passage", "axis1"], ["length"], keepdims=1),
        helper.make_node("Add", ["length", "one"], ["length1"]),
        helper.make_node("Div", ["overlap", "length1"], ["share"]),
        helper.make_node("Mul", ["share", "ten"], ["logits"]),
    ]
    graph = helper.make_graph(nodes, "kebab-test-reranker", inputs, [output])
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18)],
        producer_name="kebab scripts/make-test-reranker.py",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1])
