#!/usr/bin/env bash
# Build the CSV plugin component: `./build.sh [OUT.wasm]` (default csv.wasm).
# Needs componentize-py from PyPI (`pip install componentize-py==0.25.1`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/csv.wasm}")"
cd "$here"
# Built against the frozen 1.0.0 contract on purpose: the test suite loads
# it as a real component from an older minor version of the plugin API.
componentize-py --wit-path ../../../wit/v1.0.0 --world plugin componentize app -o "$out"
