#!/usr/bin/env bash
# Build the CSV plugin component: `./build.sh [OUT.wasm]` (default csv.wasm).
# Needs componentize-py from PyPI (`pip install componentize-py==0.25.1`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/csv.wasm}")"
cd "$here"
componentize-py --wit-path ../../../wit --world plugin componentize app -o "$out"
