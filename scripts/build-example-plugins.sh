#!/usr/bin/env bash
# Build the example plugins written in other languages with their real
# toolchains from the package registries:
#   sdk/examples/csv-python  → csv.wasm   (componentize-py, PyPI)
#   sdk/examples/ipynb-js    → ipynb.wasm (jco + componentize-js, npm)
# Usage: scripts/build-example-plugins.sh OUT_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(realpath -m "${1:?usage: build-example-plugins.sh OUT_DIR}")"
mkdir -p "$out"

if ! command -v componentize-py >/dev/null 2>&1 || [ "$(componentize-py --version 2>/dev/null)" != "componentize-py 0.25.1" ]; then
    echo "examples: installing componentize-py from PyPI" >&2
    pip install --quiet --disable-pip-version-check componentize-py==0.25.1 >&2
fi
sdk/examples/csv-python/build.sh "$out/csv.wasm" >&2
sdk/examples/ipynb-js/build.sh "$out/ipynb.wasm" >&2
ls -l "$out"/*.wasm >&2
