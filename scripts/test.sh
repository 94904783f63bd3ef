#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# Plugins in Python and JavaScript, built with their own toolchains; the
# end-to-end tests install them.
export KEBAB_EXAMPLE_PLUGINS="$CARGO_TARGET_DIR/example-plugins"
bash scripts/build-example-plugins.sh "$KEBAB_EXAMPLE_PLUGINS"

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
