#!/usr/bin/env bash
# Prepare a machine for building and testing kebab. Sourced by demo.sh and
# test.sh; safe to run repeatedly.
#
# Every check asks for a capability the build needs, never for a command's
# name: `protoc` without the well-known `.proto` includes, or a `clang-19`
# without the WASI headers, pass a name check and fail 20 minutes into the
# build. What is missing is installed from Debian's packages.
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
    echo "error: cargo not found" >&2
    echo "  hint: install Rust with rustup (https://rustup.rs), then re-run" >&2
    exit 2
fi

# The plugins compile to wasm32-wasip2: the target's standard library must be
# in the toolchain's sysroot.
if [ ! -d "$(rustc --print sysroot)/lib/rustlib/wasm32-wasip2/lib" ]; then
    echo "setup: installing the wasm32-wasip2 target" >&2
    rustup target add wasm32-wasip2 >&2
fi

setup_probe="$(mktemp -d)"
trap 'rm -rf "$setup_probe"' EXIT

# LanceDB's build scripts compile .proto files that import the well-known
# types (google/protobuf/empty.proto): protoc *and* its include files.
setup_can_protoc() {
    printf 'syntax = "proto3";\nimport "google/protobuf/empty.proto";\nmessage M { google.protobuf.Empty e = 1; }\n' \
        >"$setup_probe/probe.proto"
    protoc --proto_path="$setup_probe" --descriptor_set_out="$setup_probe/probe.pb" \
        "$setup_probe/probe.proto" >/dev/null 2>&1
}

# Tree-sitter grammars inside the code plugin are C compiled for
# wasm32-wasip2 with the compiler and flags of .cargo/config.toml.
setup_can_wasm_cc() {
    printf '#include <stdlib.h>\n#include <string.h>\n#include <stdio.h>\nint f(const char *s) { return (int)strlen(s) + abs(-1); }\n' \
        >"$setup_probe/probe.c"
    clang-19 --target=wasm32-wasip2 -nostdlibinc -isystem /usr/include/wasm32-wasi \
        -c "$setup_probe/probe.c" -o "$setup_probe/probe.o" >/dev/null 2>&1
}

# The code-symbol tests use Universal Ctags (not Exuberant) as an oracle.
setup_has_universal_ctags() {
    ctags --version 2>/dev/null | grep -q 'Universal Ctags'
}

# The example and built-in Python plugins are built with componentize-py,
# model assets come from PyPI wheels: python3 with a working pip.
setup_has_pip() {
    python3 -m pip --version >/dev/null 2>&1
}

# The JavaScript example plugin is built with jco from npm.
setup_has_npm() {
    npm --version >/dev/null 2>&1 && node -e 'process.exit(0)' >/dev/null 2>&1
}

# The code-symbol oracle compares with ctags on real Go and C++ trees:
# Go's standard library sources and GoogleTest's, both Debian packages.
setup_has_go_sources() {
    compgen -G '/usr/share/go-*/src/encoding/json/decode.go' >/dev/null ||
        compgen -G '/usr/lib/go-*/src/encoding/json/decode.go' >/dev/null
}
setup_has_googletest_sources() {
    [ -f /usr/src/googletest/googletest/src/gtest.cc ]
}

setup_missing=()
setup_can_protoc || setup_missing+=(protobuf-compiler libprotobuf-dev)
setup_can_wasm_cc || setup_missing+=(clang-19 wasi-libc)
setup_has_universal_ctags || setup_missing+=(universal-ctags)
setup_has_pip || setup_missing+=(python3-pip)
setup_has_npm || setup_missing+=(nodejs npm)
setup_has_go_sources || setup_missing+=(golang-src)
setup_has_googletest_sources || setup_missing+=(googletest)

if [ ${#setup_missing[@]} -gt 0 ]; then
    echo "setup: installing ${setup_missing[*]} (apt)" >&2
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends \
        "${setup_missing[@]}" >&2
    # Install and re-check: a package that installed but still does not
    # give the capability is a setup error, not a build error 20 min later.
    setup_can_protoc || { echo "error: protoc cannot compile a proto importing google/protobuf/empty.proto" >&2; exit 2; }
    setup_can_wasm_cc || { echo "error: clang-19 cannot compile C for wasm32-wasip2 against /usr/include/wasm32-wasi" >&2; exit 2; }
    setup_has_universal_ctags || { echo "error: Universal Ctags is not on PATH as ctags" >&2; exit 2; }
    setup_has_go_sources || { echo "error: no Go standard library sources under /usr/share/go-*/src" >&2; exit 2; }
    setup_has_googletest_sources || { echo "error: no GoogleTest sources under /usr/src/googletest" >&2; exit 2; }
fi
rm -rf "$setup_probe"
trap - EXIT

# The built-in Org-mode plugin is Python, made into a component by
# componentize-py during `cargo build` (crates/plugin-host/build.rs): that exact release
# must answer on PATH.
setup_has_componentize_py() {
    [ "$(componentize-py --version 2>/dev/null)" = "componentize-py 0.25.1" ]
}
if ! setup_has_componentize_py; then
    echo "setup: installing componentize-py 0.25.1 (PyPI)" >&2
    python3 -m pip install --quiet --disable-pip-version-check componentize-py==0.25.1 >&2
    if ! setup_has_componentize_py; then
        echo "error: componentize-py 0.25.1 is not on PATH after pip install" >&2
        echo "  hint: add pip's script directory (\$(python3 -m site --user-base)/bin) to PATH" >&2
        exit 2
    fi
fi

# OCR: Tesseract's library and language data, checked by their files
# (scripts/setup-ocr.sh says which and why).
source "$(dirname "${BASH_SOURCE[0]}")/setup-ocr.sh"

# Build outside the clone so repeated runs (and CI on the same machine) reuse
# compiled dependencies; an explicit CARGO_TARGET_DIR wins.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/kebab-target}"
mkdir -p "$CARGO_TARGET_DIR"

# Offline model assets (ONNX Runtime, the MiniLM embedding model, the
# compiled Korean dictionary), from PyPI wheels, kept outside the clone.
export KEBAB_ASSETS_DIR="${KEBAB_ASSETS_DIR:-$HOME/.cache/kebab-assets}"
bash "$(dirname "${BASH_SOURCE[0]}")/fetch-assets.sh" "$KEBAB_ASSETS_DIR" >/dev/null
