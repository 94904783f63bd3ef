#!/usr/bin/env python3
"""Build the tiny cross-encoder graphs kebab's reranker and verification
tests run.

Not trained models: real ONNX graphs with a cross-encoder's interface
(inputs `input_ids`, `attention_mask`, `token_type_ids` of a tokenised
pair) whose score is an interaction of the two segments: the share of the
second segment's word pieces that also occur in the first, times ten.
Special and unused pieces (ids below 1000 in BERT vocabularies) are not
counted.

- reranker (query, passage): output `logits` [batch, 1], the score.
- `--nli` (premise, hypothesis): output `logits` [batch, 3] over
  (entailment, neutral, contradiction) = (score, 5, 0): a hypothesis whose
  pieces all occur in the premise is entailed with p ~ 0.99, one sharing
  half of them with p ~ 0.5, one sharing none with p ~ 0.01.

Usage: make-test-cross-encoder.py [--nli] OUT.onnx   (needs `onnx`)
The outputs are committed as tests/fixtures/reranker/model.onnx and
tests/fixtures/nli/model.onnx; re-run this only to change a graph.
"""
import sys

import onnx
from onnx import TensorProto, helper


def main(out, nli):
    f, i64 = TensorProto.FLOAT, TensorProto.INT64
    inputs = [
        helper.make_tensor_value_info(name, i64, ["batch", "seq"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", f, ["batch", 3 if nli else 1])
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
        helper.make_node("Mul", ["share", "ten"], ["score"]),
    ]
    if nli:
        nodes += [
            const("zero", 0.0),
            const("five", 5.0),
            helper.make_node("Mul", ["score", "zero"], ["zeros"]),
            helper.make_node("Add", ["zeros", "five"], ["fives"]),
            helper.make_node("Concat", ["score", "fives", "zeros"], ["logits"], axis=1),
        ]
    else:
        nodes.append(helper.make_node("Identity", ["score"], ["logits"]))
    name = "kebab-test-nli" if nli else "kebab-test-reranker"
    graph = helper.make_graph(nodes, name, inputs, [output])
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 18)],
        producer_name="kebab scripts/make-test-cross-encoder.py",
    )
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(args[-1], "--nli" in args)
