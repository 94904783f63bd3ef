#!/usr/bin/env bash
# Build the notebook plugin component: `./build.sh [OUT.wasm]` (default ipynb.wasm).
# Installs jco and componentize-js from npm into node_modules on first run.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(realpath -m "${1:-$here/ipynb.wasm}")"
cd "$here"
[ -x node_modules/.bin/jco ] || npm install --no-audit --no-fund --silent
# jco reads files through a sandbox rooted at the working directory: run it
# from the repo root so both the source and wit/ are inside.
cd ../../..
"$here/node_modules/.bin/jco" componentize sdk/examples/ipynb-js/src/app.js \
    --wit wit/v1.1.0 --world-name plugin -o "$out" --disable all
